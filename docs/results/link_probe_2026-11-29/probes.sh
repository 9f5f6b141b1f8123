#!/bin/bash
# probes.sh COLLIE [ROUNDS]: the links' probe ROUNDS times (default 100) between two
# emulated hosts, every rank stopped 5 ms (and pkill's time) in each 65 as
# tests/test_link_probe.sh does, each size's timed transfers printed (COLLIE_DEBUG=TRACE);
# "BAD" marks a rate outside the test's 0.100-0.135 GB/s.  Needs root.
#   RATE=100mbit (default 1gbit; empty: unshaped)  BURST=512kb (tbf's bucket, default 256kb)
#   NOSTOP=1 (no stops).  "Busy" runs had `yes > /dev/null` running beside them.
collie=$1; rounds=${2:-100}
here=$(dirname "$0")/../../../tests
fail() { echo "FAIL: $*"; }
. "$here/netns.sh"
. "$here/hosts_job.sh"
netns_burst=${BURST:-256kb} netns_up 2 ${RATE-1gbit}
stopped="^$collie info\\$"
stopper() {
    while kill -0 $$ 2>/dev/null; do
        pkill -STOP -f "$stopped"; sleep 0.005; pkill -CONT -f "$stopped"; sleep 0.06
    done
}
[ -n "$NOSTOP" ] || { stopper & stopper_pid=$!; }
for round in $(seq 1 $rounds); do
    job_out=$(mktemp)
    COLLIE_DEBUG=TRACE hosts_job 1,1 "$collie" info >/dev/null 2>&1
    gbs=$(sed -nE 's/.*INFO  links: measured .* ([0-9.]+) GB\/s$/\1/p' "$job_out")
    ok=$(awk -v g="$gbs" 'BEGIN { print (g >= 0.100 && g <= 0.135) ? "ok" : "BAD" }')
    echo "== $round $ok $(grep 'INFO  links' "$job_out" | sed 's/.*measured//')"
    grep 'TRACE links' "$job_out" | sed 's/.*links: /   /'
    rm -f "$job_out"
done
[ -n "$NOSTOP" ] || { kill $stopper_pid; wait $stopper_pid 2>/dev/null; pkill -CONT -f "$stopped"; }
netns_down
