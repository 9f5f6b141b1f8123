#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The decentralized-averaging figure (docs/NOTES.md): per-step time of
# collie's best allreduce, neighbor_allreduce over static exponential-2 and
# over the one-peer exponential schedule, and hierarchical neighbour
# averaging (one-peer exponential over the hosts), for one model of SIZE
# bytes, on K emulated hosts (scripts/bench_hosts.sh) with L ranks each,
# links shaped to RATE.  Every configuration runs ROUNDS times in turn (A B
# A B); prints one line per measurement: hosts ranks/host operation us.
#   bash scripts/bench_neighbor.sh [--size 80M] [--rate 1gbit] [--rounds 2] [--hosts "2 4 8"] [--per-host "1 2"]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=80M rate=1gbit rounds=2 hosts_list="2 4 8" per_host="1 2"
while [ $# -gt 0 ]; do
    case $1 in
    --size) size=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --hosts) hosts_list=$2; shift 2 ;;
    --per-host) per_host=$2; shift 2 ;;
    *) echo "bench_neighbor: unknown argument $1" >&2; exit 2 ;;
    esac
done
common=(-b "$size" -e "$size" --iters 3 --warmup 1 --min-time 0)
# one job: its rows as "hosts ranks_per_host operation time_us"
measure() {
    local k=$1 l=$2 topo=$3
    shift 3
    bash "$root/scripts/bench_hosts.sh" --hosts "$k" --ranks-per-host "$l" --rate "$rate" \
        "$@" "${common[@]}" --topology "$topo" 2>&1 | awk -v k="$k" -v l="$l" -v topo="$topo" '
        /^# collie bench / { op = $4; sub(":", "", op) }
        /^ +[0-9]+ +[0-9]+ / { name = op; if (op ~ /neighbor/) name = op "(" topo ")"
                               printf "%d %d %s %.0f\n", k, l, name, $5 }
        /failed|FAIL/ { print "# " $0 > "/dev/stderr" }'
}
echo "# hosts ranks/host operation time_us (link $rate, $size per rank, $rounds rounds)"
for round in $(seq 1 "$rounds"); do
    for k in $hosts_list; do
        for l in $per_host; do
            measure "$k" "$l" onepeer-exp2 allreduce neighbor_allreduce hierarchical_neighbor_allreduce
            measure "$k" "$l" exp2 neighbor_allreduce
        done
    done
done
