#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Measures collie across emulated hosts on this machine: K network namespaces
# on a bridge (tests/netns.sh), optionally shaped with tc tbf; the link rate
# between two of them with iperf3 (1 and 4 streams, one way and both ways);
# then `collie bench` with the given arguments across the hosts, run from host
# 0 (the MPI baseline, --baseline mpi, gets the same hosts).  Needs root.
#   bash scripts/bench_hosts.sh [--hosts K] [--ranks-per-host L] [--rate RATE] [--no-iperf] [BENCH ARGS...]
#   e.g. bash scripts/bench_hosts.sh --hosts 2 --ranks-per-host 2 --rate 1gbit allreduce --baseline mpi
# With --run, what follows is a program that `collie run` starts across the hosts instead:
#   bash scripts/bench_hosts.sh --rate 1gbit --run build/collie-train mlp --preset a6000-head
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
hosts=2 rph=1 rate= iperf=1
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --ranks-per-host) rph=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --no-iperf) iperf=0; shift ;; # A/B runs: the link was measured once already
    *) break ;;
    esac
done
collie=${COLLIE:-$root/build/collie}
[ -x "$collie" ] || { echo "bench_hosts: build collie first (bash scripts/demo.sh)" >&2; exit 1; }
fail() { echo "bench_hosts: $*" >&2; exit 1; }
. "$root/tests/netns.sh"
netns_up "$hosts" "$rate"
dir=$(mktemp -d)
trap 'netns_down; rm -rf "$dir"' EXIT
netns_rsh "$dir/rsh"
list=$(netns_hostlist "$hosts" "$rph")
echo "# $hosts emulated hosts x $rph rank(s), link ${rate:-unshaped}: $list"
if [ $iperf = 0 ]; then
    :
elif command -v iperf3 >/dev/null; then
    for mode in "" --bidir; do
        for p in 1 4; do
            netns_exec 1 iperf3 -s -D -1 >/dev/null 2>&1
            sleep 0.5
            netns_exec 0 iperf3 -c "$(netns_addr 1)" $mode -P $p -t 3 -J 2>/dev/null | python3 -c "
import json, sys
e = json.load(sys.stdin)['end']
back = e.get('sum_received_bidir_reverse')
print('# link (iperf3, %d stream(s)%s): %.3f GB/s%s' % ($p, ', both ways' if back else '',
      e['sum_received']['bits_per_second'] / 8e9,
      ' + %.3f GB/s back' % (back['bits_per_second'] / 8e9) if back else ''))"
        done
    done
else
    echo "# (install iperf3 to measure the link: apt-get install iperf3)"
fi
if [ "${1:-}" = --run ]; then
    shift
    netns_exec 0 "$collie" run -H "$list" --rsh "$dir/rsh" "$@"
    exit
fi
netns_exec 0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "$collie" bench -H "$list" --rsh "$dir/rsh" "$@"
