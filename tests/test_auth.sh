#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The token handshake: a process that cannot prove it knows the job's
# COLLIE_TOKEN is refused with a named error and never joins; the job goes on
# with the real rank.  No token at all works, with a warning.
collie=$1 prog=$2 port_prog=$3
. "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
export COLLIE_TEST_MAX_COUNT=100 COLLIE_TIMEOUT=30
rank() { # rank R TOKEN: one rank of a 2-rank job at $port
    env COLLIE_RANK=$1 COLLIE_SIZE=2 COLLIE_ADDR=127.0.0.1:$port COLLIE_TOKEN="$2" "$prog" allreduce
}

for intruder in "not-the-token" ""; do
    port=$("$port_prog")
    rank 0 good-token > "$dir/r0" 2>&1 & r0=$!
    # the intruder claims rank 1 with another token (or none): refused, by name
    expect_status 1 rank 1 "$intruder"
    expect_output "COLLIE_ERR_AUTH|could not prove it knows this rank's COLLIE_TOKEN"
    # the real rank 1 still joins, and the job runs
    expect_status 0 rank 1 good-token
    wait $r0 || fail "rank 0 failed: $(cat "$dir/r0")"
    grep -qE "allreduce on 2 ranks: [0-9]+ cases, 0 failures" "$dir/r0" || fail "no result: $(cat "$dir/r0")"
    grep -q "refused a connection from 127.0.0.1:[0-9]* .*did not prove it knows COLLIE_TOKEN" "$dir/r0" ||
        fail "rank 0 did not log the refused connection: $(cat "$dir/r0")"
done

# a raw connection that sends garbage is dropped too, and the job still forms
port=$("$port_prog")
rank 0 t > "$dir/r0" 2>&1 & r0=$!
for _ in $(seq 1 50); do
    (exec 3<>/dev/tcp/127.0.0.1/$port && printf 'GET / HTTP/1.0\r\n\r\n%.0s' $(seq 1 8) >&3) 2>/dev/null && break
    sleep 0.1
done
expect_status 0 rank 1 t
wait $r0 || fail "rank 0 failed after a garbage connection: $(cat "$dir/r0")"
grep -q "refused a connection" "$dir/r0" || fail "garbage connection not logged: $(cat "$dir/r0")"

# Slow senders: 70 connections that never speak and 10 that stop half-way
# through the handshake hold the rendezvous port while a 4-rank job starts.
# Every connection proves itself against its own 5 s deadline, alongside the
# others (src/core/gate.c): the job forms at once.  Taken one at a time they
# cost 400 s, far past COLLIE_TIMEOUT; past 64 waiting, the oldest is dropped.
port=$("$port_prog")
rank4() { env COLLIE_RANK=$1 COLLIE_SIZE=4 COLLIE_ADDR=127.0.0.1:$port COLLIE_TOKEN=t COLLIE_TIMEOUT=10 "$prog" allreduce; }
rank4 0 > "$dir/r0" 2>&1 & r0=$!
for i in $(seq 1 80); do
    (for _ in $(seq 1 100); do exec 3<>/dev/tcp/127.0.0.1/$port && break; sleep 0.1; done 2>/dev/null
     [ "$i" -gt 70 ] && printf 'half' >&3   # 4 bytes of a 16-byte challenge
     touch "$dir/slow.$i"; exec sleep 60) &
done
for _ in $(seq 1 100); do [ "$(ls "$dir" | grep -c '^slow\.')" = 80 ] && break; sleep 0.1; done
[ "$(ls "$dir" | grep -c '^slow\.')" = 80 ] || fail "the slow senders did not all connect"
t0=$(date +%s)
rank4 1 > "$dir/r1" 2>&1 & r1=$!
rank4 2 > "$dir/r2" 2>&1 & r2=$!
rank4 3 > "$dir/r3" 2>&1 & r3=$!
for r in 0 1 2 3; do
    wait "$(eval echo \$r$r)" || fail "rank $r failed beside slow senders: $(cat "$dir/r$r")"
done
grep -qE "allreduce on 4 ranks: [0-9]+ cases, 0 failures" "$dir/r0" || fail "no result: $(cat "$dir/r0")"
[ $(( $(date +%s) - t0 )) -lt "$(test_time 10)" ] || fail "the job took $(( $(date +%s) - t0 )) s to form beside slow senders"
grep -q "dropped to make room: more than 64 connections at once" "$dir/r0" ||
    fail "rank 0 did not log dropping the oldest of 80 waiting connections: $(cat "$dir/r0")"
kill $(jobs -p) 2>/dev/null; wait 2>/dev/null

# without a token the job runs, and rank 0 warns once about the risk
port=$("$port_prog")
rank 0 "" > "$dir/r0" 2>&1 & r0=$!
expect_status 0 rank 1 ""
wait $r0 || fail "tokenless rank 0 failed: $(cat "$dir/r0")"
[ "$(grep -c "COLLIE_TOKEN is not set" "$dir/r0")" = 1 ] || fail "want one warning: $(cat "$dir/r0")"
# collie run draws a fresh 256-bit token per job, and keeps one the user set
expect_status 0 env -u COLLIE_TOKEN "$collie" run -n 2 sh -c 'echo "token $COLLIE_TOKEN"'
[ "$(printf '%s\n' "$out" | grep -cE '^token [0-9a-f]{64}$')" = 2 ] || fail "collie run's token: $out"
[ "$(printf '%s\n' "$out" | sort -u | wc -l)" = 1 ] || fail "ranks got different tokens: $out"
expect_status 0 env COLLIE_TOKEN=mine "$collie" run -n 1 sh -c 'echo "token $COLLIE_TOKEN"'
expect_output "^token mine$"
echo "auth: ok"
