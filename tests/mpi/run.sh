#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs an MPI program under an MPI's own launcher, with libcollie-mpi.so preloaded
# or not: Debian's Open MPI (mpirun), or with --mpi PREFIX the MPI installed there
# (scripts/peers_env.sh: MPICH's and Intel MPI's Hydra mpiexec, Open MPI 5's);
# exits 77 (skipped) without that launcher.
#   run.sh [--mpi PREFIX] LIBCOLLIE_MPI|none N PROGRAM ARGS...
prefix=
if [ "$1" = --mpi ]; then
    prefix=$2
    shift 2
fi
lib=$1 n=$2
shift 2
launcher=mpirun
[ -z "$prefix" ] || launcher=$prefix/bin/mpiexec
command -v "$launcher" >/dev/null ||
    { echo "skipped: no $launcher (apt-get install openmpi-bin; scripts/peers_env.sh)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
passed=(COLLIE_TIMEOUT COLLIE_DEBUG COLLIE_MPI COLLIE_SOCKET_IFNAME COLLIE_TEST_MPI_NOT_STARTED)
if [ -n "$prefix" ] && ! "$launcher" --version 2>&1 | grep -q "Open MPI"; then
    # Hydra passes the whole environment on; LD_PRELOAD by -genv reaches the ranks alone.
    args=()
    [ "$lib" = none ] || args=(-genv LD_PRELOAD "$lib")
    exec "$launcher" -n "$n" "${args[@]}" "$@"
fi
args=()
[ "$lib" = none ] || args=(-x "LD_PRELOAD=$lib")
for v in "${passed[@]}"; do [ -n "${!v+x}" ] && args+=(-x "$v"); done
# Ranks may outnumber cores: Open MPI must yield while it waits, as collie does.
exec "$launcher" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -n "$n" "${args[@]}" "$@"
