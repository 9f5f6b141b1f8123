#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Re-measures the one-host tables of docs/PERFORMANCE.md with their own
# commands, beside Open MPI in the same runs, and keeps every output:
#   remeasure.sh OUT_DIR [COLLIE]          (COLLIE: default build/collie)
# OUT_DIR gets allreduce_f32_n{2,4,8}, all_f32_n4, allreduce_dtypes,
# mlbench_n2 (.txt and .csv) and repeat20_n{2,4,8}/ (scripts/repeat_bench.sh).
# About 15 minutes on 2 cores; run it on an otherwise idle machine.
set -euo pipefail
out=$1 collie=${2:-build/collie}
here=$(dirname "$0")
mkdir -p "$out"
bench() { # NAME ARGS...: one table, its text and CSV
    local name=$1
    shift
    echo "== $name: collie bench $*" >&2
    "$collie" bench "$@" --csv "$out/$name.csv" >"$out/$name.txt" 2>&1 ||
        { echo "remeasure: $name failed (see $out/$name.txt)" >&2; exit 1; }
}
bench allreduce_f32_n2 -n 2 -b 4 -e 256M -f 4 --iters 20 --baseline mpi --rounds 3 --stream
bench allreduce_f32_n4 -n 4 -b 4 -e 64M -f 4 --iters 20 --baseline mpi --rounds 3 --stream
bench allreduce_f32_n8 -n 8 -b 4 -e 64M -f 4 --iters 20 --baseline mpi --rounds 3 --stream
bench all_f32_n4 all -n 4 -b 64 -e 16M -f 16 --iters 20 --baseline mpi --rounds 3
# float16 and bfloat16 against float32: ns per element at the largest sizes, three times interleaved
: >"$out/allreduce_dtypes.txt"
for round in 1 2 3; do
    for t in float32 float16 bfloat16; do
        for n in 2 8; do
            bench "dtype_${t}_n${n}_$round" -n $n -b 4M -e 256M -f 8 --iters 10 --dtype $t
            awk -F, -v n=$n -v t=$t -v r=$round 'NR > 1 {
                    printf "%s%s", (p++ ? "" : "round " r " n=" n " " t ":"), sprintf("  %d elems %.3f ns/elem", $7, $11 * 1000 / $7)
                } END { print "" }' "$out/dtype_${t}_n${n}_$round.csv" >>"$out/allreduce_dtypes.txt"
        done
    done
done
bench mlbench_n2 --sizes mlbench -n 2 --baseline mpi
for n in 2 4 8; do
    echo "== repeat20_n$n" >&2
    bash "$here/repeat_bench.sh" 20 "$out/repeat20_n$n" "$collie" allreduce -n $n -b 8 -e 1M >/dev/null
done
echo "remeasure: done; outputs in $out" >&2
