#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie run -H across emulated hosts: a stand-in for ssh (--rsh) enters the
# host's network namespace, so the launcher's remote path runs for real: rank
# placement, the token through stdin, tagged output, and a failing rank
# stopping every host's ranks.
collie=$1 coll_prog=$2
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/netns.sh"
netns_up 3
dir=$(mktemp -d)
trap 'netns_down; rm -rf "$dir"' EXIT
# "ssh HOST COMMAND" for emulated hosts: 10.99.0.(h+1) is namespace h
netns_rsh "$dir/rsh"
hosts="$(netns_addr 0):2,$(netns_addr 1):1,$(netns_addr 2):2"

# placement fills hosts in order; every rank knows its host; remote ranks get the token
expect_status 0 "$collie" run -H "$hosts" --rsh "$dir/rsh" sh -c \
    'echo "rank $COLLIE_RANK of $COLLIE_SIZE local $COLLIE_LOCAL_RANK/$COLLIE_LOCAL_SIZE host $COLLIE_HOST token ${#COLLIE_TOKEN}"'
for want in "0@10.99.0.1\] rank 0 of 5 local 0/2 host 10.99.0.1 token 64" \
            "1@10.99.0.1\] rank 1 of 5 local 1/2 host 10.99.0.1 token 64" \
            "2@10.99.0.2\] rank 2 of 5 local 0/1 host 10.99.0.2 token 64" \
            "4@10.99.0.3\] rank 4 of 5 local 1/2 host 10.99.0.3 token 64"; do
    expect_output "^\[rank $want$"
done
# -n fewer than the slots: the first hosts only
expect_status 0 "$collie" run -n 3 -H "$hosts" --rsh "$dir/rsh" sh -c 'echo "size $COLLIE_SIZE"'
[ "$(printf '%s\n' "$out" | grep -c 'size 3')" = 3 ] || fail "-n 3: $out"
expect_status 2 "$collie" run -n 9 -H "$hosts" --rsh "$dir/rsh" true
expect_output "9 ranks asked for, but the hosts have 5 slot"
expect_status 2 "$collie" run -H "localhost:1,$(netns_addr 1):1" --rsh "$dir/rsh" true
expect_output "cannot reach"

# real collectives across the three hosts, every element checked
COLLIE_TEST_MAX_COUNT=70000 expect_status 0 "$collie" run -H "$hosts" --rsh "$dir/rsh" "$coll_prog" allreduce
expect_output "allreduce on 5 ranks: [0-9]+ cases, 0 failures"

# a hostfile says the same
printf '# emulated hosts\n%s slots=2\n%s\n%s:2\n' "$(netns_addr 0)" "$(netns_addr 1)" "$(netns_addr 2)" > "$dir/hosts"
COLLIE_TEST_MAX_COUNT=1000 expect_status 0 "$collie" run --hostfile "$dir/hosts" --rsh "$dir/rsh" "$coll_prog" broadcast
expect_output "broadcast on 5 ranks: [0-9]+ cases, 0 failures"

# a rank that fails on host 1 stops the ranks of every host, and its status is the job's
start=$(date +%s)
expect_status 7 "$collie" run -H "$hosts" --rsh "$dir/rsh" sh -c '[ "$COLLIE_RANK" = 2 ] && exit 7; sleep 60'
expect_output "rank 2 .*exited with status 7"
[ $(($(date +%s) - start)) -lt "$(test_time 20)" ] || fail "stopping the job took $(($(date +%s) - start)) s"
for h in 0 1 2; do
    left=$(ip netns pids "$netns_prefix-$h" | xargs -r ps -o args= -p 2>/dev/null | grep -c "sleep 60")
    [ "$left" = 0 ] || fail "host $h still runs $left rank(s) after the job stopped"
done
echo "run across hosts: ok"
