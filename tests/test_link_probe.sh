#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The links between hosts, measured at init for the cost model (COLLIE_NET_PROBE):
# on two "hosts" of one machine (COLLIE_HOST over loopback), the measurement
# is made, logged and used, and every setting that names the rates wins over
# it; on emulated hosts (network namespaces) it finds the shaped rate of a
# 1 Gbit/s link despite tc tbf's burst and ranks that lose their CPU now and then,
# and an unshaped link far faster.
#   test_link_probe.sh COLLIE [settings|rates]   (both where neither is named)
# "rates" measures links shaped by tc and asserts what it finds: a busy machine
# can move that, so the suite runs it in its perf tier, outside the gate.
collie=$1 mode=${2:-all}
here=$(dirname "$0")
. "$here/lib.sh"
case $mode in settings | rates | all) ;; *) fail "mode '$mode': settings, rates or all" ;; esac
if [ "$mode" != rates ]; then
    two_hosts() { # two_hosts [VAR=VALUE...] CMD...: 4 ranks, 2 per "host"
        local vars=()
        while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
        env "${vars[@]}" "$collie" run -n 4 sh -c 'COLLIE_HOST=h$((COLLIE_RANK / 2)) exec "$@"' sh "$@"
    }
    links='^  links between hosts'

    expect_status 0 two_hosts COLLIE_DEBUG=INFO "$collie" info
    expect_output "INFO  links: measured between rank 0 \(host 0\) and rank 2 \(host 1\) in [0-9.]+ ms: [0-9.]+ us a message, [0-9.]+ GB/s$"
    expect_output "$links \(measured at init\): [0-9.]+ us, [0-9.]+ GB/s each way"
    expect_status 0 two_hosts COLLIE_NET_PROBE=0 COLLIE_DEBUG=INFO "$collie" info
    expect_output "$links: 20.0 us, 1.074 GB/s each way"
    printf '%s\n' "$out" | grep -q "INFO  links:" && fail "measured with COLLIE_NET_PROBE=0: $out"
    # one rate set: the other measured; both set, or a machine file: nothing measured
    expect_status 0 two_hosts COLLIE_NET_LATENCY_US=50 COLLIE_DEBUG=INFO "$collie" info
    expect_output "COLLIE_NET_LATENCY_US set: the bandwidth used"
    expect_output "$links \(measured at init\): 50.0 us, [0-9.]+ GB/s"
    expect_status 0 two_hosts COLLIE_NET_BANDWIDTH=10M COLLIE_DEBUG=INFO "$collie" info
    expect_output "$links \(measured at init\): [0-9.]+ us, 0.010 GB/s"
    expect_status 0 two_hosts COLLIE_NET_BANDWIDTH=10M COLLIE_NET_LATENCY_US=7 COLLIE_DEBUG=INFO "$collie" info
    expect_output "$links: 7.0 us, 0.010 GB/s"
    printf '%s\n' "$out" | grep -q "INFO  links:" && fail "measured with both rates set: $out"
    machine=$(mktemp)
    trap 'rm -f "$machine" "$machine.tuned"' EXIT
    printf 'link_latency_us = 3\nlink_bandwidth_gbs = 42\n' > "$machine"
    expect_status 0 two_hosts COLLIE_MACHINE="$machine" COLLIE_DEBUG=INFO "$collie" info
    expect_output "$links: 3.0 us, 42.000 GB/s"
    printf '%s\n' "$out" | grep -q "INFO  links:" && fail "measured with COLLIE_MACHINE: $out"
    # ranks set up differently: rank 0's settings decide, the others say so, nobody waits
    for who in 0 2; do
        expect_status 0 env COLLIE_TIMEOUT=20 COLLIE_DEBUG=INFO "$collie" run -n 4 sh -c \
            "[ \$COLLIE_RANK = $who ] && export COLLIE_NET_PROBE=0; COLLIE_HOST=h\$((COLLIE_RANK / 2)) exec '$collie' info"
        expect_output "differ from rank 0's: rank 0's decide what is measured"
        if [ $who = 0 ]; then
            expect_output "$links: 20.0 us"
        else
            expect_output "$links \(measured at init\)"
        fi
    done
    # a communicator split over the same two hosts (--tune's pair across them) takes its parent's figures
    expect_status 0 two_hosts COLLIE_DEBUG=INFO "$collie" bench --tune "$machine.tuned" --tune-wait 0
    expect_output "INFO  links: as measured before between these hosts: [0-9.]+ us a message, [0-9.]+ GB/s$"
    [ "$(printf '%s\n' "$out" | grep -c "INFO  links: measured between")" = 1 ] || fail "measured twice: $out"
    # ... and the description holds the links' rates --tune solved, not those measured at init
    for key in link_latency_us link_bandwidth_gbs; do
        solved=$(sed -nE "s/^# $key +([0-9.e+-]+) +from .*/\1/p" <<<"$out")
        written=$(sed -nE "s/^$key += ([0-9.e+-]+) .*/\1/p" "$machine.tuned")
        [ -n "$solved" ] && [ "$solved" = "$written" ] ||
            fail "--tune solved $key = '$solved' but wrote '$written': $(cat "$machine.tuned")"
    done
    # ... and its hosts, one machine's (one kernel, its boot id), share its CPUs
    cores=$(getconf _NPROCESSORS_ONLN)
    grep -qE "^shared_cores += $cores " "$machine.tuned" ||
        fail "--tune on one kernel's hosts did not write shared_cores = $cores: $(cat "$machine.tuned")"
    expect_output "^# shared_cores $cores: every host runs on one kernel"
    rm -f "$machine" "$machine.tuned" # netns.sh's trap replaces ours below
    # a collective after the measurement: its messages do not confuse the first call
    expect_status 0 two_hosts "$collie" bench allreduce -b 4 -e 1M -f 64 --iters 3 --warmup 1
    expect_output "^ +1048576 +262144 +float32 +sum .* 0  [a-z]+$"
    # a link one connection fills: each message crosses on one, not striped, every element right
    expect_status 0 two_hosts COLLIE_NET_BANDWIDTH=100M COLLIE_DEBUG=INFO "$collie" bench allreduce \
        -b 256K -e 4M -f 16 --iters 3 --warmup 1
    expect_output "INFO  net: 0\.1[0-9]+ GB/s between hosts, under 0\.5: a message crosses on one connection"
    expect_output "^ +4194304 +1048576 +float32 +sum .* 0  [a-z]+$"
