#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie-bench-mpi, an MPI program collie did not adapt, with libcollie-mpi.so
# preloaded: every collective and dtype it measures checks clean, in and out
# of place, at 2 and 3 ranks (collie bench --mpi-preload).  With PEER (impi,
# mpich, ompi5): collie-bench-PEER, built by that MPI, with the interposer
# built against it.
#   test_bench_preload.sh COLLIE LIBCOLLIE_MPI [PEER]
collie=$1 lib=$2 peer=${3:-mpi}
. "$(dirname "$0")/../lib.sh"
[ -x "$(dirname "$collie")/collie-bench-$peer" ] || { echo "skipped: no collie-bench-$peer"; exit 77; }
if [ "$peer" = mpi ]; then
    command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
    expect_status 2 "$collie" bench -n 2 --mpi-preload "$lib"
    expect_output "needs --baseline mpi"
    preload=$lib
else
    expect_status 2 "$collie" bench -n 2 --baseline mpi --mpi-preload "$peer=$lib"
    expect_output "--mpi-preload '$peer=$lib': each item is NAME=LIB, NAME one of the run's MPI"
    preload=$peer=$lib
fi
for n in 2 3; do
    for dtype in float32 int64 int8; do
        for place in "" --inplace; do
            expect_status 0 "$collie" bench all -n $n -b 24 -e 96K -f 8 --iters 2 --warmup 1 \
                --dtype $dtype $place --baseline "$peer" --mpi-preload "$preload"
            wrong=$(printf '%s\n' "$out" | grep -E '^ +[0-9]+ ' | grep -vcE ' 0/0  [a-z_]+( |$)')
            [ "$wrong" = 0 ] || fail "$n ranks $dtype $place: wrong results:
$out"
        done
    done
done
echo "collie-bench-$peer preloaded: every collective clean at 2 and 3 ranks"
