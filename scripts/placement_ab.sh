#!/bin/bash
# twoshot, direct and adaptive forced, then Open MPI, round after round, and
# the rows split by the machine's state: the CPU-to-CPU handoff each row
# carries (collie bench's cpu2cpu), near under 80 ns, far over 120.  On a
# virtual machine whose host moves the vCPUs (docs/PERFORMANCE.md) the same
# command meets both states; a round whose rows were taken in between counts
# in neither.
#   placement_ab.sh ROUNDS OUT_DIR [COLLIE] [BENCH_ARGS...]
# BENCH_ARGS default: allreduce -n 2 -b 1M -e 64M -f 2 --iters 10.
# Prints per size and state: each side's median time in us (and how many
# rounds), and MPI's time over each collie side's.
set -euo pipefail
rounds=$1 out=$2 collie=${3:-build/collie}
shift $(($# < 3 ? $# : 3))
[ $# -gt 0 ] || set -- allreduce -n 2 -b 1M -e 64M -f 2 --iters 10
coll=$1
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
    for algo in twoshot direct adaptive mpi; do
        if [ $algo = mpi ]; then
            # collie's side of this job is not kept: direct's above is the same run.
            env COLLIE_ALGO="$coll:direct" "$collie" bench "$@" --baseline mpi \
                --csv "$out/both.$r.csv" >"$out/$algo.$r.txt" 2>&1
            grep -v '^collie,' "$out/both.$r.csv" >"$out/$algo.$r.csv"
            rm "$out/both.$r.csv"
        else
            env COLLIE_ALGO="$coll:$algo" "$collie" bench "$@" --csv "$out/$algo.$r.csv" \
                >"$out/$algo.$r.txt" 2>&1
        fi || { echo "placement_ab: $algo round $r failed (see $out/$algo.$r.txt)" >&2; exit 1; }
    done
done
# CSV: backend 1, bytes 6, time_us 11, algo 16, handoff_ns 20.
awk -F, '
    FNR == 1 { next }
    {
        state = $20 < 80 ? "near" : $20 > 120 ? "far" : ""
        if (state == "") next
        side = $1 == "mpi" ? "mpi" : $16
        t[$6, state, side] = t[$6, state, side] " " $11
        sizes[$6] = 1
    }
    function med(s,   n, v, i, j, x) {
        n = split(s, v, " ")
        if (!n) return 0
        for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
        count = n
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    END {
        printf "%10s %5s %16s %16s %16s %16s %7s %7s %7s\n", "bytes", "state", "twoshot us (n)",
               "direct us (n)", "adaptive us (n)", "mpi us (n)", "mpi/2s", "mpi/dir", "mpi/ad"
        for (s in sizes) for (k = 0; k < 2; k++) {
            st = k ? "far" : "near"
            line = sprintf("%10d %5s", s, st)
            split("twoshot direct adaptive mpi", sides, " ")
            for (i = 1; i <= 4; i++) {
                count = 0; m[i] = med(t[s, st, sides[i]])
                line = line sprintf(" %11.1f (%2d)", m[i], count)
            }
            for (i = 1; i <= 3; i++) line = line sprintf(" %7.2f", m[i] && m[4] ? m[4] / m[i] : 0)
            print line
        }
    }' "$out"/*.csv | sort -k1,1n -k2,2r | tee "$out/summary.txt"
