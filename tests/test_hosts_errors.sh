#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Failures across emulated hosts: a host whose link goes down mid-collective
# makes every rank, on every host, return a named error within COLLIE_TIMEOUT
# (no hang); a rank with the wrong token is refused and never joins; user
# send/recv and a mismatch across hosts.
errors=$1
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/netns.sh"
. "$here/hosts_job.sh"
netns_up 3
export COLLIE_TIMEOUT=3
TMPDIR_HOSTS=$(mktemp -d)
job_out=

# send/recv across hosts: sizes 0 to 4 MiB, and 5000 small messages in order
for placement in 1,1 2,1 1,1,1; do
    hosts_job $placement "$errors" p2p-data || fail "p2p on hosts $placement: $(cat "$job_out")"
    grep -q "p2p-data: ok on" "$job_out" || fail "p2p on hosts $placement: $(cat "$job_out")"
    rm -f "$job_out"; job_out=
done

# a receiver that expects another size than the sender's gets MISMATCH naming both
# the mismatch's cause reaches every rank, relayed by ranks that never saw it
for placement in 1,1 2,2 1,3; do
    hosts_job $placement "$errors" p2p || fail "p2p mismatch on hosts $placement: $(cat "$job_out")"
    grep -q "p2p: ok on [0-9]* ranks" "$job_out" || fail "p2p mismatch on hosts $placement: $(cat "$job_out")"
done
rm -f "$job_out"; job_out=

# a rank whose token differs is refused by name and never joins: rank 0 logs the refusal
# and, the job never complete, times out
port=29400
netns_exec 0 env COLLIE_RANK=0 COLLIE_SIZE=2 COLLIE_HOST=a COLLIE_ADDR="$(netns_addr 0):$port" \
    COLLIE_TOKEN=right "$errors" p2p-data > "$TMPDIR_HOSTS/r0" 2>&1 &
r0=$!
expect_status 1 netns_exec 1 env COLLIE_RANK=1 COLLIE_SIZE=2 COLLIE_HOST=b \
    COLLIE_ADDR="$(netns_addr 0):$port" COLLIE_TOKEN=wrong "$errors" p2p-data
expect_output "COLLIE_TOKEN"
wait $r0 && fail "rank 0 completed a job with an intruder: $(cat "$TMPDIR_HOSTS/r0")"
grep -q "refused a connection from $(netns_addr 1)" "$TMPDIR_HOSTS/r0" ||
    fail "rank 0 did not log the refusal: $(cat "$TMPDIR_HOSTS/r0")"

# the link of host 1 goes down while 2 x 2 ranks allreduce 1 MiB in a loop
job_out=$(mktemp)
trap 'netns_down; rm -rf "$job_out" "$TMPDIR_HOSTS"' EXIT
hosts_job 2,2 "$errors" until-error &
job=$!
for _ in $(seq 1 300); do
    [ "$(grep -c "allreduce runs" "$job_out")" = 4 ] && break
    sleep 0.1
done
[ "$(grep -c "allreduce runs" "$job_out")" = 4 ] || fail "the job did not start: $(cat "$job_out")"
sleep 0.5
netns_link 1 down
down_at=$(date +%s.%N)
wait $job
status=$?
took=$(echo "$(date +%s.%N) - $down_at" | bc)
[ "$status" = 3 ] || fail "the job exited $status after the link went down, want 3 (every rank: an error)"
awk -v t="$took" -v s="$(test_time 5)" 'BEGIN { exit !(t < 3 + s) }' || fail "ranks took $took s to give up (COLLIE_TIMEOUT=3)"
for r in 0 1 2 3; do
    grep -Eq "^rank $r failed after [0-9]+ calls, [0-9.]+ s after the last success: .*(timed out|lost|failed).*: " "$job_out" ||
        fail "rank $r did not report a named error: $(cat "$job_out")"
done
netns_link 1 up
echo "link down: every rank failed within $took s:"
grep "failed after" "$job_out"
