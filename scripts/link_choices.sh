#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Does the cost model choose right across hosts with no setting?  On H
# emulated hosts of L ranks (tests/netns.sh; needs root), links unshaped or
# shaped with tc tbf, `collie bench allreduce` runs each algorithm forced,
# then the library's own choice with the links measured at init (the
# default), then its choice on the built-in rates (COLLIE_NET_PROBE=0),
# ROUNDS times in turn; per size it prints the fastest forced algorithm and
# how far each choice's time is from it (median of the rounds).
#   bash scripts/link_choices.sh OUT_DIR ROUNDS H L [RATE]...   e.g. OUT 2 2 2 "" 1gbit
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
collie=${COLLIE:-$root/build/collie}
out=$1 rounds=$2 hosts=$3 per=$4
shift 4
mkdir -p "$out"
algos=(ring rd rabenseifner hierarchical)
for rate in "$@"; do
    label=hosts${hosts}x$per${rate:+_$rate}
    dir=$out/$label
    mkdir -p "$dir"
    (
        . "$root/tests/netns.sh"
        netns_up "$hosts" "$rate"
        trap netns_down EXIT
        netns_rsh "$dir/rsh"
        list=$(netns_hostlist "$hosts" "$per")
        run() { netns_exec 0 "$@"; }
        run env COLLIE_DEBUG=INFO "$collie" run -H "$list" --rsh "$dir/rsh" "$collie" info \
            >"$dir/info.txt" 2>&1 || exit 1
        grep -E "INFO  links|^  links|^  allreduce " "$dir/info.txt"
        bench=(bench allreduce -H "$list" --rsh "$dir/rsh" -b 4 -e 64M -f 16 --iters 5 --warmup 1 --min-time 0)
        for r in $(seq 1 "$rounds"); do
            for a in "${algos[@]}"; do
                run "$collie" "${bench[@]}" --algo "allreduce:$a" --csv "$dir/$a.$r.csv" >"$dir/$a.$r.txt" || exit 1
            done
            run "$collie" "${bench[@]}" --csv "$dir/measured.$r.csv" >"$dir/measured.$r.txt" || exit 1
            run env COLLIE_NET_PROBE=0 "$collie" "${bench[@]}" --csv "$dir/defaults.$r.csv" \
                >"$dir/defaults.$r.txt" || exit 1
        done
    ) || exit 1
    /usr/bin/python3 - "$dir" "$label" "${algos[@]}" <<'PY' | tee "$out/$label.txt"
import csv, glob, statistics, sys
d, label, algos = sys.argv[1], sys.argv[2], sys.argv[3:]
def rows(name):  # bytes -> (median us over rounds, algorithm)
    t, algo = {}, {}
    for f in glob.glob(f"{d}/{name}.*.csv"):
        for r in csv.DictReader(open(f)):
            if r["backend"] == "collie":
                t.setdefault(int(r["bytes"]), []).append(float(r["time_us"]))
                algo[int(r["bytes"])] = r["algo"]
    return {b: (statistics.median(v), algo[b]) for b, v in t.items()}
forced = {a: rows(a) for a in algos}
measured, defaults = rows("measured"), rows("defaults")
print(f"# {label}: allreduce, median us of the rounds; choice (us, time / fastest's)")
print(f"{'bytes':>10} {'fastest':>22} {'measured links':>30} {'built-in rates':>30}")
right = {"m": 0, "d": 0}
for b in sorted(measured):
    best = min(algos, key=lambda a: forced[a][b][0])
    tb = forced[best][b][0]
    cells = []
    for key, res in (("m", measured), ("d", defaults)):
        t, a = res[b]
        ft = forced[a][b][0] if a in forced else t
        ok = a == best or ft <= 1.10 * tb  # a tie within 10% is no wrong choice
        right[key] += ok
        cells.append(f"{a} {t:.1f} ({t / tb:.2f}){'' if ok else ' *'}")
    print(f"{b:>10} {best + ' ' + format(tb, '.1f'):>22} {cells[0]:>30} {cells[1]:>30}")
n = len(measured)
print(f"# right (the fastest, or its forced time within 10% of it): measured links {right['m']}/{n}, built-in rates {right['d']}/{n}")
PY
done
