#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The peers `collie bench` measures beside collie (--baseline impi, mpich, ompi5, oneccl),
# as the package index installs them, each in its own virtual environment under
# ~/.cache/collie/peers (COLLIE_BENCH_PEERS names another folder), outside the clone,
# made once and reused; CMake then builds collie-bench-NAME against each one.
#   peers_env.sh [NAME...]     default: impi mpich ompi5 oneccl (about 45 s and 2.4 GB in all)
set -euo pipefail
. "$(dirname "$0")/venv.sh"
dir=${COLLIE_BENCH_PEERS:-${XDG_CACHE_HOME:-$HOME/.cache}/collie/peers}
declare -A wants=([impi]="impi-rt impi-devel" [mpich]="mpich" [ompi5]="openmpi"
    [oneccl]="oneccl oneccl-devel intel-cmplr-lib-rt impi-devel") # oneCCL boots through Intel MPI
has_mpi() { # has_mpi NAME: its mpicc and mpiexec are there
    [ -x "$dir/$1/bin/mpicc" ] && [ -x "$dir/$1/bin/mpiexec" ] ||
        { echo "peers_env: $1 installed no mpicc and mpiexec in $dir/$1/bin" >&2; return 1; }
}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(impi mpich ompi5 oneccl)
for name in "${names[@]}"; do
    [ -n "${wants[$name]:-}" ] || { echo "peers_env: no peer named $name (impi, mpich, ompi5, oneccl)" >&2; exit 2; }
    venv_current "$dir/$name" "${wants[$name]}" || venv_make "$dir/$name" "${wants[$name]}" has_mpi "$name"
done
