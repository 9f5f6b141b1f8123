#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie run: environment, exit codes, stopping the job when a rank fails,
# signal forwarding, output tagging, usage errors.
collie=$1
. "$(dirname "$0")/lib.sh"

expect_status 0 "$collie" run -n 3 sh -c 'echo "rank $COLLIE_RANK of $COLLIE_SIZE local $COLLIE_LOCAL_RANK/$COLLIE_LOCAL_SIZE at $COLLIE_ADDR"'
for r in 0 1 2; do expect_output "^rank $r of 3 local $r/3 at 127\.0\.0\.1:[0-9]+$"; done

# a failing rank: its status becomes ours, and it is named
expect_status 7 "$collie" run -n 3 sh -c '[ "$COLLIE_RANK" = 1 ] && exit 7; exit 0'
expect_output "rank 1 \(pid [0-9]+\) exited with status 7"

# a rank killed by a signal stops the others within the grace period
start=$(date +%s)
expect_status 137 "$collie" run -n 4 sh -c '[ "$COLLIE_RANK" = 2 ] && kill -9 $$; exec sleep 60'
expect_output "rank 2 \(pid [0-9]+\) was killed by signal 9"
expect_output "stopping the other 3 rank"
[ $(( $(date +%s) - start )) -lt "$(test_time 10)" ] || fail "the job took $(( $(date +%s) - start )) s to stop"

# ranks that ignore SIGTERM are killed after the grace period
start=$(date +%s)
expect_status 3 "$collie" run -n 2 sh -c 'trap "" TERM; [ "$COLLIE_RANK" = 0 ] && sleep 1 && exit 3; sleep 60'
expect_output "killing them"
[ $(( $(date +%s) - start )) -lt "$(test_time 15)" ] || fail "SIGKILL escalation took too long"

# SIGTERM to the launcher is forwarded to every rank, once
log=$(mktemp)
"$collie" run -n 2 sh -c 'trap "echo got TERM on $COLLIE_RANK; exit 0" TERM; sleep 60 & wait' >"$log" 2>&1 &
pid=$!
sleep 1
kill -TERM $pid
wait $pid; status=$?
out=$(cat "$log"); rm -f "$log"
[ $status = 143 ] || fail "launcher exited $status after SIGTERM, want 143: $out"
expect_output "got TERM on 0"
expect_output "got TERM on 1"
[ "$(printf '%s\n' "$out" | grep -c 'got TERM')" = 2 ] || fail "each rank should get SIGTERM once: $out"

# --tag-output prefixes every line, stdout and stderr, even without a final newline
expect_status 0 "$collie" run -n 2 --tag-output sh -c 'echo one; echo two >&2; printf three'
for r in 0 1; do
    expect_output "^\[rank $r\] one$"; expect_output "^\[rank $r\] two$"; expect_output "^\[rank $r\] three$"
done

# --keep-going: a rank lost to a signal does not stop the others, and the job
# succeeds if the rest exit 0; a rank that exits with an error still fails it
expect_status 0 "$collie" run -n 3 --keep-going sh -c \
    'if [ $COLLIE_RANK = 1 ]; then kill -9 $$; fi; sleep 0.3; echo "rank $COLLIE_RANK done"'
expect_output "rank 1 \(pid [0-9]+\) was killed by signal 9 \(Killed\); the other 2 go on"
expect_output "rank 0 done"; expect_output "rank 2 done"
expect_status 3 "$collie" run -n 3 --keep-going sh -c \
    'if [ $COLLIE_RANK = 2 ]; then exit 3; fi; sleep 0.3; echo "rank $COLLIE_RANK done"'
expect_output "rank 0 done"; expect_output "rank 1 done"
expect_status 137 "$collie" run -n 2 --keep-going sh -c 'kill -9 $$'

# usage errors
expect_status 2 "$collie" run
expect_output "no program"
expect_status 2 "$collie" run -n 0 true
expect_output "number of ranks"
expect_status 2 "$collie" run --bogus true
expect_status 127 "$collie" run -n 2 /nonexistent/program
expect_output "cannot start '/nonexistent/program'"
expect_status 2 "$collie" frobnicate
echo "launcher: ok"
