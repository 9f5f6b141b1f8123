#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Encrypted links (COLLIE_ENCRYPT=1) under a man in the middle: two emulated
# hosts whose traffic is routed through a third namespace, where nftables
# hands every connection from host 1 to host 0 to tests/mitm.py, which
# relays it - faithfully, or altering, replaying or dropping bytes of it.
# Each job is fault_worker's random collectives (every element checked), one
# rank per host:
#   - relayed faithfully, encrypted: every result exact;
#   - one bit flipped, plain TCP (the control): a wrong result goes unseen
#     by collie - the attack works where nothing authenticates the bytes;
#   - one bit flipped, bytes replayed or dropped, encrypted: every rank ends
#     with an error, the rank that received the altered bytes names
#     COLLIE_ERR_AUTH, no result is wrong, nothing hangs;
#   - rank 0 started a second after rank 1: the proxy closes rank 1's first
#     connections unanswered, rank 1 tries again, the job runs;
#   - ranks that disagree on COLLIE_ENCRYPT, and COLLIE_ENCRYPT=1 without a
#     token or with a bad value: refused, by name.
#   test_encrypt.sh FAULT_WORKER
worker=$1
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/netns.sh"
. "$here/hosts_job.sh"
command -v nft >/dev/null || netns_skip "the man in the middle needs nftables (apt-get install nftables)"
netns_up_routed
netns_exec sw nft -f - <<'EOF' || netns_skip "nftables cannot redirect in a namespace here"
table ip mitm {
    chain prerouting {
        type nat hook prerouting priority dstnat;
        iifname "side1" ip daddr 10.99.0.0/24 tcp dport 1-65535 redirect to :7777
    }
}
EOF
export COLLIE_TIMEOUT=10 COLLIE_DEBUG=NONE
mitm_out=$(mktemp)
trap 'rm -f "$mitm_out" "$job_out"; netns_down' EXIT

mitm_start() { # MODE AT
    : > "$mitm_out"
    ip netns exec "$netns_prefix-sw" /usr/bin/python3 "$here/mitm.py" 7777 "$1" "$2" >> "$mitm_out" 2>&1 &
    mitm_pid=$!
    for _ in $(seq 100); do grep -q listening "$mitm_out" && return; sleep 0.05; done
    fail "mitm.py did not start: $(cat "$mitm_out")"
}

mitm_stop() {
    kill -TERM "$mitm_pid" 2>/dev/null
    wait "$mitm_pid" 2>/dev/null
}

# job ENCRYPT MODE AT: 2 ranks, one per host, through the man in the middle
job() {
    local start end
    mitm_start "$2" "$3"
    job_out=$(mktemp)
    start=$(date +%s)
    COLLIE_ENCRYPT=$1 hosts_job 1,1 "$worker" 60 7
    end=$(date +%s)
    mitm_stop
    elapsed=$((end - start))
    echo "encrypt=$1 $2 at $3: $(grep -E '^rank [0-9]+ (done|error|WRONG)' "$job_out" | cut -c1-150 | tr '\n' ';') $(cat "$mitm_out") (${elapsed} s)"
}

ranks_done() { [ "$(grep -c '^rank [01] done' "$job_out")" = 2 ]; }

# Faithful relay, encrypted: exact results, and the connections did pass through it.
job 1 pass 0
ranks_done || fail "encrypted, relayed faithfully: $(cat "$job_out")"
grep -Eq "mitm: ([6-9]|[1-9][0-9]+) connections" "$mitm_out" ||
    fail "the rendezvous and the 5 data connections did not all pass the man in the middle: $(cat "$mitm_out")"

# The control: the same flip on plain TCP is a wrong result nobody notices.
job 0 flip 1500000
grep -q "WRONG" "$job_out" && grep -q "altered" "$mitm_out" ||
    fail "plain TCP with a flipped bit: expected a wrong result (else the test proves nothing): $(cat "$job_out")"

