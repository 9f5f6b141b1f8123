#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Whether a host is oversubscribed is judged by the CPUs its ranks may use
# together, not by one process's affinity: two ranks bound to a core each (as
# mpirun binds them) have a CPU each and poll; two bound to one core do not;
# hosts on one kernel are judged together.
#   test_affinity.sh COLLIE ALLREDUCE_LOOP
collie=$1 loop=$2
. "$(dirname "$0")/lib.sh"
command -v taskset >/dev/null || { echo "skipped: no taskset"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "skipped: one CPU"; exit 77; }
cpus=($(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' | while IFS=- read a b; do seq "$a" "${b:-$a}"; done))
[ ${#cpus[@]} -ge 2 ] || { echo "skipped: this shell may use one CPU"; exit 77; }
export COLLIE_DEBUG=INFO
# each rank on its own CPU
expect_status 0 "$collie" run -n 2 sh -c "exec taskset -c \$(( COLLIE_LOCAL_RANK ? ${cpus[1]} : ${cpus[0]} )) $loop 8"
[ "$(printf '%s\n' "$out" | grep -c 'shm: 2 ranks on this host.* spin 50 us')" = 2 ] ||
    fail "ranks bound to a CPU each should poll (spin 50 us):
$out"
# both on one CPU
expect_status 0 "$collie" run -n 2 sh -c "exec taskset -c ${cpus[0]} $loop 8"
[ "$(printf '%s\n' "$out" | grep -c 'shm: 2 ranks on this host.* spin 0 us')" = 2 ] ||
    fail "ranks bound to one CPU should yield at once (spin 0 us):
$out"
echo "affinity: a CPU each polls, one CPU for both yields"

# Hosts that share one kernel (emulated hosts, containers of one server)
# share its CPUs: two "hosts" of 2 ranks each on 2 CPUs are 4 ranks on 2, so
# a host's sync must not spin for its partner (it spun 50 us, and a 4-byte
# allreduce of 2 emulated hosts x 2 ranks took 64 us where it takes 14);
# one rank a host has a CPU each and polls.
two_hosts() { # two_hosts N: N ranks in 2 "hosts" on the first 2 CPUs
    expect_status 0 taskset -c "${cpus[0]},${cpus[1]}" "$collie" run -n "$1" --bind none \
        sh -c "COLLIE_HOST=h\$((COLLIE_RANK * 2 / $1)) exec $loop 8"
}
two_hosts 4
[ "$(printf '%s\n' "$out" | grep -c 'shm: 2 ranks on this host.* spin 0 us, yield 2000 us (4 ranks on 2 CPUs, hosts on one kernel)')" = 4 ] ||
    fail "2 hosts of 2 ranks on 2 CPUs should yield at once (spin 0 us):
$out"
two_hosts 2
[ "$(printf '%s\n' "$out" | grep -c 'shm: 1 ranks on this host.* spin 50 us, yield 1000 us (2 ranks on 2 CPUs, hosts on one kernel)')" = 2 ] ||
    fail "2 hosts of 1 rank on 2 CPUs should poll (spin 50 us):
$out"
echo "affinity: hosts on one kernel count the ranks of all"

# collie run --bind auto: ranks that outnumber the CPUs by a whole multiple
# are pinned in blocks (two per CPU here); an uneven count, --bind none and
# COLLIE_BIND=none leave them on every CPU
mask=$(taskset -pc $$ | sed 's/.*: //')
n=$(( ${#cpus[@]} * 2 ))
show='echo "rank $COLLIE_LOCAL_RANK on $(taskset -pc $$ | sed "s/.*: //")"'
expect_status 0 "$collie" run -n $n sh -c "$show"
for i in $(seq 0 $((n - 1))); do
    expect_output "^rank $i on ${cpus[$((i / 2))]}$"
done
for how in "--bind none -n $n" "-n $((n - 1))"; do
    expect_status 0 "$collie" run $how sh -c "$show"
    [ "$(printf '%s\n' "$out" | grep -c "^rank [0-9]* on $mask$")" = "${how##* }" ] ||
        fail "collie run $how should leave every rank on $mask:
$out"
done
expect_status 0 env COLLIE_BIND=none "$collie" run -n $n sh -c "$show"
[ "$(printf '%s\n' "$out" | grep -c "^rank [0-9]* on $mask$")" = $n ] || fail "COLLIE_BIND=none pinned: $out"
expect_status 2 "$collie" run --bind cores -n 2 true
expect_output "--bind \(or COLLIE_BIND\) is auto or none, not 'cores'"
echo "affinity: oversubscribed ranks pinned in blocks; --bind none leaves them"
