#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The summary of scripts/repeat_bench.sh, from the runs' CSVs in OUT_DIR:
# per size, the spread of collie's mean time (slowest run over fastest) over
# all runs, and over the rows of each state of the machine, told by the
# CPU-to-CPU probe around each size (the cpu2cpu column, CSV handoff_ns):
#   best: within 1.25x of the best probe of all rows (this host: ~35 ns, the
#         two vCPUs on cores that share a cache)
#   mid:  within 2x (~45-50 ns here)
#   slow: beyond (~160-190 ns here: cores that share no cache)
#   repeat_summary.sh OUT_DIR      (writes OUT_DIR/summary.txt and prints it)
set -euo pipefail
out=$1
csvs=$(ls "$out"/run.*.csv)
best=$(awk -F, 'FNR > 1 && $1 == "collie" && $20 > 0 { print $20 }' $csvs | sort -g | head -1)
awk -F, -v best="${best:-0}" '
    FNR == 1 { runs++; next }
    $1 == "collie" {
        k = $6; t = $11 + 0; h = $20 + 0
        keep(k, t, "all")
        if (h > 0) { s = h <= 1.25 * best ? "best" : h <= 2 * best ? "mid" : "slow"; keep(k, t, s); rows[s]++ }
    }
    function keep(k, t, s,    key) {
        key = k SUBSEP s
        if (!(key in lo) || t < lo[key]) lo[key] = t
        if (!(key in hi) || t > hi[key]) hi[key] = t
        n[key]++
        sizes[k] = 1
    }
    function cell(k, s,    key) {
        key = k SUBSEP s
        if (!(key in lo)) return sprintf("%31s", "-")
        return sprintf("%3d %9.3f %9.3f %6.2f%s", n[key], lo[key], hi[key], hi[key] / lo[key], hi[key] / lo[key] > 1.5 ? "*" : " ")
    }
    END {
        printf "# %d runs; rows by the probe around them (best %.0f ns): best (<= 1.25x) %d, mid (<= 2x) %d, slow %d; * : max/min over 1.5\n", runs, best, rows["best"], rows["mid"], rows["slow"]
        printf "%10s %31s %31s %31s %31s\n", "bytes", "all: runs min max max/min", "best: rows min max max/min", "mid: rows min max max/min", "slow: rows min max max/min"
        for (k in sizes) printf "%10d %s %s %s %s\n", k, cell(k, "all"), cell(k, "best"), cell(k, "mid"), cell(k, "slow") | "sort -n"
    }
' $csvs >"$out/summary.txt"
cat "$out/summary.txt"
