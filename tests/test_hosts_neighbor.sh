#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Neighbour averaging and windows across emulated hosts (netns.sh), uneven
# hosts too: every scenario given of test_neighbor or test_window, each rank
# checking its result exactly, over TCP between hosts and shared memory within.
#   test_hosts_neighbor.sh TEST_PROGRAM SCENARIO...
prog=$1
shift
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/netns.sh"
. "$here/hosts_job.sh"
netns_up 4
export COLLIE_TIMEOUT=60
job_out=
# The sanitizer builds take the uneven placements alone (see test_hosts.sh).
placements="1,1 2,1 1,2,3 2,2,2,2 3,1,1,2"
[ -n "${COLLIE_TEST_SANITIZED:-}" ] && placements="2,1 1,2,3 3,1,1,2"
for scenario in "$@"; do
    for placement in $placements; do
        n=$(( $(tr , + <<< "$placement") ))
        what="$scenario on hosts $placement"
        hosts_job "$placement" "$prog" "$scenario" || fail "$what: $(cat "$job_out")"
        ok=$(grep -c "^$scenario: ok on rank" "$job_out")
        [ "$ok" = "$n" ] || fail "$what: $ok of $n ranks ok: $(cat "$job_out")"
        echo "$what: $n ranks ok"
        rm -f "$job_out"
        job_out=
    done
done
