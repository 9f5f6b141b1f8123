#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The peer MPIs `collie bench` measures beside collie (--baseline impi, mpich, ompi5),
# as the package index installs them, each in its own virtual environment under
# ~/.cache/collie/peers (COLLIE_BENCH_PEERS names another folder), outside the clone,
# made once and reused; CMake then builds collie-bench-NAME with each one's mpicc.
#   peers_env.sh [NAME...]     default: impi mpich ompi5 (about 20 s and 450 MB in all)
set -euo pipefail
dir=${COLLIE_BENCH_PEERS:-${XDG_CACHE_HOME:-$HOME/.cache}/collie/peers}
declare -A wants=([impi]="impi-rt impi-devel" [mpich]="mpich" [ompi5]="openmpi")
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(impi mpich ompi5)
for name in "${names[@]}"; do
    [ -n "${wants[$name]:-}" ] || { echo "peers_env: no peer named $name (impi, mpich, ompi5)" >&2; exit 2; }
    env=$dir/$name
    if [ -x "$env/bin/mpiexec" ] && [ "$(cat "$env/.collie-wants" 2>/dev/null)" = "${wants[$name]}" ]; then
        continue
    fi
    echo "collie: installing ${wants[$name]} into $env (once)" >&2
    rm -rf "$env"
    mkdir -p "$dir"
    /usr/bin/python3 -m venv "$env" >&2
    # shellcheck disable=SC2086  # one word per package
    "$env/bin/pip" install -q --disable-pip-version-check ${wants[$name]} >&2
    [ -x "$env/bin/mpicc" ] && [ -x "$env/bin/mpiexec" ] ||
        { echo "peers_env: $name installed no mpicc and mpiexec in $env/bin" >&2; exit 1; }
    echo "${wants[$name]}" > "$env/.collie-wants"
done
