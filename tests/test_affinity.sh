#!/bin/bash
# Whether a host is oversubscribed is judged by the CPUs its ranks may use
# together, not by one process's affinity: two ranks bound to a core each (as
# mpirun binds them) have a CPU each and poll; two bound to one core do not.
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
