#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie info: version, detection, the whole configuration table; bad and unknown variables.
collie=$1
. "$(dirname "$0")/lib.sh"
# The compiled table is the one source of truth for the variables `collie info` must print.
src=$(dirname "$0")/../src/core/config.h

expect_status 0 "$collie" info
expect_output "^collie [0-9]+\.[0-9]+\.[0-9]+"
expect_output "1 rank\(s\) on 1 host"
expect_output "allreduce +oneshot, twoshot"
# the transports of this build, and which this job uses
expect_output "^  shm +built in, not used by this job"
expect_output "^  tcp +built in, not used by this job"

# every variable of the table, with its default
for var in $(grep -oE '^    X\([A-Z_0-9]+' "$src" | sed 's/.*X(/COLLIE_/'); do
    expect_output "^$var "
done
expect_status 0 "$collie" info --config
expect_output "^COLLIE_TIMEOUT +300 +300 +seconds"

expect_status 0 "$collie" run -n 3 "$collie" info
expect_output "3 rank\(s\) on 1 host"
expect_output "^  shm +in use: 2 peer\(s\) of this rank"
expect_output "^  tcp +built in, not used by this job"
[ "$(printf '%s\n' "$out" | grep -c '^collie ')" = 1 ] || fail "only rank 0 should print"
# where collie_allreduce_ef codes: not on one host, unless forced
expect_output "allreduce_ef \(error-feedback codes\): exact \(one host"
expect_status 0 env COLLIE_EF_CODES=all "$collie" run -n 2 "$collie" info
expect_output "allreduce_ef \(error-feedback codes\): codes on every rank \(COLLIE_EF_CODES\)"
expect_status 0 env COLLIE_EF_CODES=everywhere "$collie" info
expect_output "allreduce_ef \(error-feedback codes\): COLLIE_EF_CODES='everywhere' is not auto, hosts, all or off"

# a bad value is refused, naming the variable; an unknown one is warned about
expect_status 1 env COLLIE_TIMEOUT=soon "$collie" info
expect_output "COLLIE_TIMEOUT='soon' is not a positive number of seconds"
expect_status 1 env COLLIE_ALGO=allreduce:magic "$collie" info
expect_output "COLLIE_ALGO='allreduce:magic'"
expect_status 0 env COLLIE_TIMOUT=5 "$collie" info
expect_output "unknown variable COLLIE_TIMOUT"
# the launcher's own variables are not the library's business
expect_status 0 env COLLIE_RSH=ssh "$collie" info
printf '%s\n' "$out" | grep -q "unknown variable" && fail "COLLIE_RSH is warned about: $out"
# `collie train` runs collie-train, where the build has it, and says why not where not
if [ -x "$(dirname "$collie")/collie-train" ]; then
    expect_status 0 "$collie" train --help
    expect_output "usage: collie train"
else
    expect_status 127 "$collie" train --help
    expect_output "COLLIE_BUILD_TRAIN=ON"
fi

# What the job would run at each size: on one host, and on two "hosts" (COLLIE_HOST),
# where the rates of the links decide; the table is the calls' own choice.
algos='(oneshot|twoshot|direct|ring|rd|rabenseifner|hierarchical|staged|tree|pairwise|adaptive)'
expect_status 0 "$collie" run -n 3 "$collie" info
expect_output "^choices of this job \(built-in rates"
expect_output "^  links between hosts: 20.0 us, 1.074 GB/s each way"
for coll in allreduce broadcast reduce allgather reduce_scatter alltoall; do
    expect_output "^  $coll( +$algos){6}\$"
done
two_hosts() { # two_hosts VAR=VALUE CMD...: 4 ranks, 2 per "host", the links' latency set
    local setting=$1 # (not measured: two jobs must choose alike; test_link_probe.sh measures)
    shift
    env COLLIE_NET_LATENCY_US=20 "$setting" "$collie" run -n 4 sh -c 'COLLIE_HOST=h$((COLLIE_RANK / 2)) exec "$@"' sh "$@"
}
expect_status 0 two_hosts COLLIE_NET_BANDWIDTH=10M "$collie" info
slow=$(printf '%s\n' "$out" | grep -E '^  allreduce( +[a-z]+){6}$')
expect_output "^  links between hosts: 20.0 us, 0.010 GB/s"
expect_status 0 two_hosts COLLIE_NET_BANDWIDTH=100G "$collie" info
fast=$(printf '%s\n' "$out" | grep -E '^  allreduce( +[a-z]+){6}$')
[ -n "$slow" ] && [ "$slow" != "$fast" ] ||
    fail "the choices do not follow the links' rates: '$slow' at 10 MB/s, '$fast' at 100 GB/s"
# ... as are the hosts where allreduce_ef codes: only between slow links, where they pay
expect_status 0 two_hosts COLLIE_NET_BANDWIDTH=10M "$collie" info
expect_output "allreduce_ef \(error-feedback codes\): exact within each host, codes between the hosts' first ranks \(the cost model"
expect_status 0 two_hosts COLLIE_NET_BANDWIDTH=1350M "$collie" info
expect_output "allreduce_ef \(error-feedback codes\): INT8: exact within each host, codes between the hosts' first ranks; SIGN: exact \("
expect_status 0 two_hosts COLLIE_NET_BANDWIDTH=100G "$collie" info
expect_output "allreduce_ef \(error-feedback codes\): exact \(the cost model"
# ... and they are what a call of that size runs (collie bench names the algorithm it ran)
at_1m=$(printf '%s\n' "$fast" | awk '{ print $5 }')
expect_status 0 two_hosts COLLIE_NET_BANDWIDTH=100G "$collie" bench allreduce -b 1M -e 1M --iters 2 --warmup 1
ran=$(printf '%s\n' "$out" | awk '$1 == 1048576 { print $NF }')
[ -n "$ran" ] && [ "$ran" = "$at_1m" ] || fail "collie info says allreduce of 1 MiB runs '$at_1m', collie bench ran '$ran'"

# COLLIE_DEBUG=TRACE shows every call with its algorithm
expect_status 0 env COLLIE_DEBUG=TRACE "$collie" bench allreduce -n 2 -b 64 -e 64 --iters 2 --warmup 1
expect_output "TRACE coll: #[0-9]+ allreduce of 16 elements: oneshot"
echo "info: ok"
