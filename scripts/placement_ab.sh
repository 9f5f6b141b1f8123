#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Algorithms forced (SIDES, default twoshot direct adaptive; `model`: the
# library's own choice), then Open MPI,
# round after round, and
# the rows split by the machine's state: the CPU-to-CPU handoff each row
# carries (collie bench's cpu2cpu), near under 80 ns, far over 120.  On a
# virtual machine whose host moves the vCPUs (docs/NOTES.md) the same
# command meets both states; a round whose rows were taken in between counts
# in neither.
#   placement_ab.sh ROUNDS OUT_DIR [COLLIE] [BENCH_ARGS...]
# BENCH_ARGS default: allreduce -n 2 -b 1M -e 64M -f 2 --iters 10.
# Prints per size and state: each side's median time in us (and how many
# rounds), and MPI's time over each collie side's.  E.g. SIDES="staged
# direct" placement_ab.sh 30 OUT build/collie allgather -n 2 -b 64K -e 64M -f 4.
set -euo pipefail
rounds=$1 out=$2 collie=${3:-build/collie}
shift $(($# < 3 ? $# : 3))
[ $# -gt 0 ] || set -- allreduce -n 2 -b 1M -e 64M -f 2 --iters 10
coll=$1 sides=${SIDES:-twoshot direct adaptive}
first=${sides%% *}
mkdir -p "$out"
# A side's COLLIE_ALGO: `model` forces nothing (the library's own choice).
forced() { [ "$1" = model ] || echo "$coll:$1"; }
for r in $(seq 1 "$rounds"); do
    for algo in $sides mpi; do
        if [ $algo = mpi ]; then
            # collie's side of this job is not kept: the first side's above is the same run.
            env COLLIE_ALGO="$(forced $first)" "$collie" bench "$@" --baseline mpi \
                --csv "$out/both.$r.csv" >"$out/$algo.$r.txt" 2>&1
            grep -v '^collie,' "$out/both.$r.csv" >"$out/$algo.$r.csv"
            rm "$out/both.$r.csv"
        else
            env COLLIE_ALGO="$(forced $algo)" "$collie" bench "$@" --csv "$out/$algo.$r.csv" \
                >"$out/$algo.$r.txt" 2>&1
        fi || { echo "placement_ab: $algo round $r failed (see $out/$algo.$r.txt)" >&2; exit 1; }
    done
done
# CSV: backend 1, bytes 6, time_us 11, handoff_ns 20; the side is the file's name.
awk -F, -v sides="$sides" '
    FNR == 1 { next }
    {
        state = $20 < 80 ? "near" : $20 > 120 ? "far" : ""
        if (state == "") next
        n = split(FILENAME, path, "/")
        side = $1 == "mpi" ? "mpi" : substr(path[n], 1, index(path[n], ".") - 1)
        t[$6, state, side] = t[$6, state, side] " " $11
        sizes[$6] = 1
    }
    function med(s,   n, v, i, j, x) {
        n = split(s, v, " ")
        count = n
        if (!n) return 0
        for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    END {
        k = split(sides " mpi", name, " ")
        head = sprintf("%10s %5s", "bytes", "state")
        for (i = 1; i <= k; i++) head = head sprintf(" %16s", name[i] " us (n)")
        for (i = 1; i < k; i++) head = head sprintf(" %9s", "mpi/" substr(name[i], 1, 5))
        print head
        for (s in sizes) for (f = 0; f < 2; f++) {
            st = f ? "far" : "near"
            line = sprintf("%10d %5s", s, st)
            for (i = 1; i <= k; i++) {
                m[i] = med(t[s, st, name[i]])
                line = line sprintf(" %11.1f (%2d)", m[i], count)
            }
            for (i = 1; i < k; i++) line = line sprintf(" %9.2f", m[i] && m[k] ? m[k] / m[i] : 0)
            print line
        }
    }' "$out"/*.csv | sort -k1,1n -k2,2r | tee "$out/summary.txt"
