#!/bin/bash
# Runs one `collie bench` command N times in a row, as a new user would, and
# says per size how far the runs agree: the slowest run's mean time over the
# fastest's.  The measurement issue's test of a trustworthy benchmark.
#
# Every row also carries the machine's CPU-to-CPU handoff, probed around that
# size (the cpu2cpu column).  A row whose probe is within 1.5x of the best of
# all rows was measured in the machine's fast state; the others while the
# host had moved its vCPUs apart (or a probe found a CPU busy).  The summary
# gives the spread over all runs, and over the rows of each state.
#   repeat_bench.sh N OUT_DIR COLLIE BENCH_ARGS...
set -euo pipefail
n=$1 out=$2 collie=$3
shift 3
mkdir -p "$out"
for i in $(seq 1 "$n"); do
    "$collie" bench "$@" --csv "$out/run.$i.csv" >"$out/run.$i.txt" 2>&1 ||
        { echo "repeat_bench: run $i failed (see $out/run.$i.txt)" >&2; exit 1; }
done
csvs=$(for i in $(seq 1 "$n"); do echo "$out/run.$i.csv"; done)
best=$(awk -F, 'FNR > 1 && $1 == "collie" && $20 > 0 { print $20 }' $csvs | sort -g | head -1)
awk -F, -v best="${best:-0}" '
    FNR == 1 { next }
    $1 == "collie" {
        k = $6; t = $11 + 0; h = $20 + 0
        keep(k, t, "all")
        if (h > 0) { s = h > 1.5 * best ? "slow" : "fast"; keep(k, t, s); rows[s]++ }
    }
    function keep(k, t, s,    key) {
        key = k SUBSEP s
        if (!(key in lo) || t < lo[key]) lo[key] = t
        if (!(key in hi) || t > hi[key]) hi[key] = t
        sizes[k] = 1
    }
    function cell(k, s,    key) {
        key = k SUBSEP s
        if (!(key in lo)) return sprintf("%27s", "-")
        return sprintf("%9.3f %9.3f %6.2f%s", lo[key], hi[key], hi[key] / lo[key], hi[key] / lo[key] > 1.5 ? "*" : " ")
    }
    END {
        printf "# rows in the machine'"'"'s fast state (CPU-to-CPU handoff within 1.5x of the best, %.0f ns): %d; slow: %d; * : max/min over 1.5\n", best, rows["fast"], rows["slow"]
        printf "%12s %27s %27s %27s\n", "bytes", "all runs: min max max/min", "fast state: min max ratio", "slow state: min max ratio"
        for (k in sizes) printf "%12d %s %s %s\n", k, cell(k, "all"), cell(k, "fast"), cell(k, "slow") | "sort -n"
    }
' $csvs >"$out/summary.txt"
cat "$out/summary.txt"