# Encrypted: refused by name, on every rank, within the timeout; never wrong.
# A gap is found when bytes after it come: the drop falls mid-stream (within a reduce_scatter
# whose records go on), where a drop that nothing follows until the receiver answers ends at
# the deadline instead, the receiver's timeout or its peer's, whichever comes first.
for attack in "flip 1500000" "replay 1500000" "drop 20000" "flip 100"; do
    # shellcheck disable=SC2086
    job 1 $attack
    ! grep -q "WRONG" "$job_out" || fail "encrypted, $attack: a wrong result was accepted: $(cat "$job_out")"
    [ "$(grep -c '^rank [01] error' "$job_out")" = 2 ] ||
        fail "encrypted, $attack: every rank must end with an error: $(cat "$job_out")"
    grep -q "^rank 0 error COLLIE_ERR_AUTH.*failed authentication" "$job_out" ||
        fail "encrypted, $attack: rank 0 must name the failed authentication: $(cat "$job_out")"
    [ "$elapsed" -le $((COLLIE_TIMEOUT + 2)) ] || fail "encrypted, $attack: took ${elapsed} s"
done

# pair ENCRYPT0 ENCRYPT1 [TIMEOUT]: rank 1 starts first, rank 0 a second later, through
# the man in the middle - which accepts rank 1's connection and, while rank 0 does
# not listen yet, closes it unanswered (as ssh -L or a service address would).
pair() {
    mitm_start pass 0
    job_out=$(mktemp)
    netns_exec 1 env COLLIE_TIMEOUT="${3:-10}" COLLIE_ENCRYPT="$2" COLLIE_RANK=1 COLLIE_SIZE=2 \
        COLLIE_HOST=emulated-1 COLLIE_ADDR=10.99.0.1:29400 COLLIE_TOKEN=test-token "$worker" 10 1 >> "$job_out" 2>&1 &
    rank1=$!
    sleep 1
    netns_exec 0 env COLLIE_TIMEOUT="${3:-10}" COLLIE_ENCRYPT="$1" COLLIE_RANK=0 COLLIE_SIZE=2 \
        COLLIE_HOST=emulated-0 COLLIE_ADDR=10.99.0.1:29400 COLLIE_TOKEN=test-token "$worker" 10 1 >> "$job_out" 2>&1
    wait $rank1
    mitm_stop
}

# Rank 0 last, behind the proxy: rank 1 tries again until rank 0 answers.
pair 1 1
ranks_done || fail "rank 0 started last behind a proxy: $(cat "$job_out")"
echo "rank 0 last, behind a proxy: $(tail -1 "$mitm_out")"

# Ranks that disagree on COLLIE_ENCRYPT fail the handshake, by name.
pair 1 0 3
grep -q "another COLLIE_ENCRYPT" "$job_out" || fail "COLLIE_ENCRYPT=1 on rank 0 only: $(cat "$job_out")"
echo "COLLIE_ENCRYPT on rank 0 only: $(grep -o 'rank 1 error [A-Z_]*' "$job_out")"

# Bad settings: named before anything is sent.
out=$(COLLIE_ENCRYPT=1 COLLIE_TOKEN= COLLIE_RANK=0 COLLIE_SIZE=2 COLLIE_ADDR=127.0.0.1:1 \
    COLLIE_DEBUG=WARN "$worker" 10 1 2>&1)
echo "$out" | grep -q "COLLIE_ENCRYPT=1 needs COLLIE_TOKEN" || fail "no token: $out"
out=$(COLLIE_ENCRYPT=2 COLLIE_TOKEN=t COLLIE_RANK=0 COLLIE_SIZE=2 COLLIE_ADDR=127.0.0.1:1 \
    COLLIE_DEBUG=WARN "$worker" 10 1 2>&1)
echo "$out" | grep -q "COLLIE_ENCRYPT=2" || fail "COLLIE_ENCRYPT=2: $out"
echo "encrypted links: every attack refused, by name"
