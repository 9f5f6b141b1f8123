# SPDX-License-Identifier: BSD-3-Clause
# slurm.sh - a real Slurm cluster for the tests, from Debian's packages: munge,
# one slurmctld and K slurmd, each on an emulated host of netns.sh with a
# hostname of its own (so collie tells the nodes apart and joins them by TCP).
# Host 0 is the login node: slurmctld runs there, and so do srun and sbatch.
# Source it, then:
#   slurm_up K            nodes node1..nodeK (4 CPUs each) in partition "debug";
#                         exits 77 (skipped) where namespaces cannot be made
#   slurm_login CMD...    runs CMD on the login node, with SLURM_CONF set
#   slurm_wait_idle       waits (bounded) until no job is left in the queue
#   slurm_down            stops every daemon, deletes the hosts (also on EXIT)
# Files live in $slurm_dir; the daemons' logs are printed when a test fails.  Nothing is
# written outside it: each host sees $slurm_dir/hosts as its /etc/hosts.
. "$(dirname "${BASH_SOURCE[0]}")/netns.sh"

slurm_dir=""
slurm_munged_pid=""

slurm_down() {
    [ -z "${SLURM_KEEP:-}" ] || return 0
    local h
    [ -z "$slurm_munged_pid" ] || kill "$slurm_munged_pid" 2>/dev/null
    slurm_munged_pid=""
    netns_down
    [ -z "$slurm_dir" ] || rm -rf "$slurm_dir"
    slurm_dir=""
}

slurm_logs() {
    local f
    for f in "$slurm_dir"/*.log; do
        [ -e "$f" ] || continue
        echo "---- $f (last lines)" >&2
        tail -n 15 "$f" >&2
    done
}

# slurm_on H NAME CMD...: CMD on host H, named NAME, where every host resolves every other
# by name.  Not `ip netns exec`, whose fresh /sys has no cgroups, which slurmd needs.
slurm_on() {
    local ns="/run/netns/$netns_prefix-$1" name=$2; shift 2
    nsenter --net="$ns" unshare --uts --mount sh -c \
        'mount --bind "$0" /etc/hosts && hostname "$1" && shift && exec "$@"' \
        "$slurm_dir/hosts" "$name" "$@"
}

slurm_login() {
    SLURM_CONF="$slurm_dir/slurm.conf" slurm_on 0 login "$@"
}

# Waits until CMD succeeds, up to SECONDS (lib.sh's test_time).
slurm_until() {
    local limit t=0
    limit=$(( $(test_time "$1") * 10 )); shift
    until "$@" >/dev/null 2>&1; do
        t=$((t + 1))
        [ "$t" -lt "$limit" ] || return 1
        sleep 0.1
    done
}

slurm_nodes_idle() {
    [ "$(slurm_login sinfo -h -o %t | sort -u | tr -d '\n')" = idle ]
}

slurm_queue_empty() {
    [ -z "$(slurm_login squeue -h -o %i)" ]
}

slurm_wait_idle() {
    slurm_until 30 slurm_queue_empty || { slurm_logs; echo "Slurm: jobs left in the queue" >&2; return 1; }
}

slurm_up() {
    local k=$1 h names="" ns
    for tool in munged slurmctld slurmd srun sbatch; do
        command -v "$tool" >/dev/null || netns_skip "Slurm's $tool is not installed (scripts/deps.sh --test)"
    done
    netns_up $((k + 1))
    trap slurm_down EXIT
    slurm_dir=$(mktemp -d /tmp/collie-slurm.XXXXXX)
    chmod 755 "$slurm_dir"
    {
        echo "127.0.0.1 localhost"
        echo "$(netns_addr 0) login"
        for h in $(seq 1 "$k"); do echo "$(netns_addr "$h") node$h"; done
    } > "$slurm_dir/hosts"
    cp /etc/munge/munge.key "$slurm_dir/munge.key" 2>/dev/null ||
        dd if=/dev/urandom of="$slurm_dir/munge.key" bs=128 count=1 status=none
    chmod 600 "$slurm_dir/munge.key"
    munged --force --foreground --socket="$slurm_dir/munge.sock" --key-file="$slurm_dir/munge.key" \
        --pid-file="$slurm_dir/munged.pid" --log-file="$slurm_dir/munged.log" \
        --seed-file="$slurm_dir/munge.seed" &
    slurm_munged_pid=$!
    slurm_until 10 test -S "$slurm_dir/munge.sock" || { slurm_logs; fail "munged did not start"; }
    local nodes=""
    for h in $(seq 1 "$k"); do nodes+="NodeName=node$h NodeAddr=$(netns_addr "$h") CPUs=4"$'\n'; done
    cat > "$slurm_dir/slurm.conf" <<EOF
ClusterName=collie
SlurmctldHost=login($(netns_addr 0))
AuthType=auth/munge
AuthInfo=socket=$slurm_dir/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$slurm_dir/state
SlurmdSpoolDir=$slurm_dir/spool-%n
SlurmctldPidFile=$slurm_dir/slurmctld.pid
SlurmdPidFile=$slurm_dir/slurmd-%n.pid
SlurmctldLogFile=$slurm_dir/slurmctld.log
SlurmdLogFile=$slurm_dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=2
MessageTimeout=10
${nodes}PartitionName=debug Nodes=node[1-$k] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
    mkdir -p "$slurm_dir/state"
    slurm_on 0 login slurmctld -D -i -f "$slurm_dir/slurm.conf" >>"$slurm_dir/slurmctld.out" 2>&1 &
    for h in $(seq 1 "$k"); do
        # A configuration directory each: srun --mpi=pmix's directory under
        # PMIxCliTmpDirBase (mpi.conf, beside slurm.conf) is per job, not per node.
        mkdir -p "$slurm_dir/spool-node$h" "$slurm_dir/node$h/pmix"
        cp "$slurm_dir/slurm.conf" "$slurm_dir/node$h/slurm.conf"
        echo "PMIxCliTmpDirBase=$slurm_dir/node$h/pmix" > "$slurm_dir/node$h/mpi.conf"
        slurm_on "$h" "node$h" slurmd -D -N "node$h" -f "$slurm_dir/node$h/slurm.conf" \
            >>"$slurm_dir/slurmd-node$h.out" 2>&1 &
    done
    slurm_until 60 slurm_nodes_idle || { slurm_logs; fail "the Slurm cluster did not come up"; }
}
