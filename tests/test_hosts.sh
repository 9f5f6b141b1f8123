#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Collectives across emulated hosts (network namespaces on a bridge): every
# collective, every dtype and op (SUM and AVG at 1M elements), in and out of
# place, checked element by element, over several placements of ranks on 2-4
# hosts with 1-3 ranks each.
#   test_hosts.sh TEST_COLL RATE COLL[:ALGO]...
# RATE: "" (unshaped) or a tc rate such as 1gbit; ALGO: forced by COLLIE_ALGO.
prog=$1 rate=$2
shift 2
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/netns.sh"
. "$here/hosts_job.sh"
netns_up 4 "$rate"
export COLLIE_TIMEOUT=60
job_out=
# shaped links are slow: smaller cases there
export COLLIE_TEST_MAX_COUNT=${COLLIE_TEST_MAX_COUNT:-$([ -n "$rate" ] && echo 70000 || echo 1048576)}
# The sanitizer builds look for memory and thread errors, which the placements that mix
# shared memory and TCP find: they leave out two ranks on two hosts, and ThreadSanitizer,
# whose races are between one process's threads, the 8 ranks too (collie_ranks()).
placements="1,1 2,1 1,2,3 2,2,2,2"
case ${COLLIE_TEST_SANITIZED:-} in
address) placements="2,1 1,2,3 2,2,2,2" ;;
thread) placements="2,1 1,2,3" ;;
esac
for item in "$@"; do
    coll=${item%%:*} algo=
    [ "$coll" != "$item" ] && algo=$item
    for placement in $placements; do
        what="$item on hosts $placement (link ${rate:-unshaped})"
        COLLIE_ALGO=$algo hosts_job "$placement" "$prog" "$coll" || fail "$what: $(cat "$job_out")"
        grep -Eq "^$coll on [0-9]+ ranks: [0-9]+ cases, 0 failures" "$job_out" ||
            fail "$what: no result: $(cat "$job_out")"
        echo "$what: $(grep -E "^$coll on" "$job_out")"
        rm -f "$job_out"
        job_out=
    done
done
