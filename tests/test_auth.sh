#!/bin/bash
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
