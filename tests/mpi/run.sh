#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs an MPI program under Open MPI's mpirun, with libcollie-mpi.so preloaded
# or not; exits 77 (skipped) without mpirun.
#   run.sh LIBCOLLIE_MPI|none N PROGRAM ARGS...
lib=$1 n=$2
shift 2
command -v mpirun >/dev/null || { echo "skipped: no mpirun (apt-get install openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
preload=()
[ "$lib" = none ] || preload=(-x "LD_PRELOAD=$lib")
for v in COLLIE_TIMEOUT COLLIE_DEBUG COLLIE_MPI COLLIE_SOCKET_IFNAME COLLIE_TEST_MPI_NOT_STARTED; do [ -n "${!v+x}" ] && preload+=(-x "$v"); done
# Ranks may outnumber cores: Open MPI must yield while it waits, as collie does.
exec mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -n "$n" "${preload[@]}" "$@"