fi
[ "$mode" = settings ] && { echo "link_probe settings: ok"; exit 0; }

# Emulated hosts: the shaped rate, and the unshaped one (needs root: else skipped).
. "$here/netns.sh"
. "$here/hosts_job.sh"
# tc-tbf(8) asks for a bucket of at least rate/HZ: on a busy machine the hosts'
# packets can go once a scheduler tick (4 ms here), and 256 KB a tick is 0.066 GB/s
# (CI read 0.060 with that bucket).  The 1 Gbit/s links here get 512 KB, 0.131 a tick.
measured() { # measured RATE [PLACEMENT]: the GB/s the job measures (1 rank on each of 2 hosts)
    netns_down
    local netns_burst
    [ "$1" = 1gbit ] && netns_burst=512kb
    netns_up 2 "$1"
    job_out=$(mktemp)
    COLLIE_DEBUG=INFO hosts_job "${2:-1,1}" "$collie" info ||
        fail "info on ${1:-unshaped} links: $(cat "$job_out")"
    gbs=$(sed -nE 's/.*INFO  links: measured .* ([0-9.]+) GB\/s$/\1/p' "$job_out")
    [ -n "$gbs" ] || fail "no measurement on ${1:-unshaped} links: $(cat "$job_out")"
    echo "links ${1:-unshaped}, ranks ${2:-1,1}: $(grep "INFO  links" "$job_out")"
    rm -f "$job_out"
}
# 1 Gbit/s carries at most 0.125 GB/s, TCP/IP's headers leave about 0.118
for placement in 1,1 2,2; do # the hosts' other ranks idle meanwhile
    measured 1gbit $placement
    awk -v g="$gbs" 'BEGIN { exit !(g >= 0.100 && g <= 0.135) }' ||
        fail "measured $gbs GB/s on a 1 Gbit/s link with ranks $placement (tbf's burst let through?)"
done
# Ranks that lose their CPU now and then (a busy neighbour, a noisy machine): every
# rank stopped 5 ms (and pkill's time) in each 65, the probe still finds the link.
# A stop slows the transfer in flight and the idle link's refilled burst speeds the
# next: the probe goes again while a series dips, and the fastest median counts
# (the median of one series, whatever it held, read 0.096 GB/s once in 230).
stopped="^$collie info\\$"
stopper() { # stops the processes matching $stopped 5 ms in every 65, while this test runs
    while kill -0 $$ 2>/dev/null; do
        pkill -STOP -f "$stopped"; sleep 0.005; pkill -CONT -f "$stopped"; sleep 0.06
    done
}
stopper &
stopper_pid=$!
for round in $(seq 1 20); do
    measured 1gbit
    awk -v g="$gbs" 'BEGIN { exit !(g >= 0.100 && g <= 0.135) }' && continue
    kill $stopper_pid; wait $stopper_pid 2>/dev/null; pkill -CONT -f "$stopped"
    fail "measured $gbs GB/s on a 1 Gbit/s link with ranks stopped 5 ms in 65 (job $round)"
done
kill $stopper_pid; wait $stopper_pid 2>/dev/null; pkill -CONT -f "$stopped"
# 100 Mbit/s carries 0.0125 GB/s.  Its transfers are 64 KB (5 ms), and tbf's 256 KB bucket
# lets the untimed one and up to three of the nine timed through at the veth's speed: the
# median, the fifth, is near the edge (a CI run on 2026-11-28 read 0.014, 12% over).  That
# series dips and goes again, but the faster median counts: still this one.  A probe
# that took the burst for the link would read many times the rate.
measured 100mbit
awk -v g="$gbs" 'BEGIN { exit !(g >= 0.0100 && g <= 0.0150) }' || fail "measured $gbs GB/s on 100 Mbit/s"
measured ""
awk -v g="$gbs" 'BEGIN { exit !(g >= 0.5) }' || fail "measured $gbs GB/s on an unshaped veth"
echo "link_probe: ok"
