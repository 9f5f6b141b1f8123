#!/bin/bash
# Runs one `collie bench` command N times in a row, as a new user would, and
# says per size how far the runs agree: the slowest run's mean time over the
# fastest's.  The measurement issue's test of a trustworthy benchmark.
#   repeat_bench.sh N OUT_DIR COLLIE BENCH_ARGS...
set -euo pipefail
n=$1 out=$2 collie=$3
shift 3
mkdir -p "$out"
for i in $(seq 1 "$n"); do
    "$collie" bench "$@" --csv "$out/run.$i.csv" >"$out/run.$i.txt" 2>&1 ||
        { echo "repeat_bench: run $i failed (see $out/run.$i.txt)" >&2; exit 1; }
done
awk -F, '
    FNR == 1 { next }
    $1 == "collie" {
        k = $6; t = $11 + 0
        if (!(k in lo) || t < lo[k]) lo[k] = t
        if (!(k in hi) || t > hi[k]) hi[k] = t
        s[k] = s[k] " " t
    }
    END { for (k in lo) printf "%12s %10.3f %10.3f %7.2f %s\n", k, lo[k], hi[k], hi[k] / lo[k], (hi[k] / lo[k] > 1.5 ? "  > 1.5x" : "") }
' "$out"/run.*.csv | sort -n >"$out/rows.txt"
{
    printf "%12s %10s %10s %7s\n" bytes "min us" "max us" max/min
    cat "$out/rows.txt"
} | tee "$out/summary.txt"
