#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# When collie cannot start (here: rank 0 is told to listen on an interface
# that does not exist), the program runs on MPI alone, every check passes,
# and one line says why.
#   test_not_started.sh LIBCOLLIE_MPI TEST_MPI_INTERPOSE
lib=$1 prog=$2
here=$(dirname "$0")
. "$here/../lib.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
COLLIE_SOCKET_IFNAME=collie-no-such-if COLLIE_TEST_MPI_NOT_STARTED=1 \
    expect_status 0 "$here/run.sh" "$lib" 3 "$prog"
expect_output "preloaded"
n=$(printf '%s\n' "$out" | grep -c "collie-mpi: collie could not start")
[ "$n" = 1 ] || fail "the job should say once that collie could not start, said it $n times:
$out"
expect_output "collie could not start \(rank 0: .*collie-no-such-if.*\); the program runs on MPI alone"
echo "not started: $(printf '%s\n' "$out" | grep 'collie could not start')"
