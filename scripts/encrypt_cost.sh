#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The cost of encrypted links (COLLIE_ENCRYPT=1) across two emulated hosts
# (tests/netns.sh), one rank each: `collie bench` pingpong and allreduce at
# 1 KiB, 1 MiB and 64 MiB, plain and encrypted alternately (A B A B), ROUNDS
# times; prints every time and, per size, the medians, their ratio and the
# spread of the per-round ratios.  Needs root and a build (build/collie).
#   bash scripts/encrypt_cost.sh [ROUNDS] [RATE]     e.g. 5, or 5 1gbit
# COLLS and SIZES (space-separated) narrow the sweep, e.g. COLLS=allreduce SIZES=1K.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5} rate=${2:-} colls=${COLLS:-pingpong allreduce} sizes=${SIZES:-1K 1M 64M}
collie=${COLLIE:-$root/build/collie}
[ -x "$collie" ] || { echo "encrypt_cost: build collie first (bash scripts/demo.sh)" >&2; exit 1; }
. "$root/tests/netns.sh"
netns_up 2 "$rate"
dir=$(mktemp -d)
trap 'netns_down; rm -rf "$dir"' EXIT
netns_rsh "$dir/rsh"
list="$(netns_addr 0):1,$(netns_addr 1):1"
echo "# 2 emulated hosts x 1 rank, link ${rate:-unshaped}, $rounds rounds; time(us) per operation"
echo "# coll size encrypt round time_us"
for round in $(seq "$rounds"); do
    for coll in $colls; do
        for size in $sizes; do
            case $size in 1K) iters=500 ;; 1M) iters=50 ;; *) iters=5 ;; esac
            for encrypt in 0 1; do
                t=$(netns_exec 0 env COLLIE_ENCRYPT=$encrypt "$collie" bench $coll -H "$list" \
                    --rsh "$dir/rsh" -b $size -e $size --iters $iters --min-time 0 2>&1 |
                    awk '$1 ~ /^[0-9]+$/ && NF >= 6 { print $5; exit }')
                echo "$coll $size $encrypt $round ${t:-FAILED}"
            done
        done
    done
done | tee "$dir/times"
python3 - "$dir/times" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
t = {}
for coll, size, enc, rnd, us in rows:
    t.setdefault((coll, size), {}).setdefault(rnd, {})[enc] = float(us)
print("# coll      size   plain_us  sealed_us  ratio  (per-round ratios: min-max)")
for (coll, size), by_round in t.items():
    plain = [r["0"] for r in by_round.values()]
    sealed = [r["1"] for r in by_round.values()]
    ratios = [r["1"] / r["0"] for r in by_round.values()]
    print("%-9s %5s %10.1f %10.1f %6.2f  (%.2f-%.2f)" % (coll, size, statistics.median(plain),
          statistics.median(sealed), statistics.median(sealed) / statistics.median(plain),
          min(ratios), max(ratios)))
EOF
