#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Intel's MPI Benchmarks (IMB-MPI1, as the package index installs it with Intel MPI) on an
# MPI alone and with the interposer built against that MPI preloaded, rounds alternated
# (A B A B ...): the median over rounds of IMB's t_avg per size, its spread, and the ratio.
# IMB is built against MPICH's ABI, so it runs on Intel MPI and on MPICH 5 alike.
#   bash scripts/bench_imb_preload.sh [impi|mpich ...]     (default: impi mpich)
# Environment: RANKS (2), ROUNDS (3), IMB_ARGS ("Allreduce -msglog 10:24"), COLLIE (build/collie).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(dirname "${COLLIE:-$root/build/collie}")
peers=${COLLIE_BENCH_PEERS:-${XDG_CACHE_HOME:-$HOME/.cache}/collie/peers}
imb=$peers/impi/bin/IMB-MPI1
[ -x "$imb" ] || { echo "bench_imb_preload: no $imb (bash scripts/peers_env.sh impi)" >&2; exit 1; }
mpis=("$@")
[ ${#mpis[@]} -gt 0 ] || mpis=(impi mpich)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for mpi in "${mpis[@]}"; do
    lib=$build/libcollie-mpi-$mpi.so
    [ -f "$lib" ] || { echo "bench_imb_preload: no $lib (rebuild with $mpi installed)" >&2; exit 1; }
    for round in $(seq "${ROUNDS:-3}"); do
        for mode in plain preload; do
            args=()
            [ $mode = preload ] && args=(-genv LD_PRELOAD "$lib")
            # shellcheck disable=SC2086
            LD_LIBRARY_PATH=$peers/$mpi/lib I_MPI_ROOT=$peers/$mpi timeout 600 \
                "$peers/$mpi/bin/mpiexec" -n "${RANKS:-2}" "${args[@]}" "$imb" \
                ${IMB_ARGS:-Allreduce -msglog 10:24} -npmin "${RANKS:-2}" \
                >"$out/$mpi.$mode.$round" 2>&1 ||
                { echo "bench_imb_preload: $mpi $mode failed:" >&2; cat "$out/$mpi.$mode.$round" >&2; exit 1; }
        done
    done
done
python3 - "$out" "${mpis[@]}" <<'PY'
import glob, re, statistics as st, sys
out, mpis = sys.argv[1], sys.argv[2:]
names = {"impi": "Intel MPI", "mpich": "MPICH 5"}
for mpi in mpis:
    t = {"plain": {}, "preload": {}}
    for mode in t:
        for f in sorted(glob.glob(f"{out}/{mpi}.{mode}.*")):
            for line in open(f):
                m = re.match(r"\s+(\d+)\s+\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s*$", line)
                if m and int(m.group(1)) > 0:
                    t[mode].setdefault(int(m.group(1)), []).append(float(m.group(2)))
    def cell(v):
        return "%10.2f [%.2f-%.2f]" % (st.median(v), min(v), max(v))
    # Spread, slowest round over fastest: whether runs in a row agree, beside MPI's own.
    print("# IMB-MPI1, t_avg (us), median [min-max] over %d rounds: %s alone and with "
          "libcollie-mpi-%s.so; spread: slowest round / fastest" %
          (len(t["plain"][min(t["plain"])]), names.get(mpi, mpi), mpi))
    print("%10s %28s %28s %8s %8s %8s" % ("bytes", names.get(mpi, mpi), "+ libcollie-mpi", "x",
                                          "spread", "spread+"))
    for b in sorted(t["plain"]):
        p, q = t["plain"][b], t["preload"].get(b)
        if q:
            print("%10d %28s %28s %8.2f %8.2f %8.2f" % (b, cell(p), cell(q), st.median(p) / st.median(q),
                                                     max(p) / min(p), max(q) / min(q)))
PY
