#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs one `collie bench` command N times in a row, as a new user would, and
# says per size how far the runs agree: the slowest run's mean time over the
# fastest's.  The measurement issue's test of a trustworthy benchmark.
#
# Every row also carries the machine's CPU-to-CPU handoff, probed around that
# size (the cpu2cpu column); the summary (repeat_summary.sh) gives the spread
# over all runs, and over the rows measured in each state of the machine.
#   repeat_bench.sh N OUT_DIR COLLIE BENCH_ARGS...
set -euo pipefail
n=$1 out=$2 collie=$3
shift 3
mkdir -p "$out"
for i in $(seq 1 "$n"); do
    "$collie" bench "$@" --csv "$out/run.$i.csv" >"$out/run.$i.txt" 2>&1 ||
        { echo "repeat_bench: run $i failed (see $out/run.$i.txt)" >&2; exit 1; }
done
exec bash "$(dirname "$0")/repeat_summary.sh" "$out"
