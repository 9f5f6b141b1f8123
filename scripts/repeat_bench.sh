#!/bin/bash
# Runs one `collie bench` command N times in a row, as a new user would, and
# says per size how far the runs agree: the slowest run's mean time over the
# fastest's.  The measurement issue's test of a trustworthy benchmark.
#
# Each run also carries the machine's CPU-to-CPU handoff, probed between its
# sizes (the cpu2cpu column).  A run whose median probe is within 1.5x of the
# best run's ran in the machine's fast state; the others ran while the host
# had moved its vCPUs apart.  The summary gives the spread over all runs and
# over the runs of each state.
#   repeat_bench.sh N OUT_DIR COLLIE BENCH_ARGS...
set -euo pipefail
n=$1 out=$2 collie=$3
shift 3
mkdir -p "$out"
for i in $(seq 1 "$n"); do
    "$collie" bench "$@" --csv "$out/run.$i.csv" >"$out/run.$i.txt" 2>&1 ||
        { echo "repeat_bench: run $i failed (see $out/run.$i.txt)" >&2; exit 1; }
done
# One line per run: its number and the median of its probes (0: none probed).
for i in $(seq 1 "$n"); do
    printf '%d %s\n' "$i" "$(awk -F, 'FNR > 1 && $1 == "collie" && $20 > 0 { print $20 }' \
        "$out/run.$i.csv" | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }')"
done >"$out/handoff.txt"
awk -F, '
    FNR == NR { split($0, f, " "); h[f[1]] = f[2] + 0; if (f[2] > 0 && (best == 0 || f[2] < best)) best = f[2]; next }
    FNR == 1 { run++; state = (best > 0 && h[run] > 1.5 * best) ? "slow" : "fast"; count[state]++; next }
    $1 == "collie" {
        k = $6; t = $11 + 0
        keep(k, t, "all"); keep(k, t, state)
    }
    function keep(k, t, s,    key) {
        key = k SUBSEP s
        if (!(key in lo) || t < lo[key]) lo[key] = t
        if (!(key in hi) || t > hi[key]) hi[key] = t
        sizes[k] = 1
    }
    function cell(k, s,    key) {
        key = k SUBSEP s
        if (!(key in lo)) return sprintf("%28s", "-")
        return sprintf("%9.3f %9.3f %6.2f%s", lo[key], hi[key], hi[key] / lo[key], hi[key] / lo[key] > 1.5 ? "*" : " ")
    }
    END {
        printf "# %d runs: %d in the machine'"'"'s fast state (median CPU-to-CPU handoff within 1.5x of the best run'"'"'s, %.0f ns), %d slow; * : over 1.5x\n", run, count["fast"], best, count["slow"]
        printf "%12s %28s %28s %28s\n", "", "all runs: min max max/min", "fast state: min max ratio", "slow state: min max ratio"
        for (k in sizes) printf "%12d %s %s %s\n", k, cell(k, "all"), cell(k, "fast"), cell(k, "slow") | "sort -n"
    }
' "$out/handoff.txt" $(for i in $(seq 1 "$n"); do echo "$out/run.$i.csv"; done) >"$out/summary.txt"
cat "$out/summary.txt"
