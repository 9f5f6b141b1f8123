#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian's mpi4py under the interposer: the same digests per rank as without
# it, and collie ran the script's collectives (its finalize report says so).
#   test_mpi4py.sh LIBCOLLIE_MPI
lib=$1
here=$(dirname "$0")
. "$here/../lib.sh"
/usr/bin/python3 -c "import mpi4py, numpy" 2>/dev/null ||
    { echo "skipped: no mpi4py (apt-get install python3-mpi4py)"; exit 77; }
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
for n in 2 3; do
    expect_status 0 "$here/run.sh" none $n /usr/bin/python3 "$here/mpi4py_job.py"
    plain=$(printf '%s\n' "$out" | grep digest | sort)
    COLLIE_DEBUG=INFO expect_status 0 "$here/run.sh" "$lib" $n /usr/bin/python3 "$here/mpi4py_job.py"
    ours=$(printf '%s\n' "$out" | grep digest | sort)
    [ "$(printf '%s\n' "$plain" | wc -l)" = $n ] || fail "$n ranks printed: $plain"
    [ "$plain" = "$ours" ] || fail "$n ranks: results differ with the interposer:
$plain
---
$ours"
    expect_output "MPI_Allreduce +on collie [1-9][0-9]* "
    expect_output "MPI_Alltoall +on collie [1-9]"
    expect_output "MPI_Allgather +on collie [1-9]"
    expect_output "MPI_Bcast +on collie [1-9]"
    echo "mpi4py, $n ranks: equal digests; $(printf '%s\n' "$out" | grep -m1 'MPI_Allreduce ')"
done
