#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The MPI interposer's figures: collie-bench-mpi (an ordinary MPI program) on Open MPI
# alone and with libcollie-mpi.so preloaded, each beside collie bench's own figures,
# R rounds alternating (A B A B ...), at each rank count; then the medians over all
# rounds per size: collie's own, Open MPI's, the preloaded program's, and their ratios.
#   bash scripts/bench_mpi_preload.sh [RANKS...]       (default: 2 4 8)
# Environment: ROUNDS (6), SIZES ("-b 4 -e 64M -f 4"), COLLIE (build/collie).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
collie=${COLLIE:-$root/build/collie}
lib=$(dirname "$collie")/libcollie-mpi.so
[ -f "$lib" ] || { echo "bench_mpi_preload: no $lib (build with an MPI installed)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(2 4 8)
for n in "${ranks[@]}"; do
    for mode in plain preload; do
        extra=()
        [ $mode = preload ] && extra=(--mpi-preload "$lib")
        # shellcheck disable=SC2086
        "$collie" bench allreduce -n "$n" ${SIZES:--b 4 -e 64M -f 4} --iters 20 --warmup 2 \
            --rounds "${ROUNDS:-6}" --baseline mpi "${extra[@]}" --csv "$dir/$mode.$n.csv" >/dev/null
    done
done
python3 - "$dir" "${ranks[@]}" <<'PY'
import csv, statistics as st, sys
d = sys.argv[1]
for n in sys.argv[2:]:
    own, plain, pre = {}, {}, {}
    for mode in ("plain", "preload"):
        for row in csv.DictReader(open("%s/%s.%s.csv" % (d, mode, n))):
            b, t = int(row["bytes"]), float(row["median_us"])
            (own if row["backend"] == "collie" else plain if mode == "plain" else pre) \
                .setdefault(b, []).append(t)
    print("# %s ranks: median us over rounds [min-max]; preloaded/own ~ 1: the interposer costs "
          "nothing; MPI/preloaded: what preloading buys" % n)
    print("%10s %26s %12s %26s %13s %12s" % ("bytes", "collie bench (own)", "Open MPI",
                                             "Open MPI + libcollie-mpi", "preloaded/own",
                                             "MPI/preloaded"))
    for b in sorted(own):
        o, p, q = st.median(own[b]), st.median(plain[b]), st.median(pre[b])
        print("%10d %9.2f [%6.2f-%8.2f] %12.2f %9.2f [%6.2f-%8.2f] %13.2f %12.2f" % (
            b, o, min(own[b]), max(own[b]), p, q, min(pre[b]), max(pre[b]), q / o, p / q))
PY
