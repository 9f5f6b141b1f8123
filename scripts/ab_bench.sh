#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A/B: two builds of collie measured side by side, alternating A B A B, so that
# the machine's swings (docs/NOTES.md) fall on both alike.
#   ab_bench.sh ROUNDS OUT_DIR COLLIE_A COLLIE_B -- BENCH_ARGS...
# Runs `COLLIE_X bench BENCH_ARGS --csv OUT_DIR/X.ROUND.csv` ROUNDS times each,
# then prints per collective and size: A's and B's median of the per-round mean times
# (min-max beside them) and B/A.  ROUNDS 0: only the summary of OUT_DIR's runs.
set -euo pipefail
rounds=$1 out=$2 a=$3 b=$4
shift 4
[ "${1:-}" = -- ] && shift
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
    for side in A B; do
        bin=$a
        [ $side = B ] && bin=$b
        "$bin" bench "$@" --csv "$out/$side.$r.csv" >"$out/$side.$r.txt" 2>&1 ||
            { echo "ab_bench: $side round $r failed (see $out/$side.$r.txt)" >&2; exit 1; }
    done
done
# bytes -> list of time_us per side; report medians.
awk -F, '
    FNR == 1 { split(FILENAME, p, "/"); side = substr(p[length(p)], 1, 1); next }
    $1 == "collie" { key = $2 " " $6; t[side, key] = t[side, key] " " $11; keys[key] = 1 }
    function med(s,   n, v, i, j, x) {
        n = split(s, v, " ")
        for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
        lo = v[1]; hi = v[n]
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    END {
        for (k in keys) {
            ma = med(t["A", k]); la = lo; ha = hi
            mb = med(t["B", k]); lb = lo; hb = hi
            split(k, f, " ")
            printf "%-15s %12s %12.3f %9.3f-%-9.3f %12.3f %9.3f-%-9.3f %7.2f\n", f[1], f[2], ma, la, ha, mb, lb, hb, mb / ma
        }
    }' "$out"/A.*.csv "$out"/B.*.csv | sort -k1,1 -k2,2n >"$out/rows.txt"
{
    printf "%-15s %12s %12s %19s %12s %19s %7s\n" collective bytes "A median us" "A min-max" "B median us" "B min-max" "B/A"
    cat "$out/rows.txt"
} | tee "$out/summary.txt"
