#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie programs under MPI launchers with nothing set: Open MPI's mpirun (its PMIx),
# MPICH's mpiexec (its PMI-1 socket), Open MPI 5's and Intel MPI's on this host, the
# first two also across two emulated hosts (each with a hostname of its own); and a PMI
# server that misbehaves.
#   test_mpirun.sh COLLIE TEST_COLL TEST_PMI_LATE [PEERS]
# PEERS: scripts/peers_env.sh's folder (mpich/, ompi5/, impi/); those it lacks are skipped.
collie=$1 coll=$2 late=$3 peers=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
command -v mpirun >/dev/null || { echo "SKIPPED: no mpirun (scripts/deps.sh --test)"; exit 77; }
export COLLIE_TEST_MAX_COUNT=4096 COLLIE_TIMEOUT=30
for v in $(env | grep -Eo '^(COLLIE_[A-Z_]+|MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE)='); do
    [ "${v%=}" = COLLIE_TIMEOUT ] || [ "${v%=}" = COLLIE_TEST_MAX_COUNT ] || unset "${v%=}"
done
mpich=$peers/mpich/bin/mpiexec ompi5=$peers/ompi5/bin/mpirun impi=$peers/impi/bin/mpiexec
limit=$(test_time 120)

# launchers NAME: the command line that starts N ranks of PROG on this host
run_local() { # run_local NAME N PROG ARGS...
    local name=$1 n=$2; shift 2
    case $name in
    openmpi) timeout "$limit" mpirun --allow-run-as-root --oversubscribe -np "$n" "$@" ;;
    mpich) timeout "$limit" "$mpich" -np "$n" "$@" ;;
    ompi5) timeout "$limit" "$ompi5" --allow-run-as-root --oversubscribe -np "$n" "$@" ;;
    impi) I_MPI_ROOT=$peers/impi timeout "$limit" "$impi" -n "$n" "$@" ;;
    esac
}
names="openmpi"
[ -x "$mpich" ] && names+=" mpich" || echo "skipped: MPICH's mpiexec (no $mpich)"
[ -x "$ompi5" ] && names+=" ompi5" || echo "skipped: Open MPI 5's mpirun (no $ompi5)"
[ -x "$impi" ] && names+=" impi" || echo "skipped: Intel MPI's mpiexec (no $impi)"

for name in $names; do
    expect_status 0 run_local "$name" 3 "$coll" allreduce
    expect_output "allreduce on 3 ranks: [0-9]+ cases, 0 failures"
    printf '%s\n' "$out" | grep -q "WARN" && fail "$name: warnings: $out"
    expect_status 0 run_local "$name" 2 "$coll" reduce_scatter
    expect_output "reduce_scatter on 2 ranks: [0-9]+ cases, 0 failures"
    expect_status 0 run_local "$name" 2 "$collie" info
    case $name in
    mpich | impi) expect_output "launcher: +MPICH; rendezvous: the launcher's PMI-1 key-value store" ;;
    *) expect_output "launcher: +Open MPI; rendezvous: the launcher's PMIx key-value store" ;;
    esac
    echo "$name, one host: ok"
done

# Across two emulated hosts: the launcher reaches the second through an ssh stand-in
# that gives each host its own hostname, as real machines have.
(
    . "$here/netns.sh"
    netns_up 2
    rsh="$(mktemp -d)/rsh"
    trap 'rm -rf "$(dirname "$rsh")"; netns_down' EXIT
    cat > "$rsh" <<EOF
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
h=\$((\${host##*.} - 1))
exec ip netns exec "$netns_prefix-\$h" unshare --uts sh -c "hostname host\$h; \$*"
EOF
    chmod +x "$rsh"
    hosts="$(netns_addr 0):2,$(netns_addr 1):2"
    on_host0() { netns_exec 0 unshare --uts sh -c 'hostname host0; exec "$@"' sh timeout "$limit" "$@"; }
    for name in $names; do
        case $name in
        openmpi) launch=(mpirun --allow-run-as-root --oversubscribe --mca plm_rsh_agent "$rsh" -H "$hosts") ;;
        mpich) launch=("$mpich" -launcher ssh -launcher-exec "$rsh" -hosts "$hosts") ;;
        ompi5 | impi) continue ;; # checked on one host above
        esac
        expect_status 0 on_host0 "${launch[@]}" -np 4 "$coll" allreduce
        expect_output "allreduce on 4 ranks: [0-9]+ cases, 0 failures"
        expect_status 0 on_host0 "${launch[@]}" -np 4 "$collie" info
        expect_output "job: +4 rank\(s\) on 2 host\(s\)"
        echo "$name, two hosts: ok"
    done
) || exit $?

# A PMI-1 server that never answers, has no key, or holds another program's value:
# each ends at once (or at COLLIE_TIMEOUT) with an error naming the launcher and the fault.
python=$(command -v python3)
expect_status 1 env COLLIE_TIMEOUT=2 timeout "$limit" "$python" "$here/pmi1_server.py" silent "$coll" allreduce
expect_output "COLLIE_ERR_TIMEOUT: rendezvous through PMI-1 \(launcher: MPICH\): the launcher's PMI-1 server did not answer within COLLIE_TIMEOUT=2 s"
expect_status 1 timeout "$limit" "$python" "$here/pmi1_server.py" nokey "$coll" allreduce
expect_output "rank 0 of this job published no collie.rendezvous key through PMI-1"
expect_status 1 timeout "$limit" "$python" "$here/pmi1_server.py" garbage "$coll" allreduce
expect_output "COLLIE_ERR_MISMATCH: .*rank 0 published 'hello' under collie.rendezvous, not 'collie1,HOST,PORT,TOKEN'"
# A server that answers after COLLIE_TIMEOUT: rank 0 fails at the timeout, and what its
# rendezvous thread opens once the answer comes is closed (tests/test_pmi_late.c).
expect_status 0 env COLLIE_TIMEOUT=1 timeout "$limit" "$python" "$here/pmi1_server.py" late "$late"
expect_output "pmi late: ok"
# Explicit variables win over the launcher's store: a wrong COLLIE_ADDR is not overridden.
expect_status 1 env COLLIE_ADDR=nowhere timeout "$limit" "$python" "$here/pmi1_server.py" silent "$coll" allreduce
expect_output "COLLIE_ADDR='nowhere' is not host:port"
echo "a PMI server that misbehaves: ok"
echo "mpirun: ok"
