#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie under a real Slurm cluster (tests/slurm.sh: munge, slurmctld, two slurmd on
# emulated hosts), with no collie variable and no MASTER_*: srun with each --mpi
# (none, pmi2, pmix), sbatch, a task SIGKILLed, a step cancelled, two jobs at once,
# a taken port, and a PyTorch program.
#   test_slurm.sh COLLIE TEST_COLL FAULT_WORKER [PYTHON...]
# PYTHON: interpreters with torch to run dist.init_process_group("collie") with
# (skipped where one lacks torch).
collie=$1 coll=$2 worker=$3
shift 3
pythons=("$@")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/slurm.sh"
slurm_up 2
export COLLIE_TEST_MAX_COUNT=4096 COLLIE_TIMEOUT=30
unset COLLIE_ADDR MASTER_ADDR MASTER_PORT RANK WORLD_SIZE

srun_ok() { # srun_ok WHAT SRUN-ARGS...: the step succeeds within its bound; its output in $out
    local what=$1; shift
    out=$(slurm_login timeout "$(test_time 120)" srun "$@" 2>&1) || { slurm_logs; fail "$what: $out"; }
}

# Every --mpi this Slurm has, across the two nodes, with nothing set.
mpis="none pmi2"
slurm_login srun --mpi=list 2>&1 | grep -q pmix && mpis+=" pmix"
for mpi in $mpis; do
    srun_ok "srun --mpi=$mpi" -N 2 -n 4 --mpi="$mpi" "$coll" allreduce
    expect_output "allreduce on 4 ranks: [0-9]+ cases, 0 failures"
    srun_ok "srun --mpi=$mpi alltoall" -N 2 -n 3 --mpi="$mpi" "$coll" alltoall
    expect_output "alltoall on 3 ranks: [0-9]+ cases, 0 failures"
    srun_ok "collie info under srun --mpi=$mpi" -N 2 -n 3 --mpi="$mpi" "$collie" info
    expect_output "job: +3 rank\(s\) on 2 host\(s\)"
    case $mpi in
    none) expect_output "launcher: +Slurm; rendezvous: Slurm's step" ;;
    pmi2) expect_output "launcher: +Slurm; rendezvous: the launcher's PMI-2 key-value store" ;;
    pmix) expect_output "launcher: +Slurm; rendezvous: the launcher's PMIx key-value store" ;;
    esac
done
echo "srun --mpi=${mpis// /,}: ok"

# sbatch: a batch script whose srun runs the program; its output file says it passed.
cat > "$slurm_dir/job.sh" <<EOF
#!/bin/bash
#SBATCH -N 2 -n 4 -o $slurm_dir/job.out
srun --mpi=pmi2 $coll broadcast
EOF
out=$(slurm_login sbatch --parsable "$slurm_dir/job.sh" 2>&1) || fail "sbatch: $out"
slurm_wait_idle
grep -Eq "broadcast on 4 ranks: [0-9]+ cases, 0 failures" "$slurm_dir/job.out" ||
    { slurm_logs; fail "sbatch: $(cat "$slurm_dir/job.out")"; }
echo "sbatch: ok"

# Two jobs on the same nodes at once, each through its own store: neither joins the other.
for mpi in pmi2 none; do
    (srun_ok "first of two" -N 2 -n 2 --mpi=$mpi "$coll" allreduce; echo "$out") > "$slurm_dir/a" 2>&1 &
    a=$!
    srun_ok "second of two" -N 2 -n 2 --mpi=$mpi "$coll" allreduce
    wait "$a" || fail "first of two jobs (--mpi=$mpi): $(cat "$slurm_dir/a")"
    expect_output "allreduce on 2 ranks: [0-9]+ cases, 0 failures"
    grep -Eq "allreduce on 2 ranks: [0-9]+ cases, 0 failures" "$slurm_dir/a" || fail "$(cat "$slurm_dir/a")"
done
echo "two jobs at once: ok"

# A worker that runs until it is stopped: OPS collectives, each checked.
workers_ready() { [ "$(grep -c ready "$log")" = 4 ]; }
# The workers on this cluster's nodes, oldest first: other tests may run their own.
workers() {
    local pids
    pids=$(for h in 1 2; do ip netns pids "$netns_prefix-$h"; done 2>/dev/null | paste -sd,)
    [ -z "$pids" ] ||
        ps -o pid=,comm= --sort=start_time -p "$pids" | awk -v w="$(basename "$worker")" '$2 == w { print $1 }'
}
no_workers() { [ -z "$(workers)" ]; }
start_worker() { # start_worker SRUN-ARGS...: the step in the background, $step_pid, $log
    log="$slurm_dir/worker.log"
    slurm_login srun -N 2 -n 4 --mpi=pmi2 -K0 "$@" "$worker" 1000000 7 >"$log" 2>&1 &
    step_pid=$!
    slurm_until 60 workers_ready || { cat "$log"; slurm_logs; fail "the workers did not start"; }
}
step_ends() { # step_ends: srun returns within COLLIE_TIMEOUT and more; nothing is left
    local t=0 limit
    limit=$(( $(test_time 60) * 10 ))
    while kill -0 "$step_pid" 2>/dev/null; do
        t=$((t + 1))
        [ "$t" -lt "$limit" ] || { cat "$log"; slurm_logs; fail "the step did not end"; }
        sleep 0.1
    done
    wait "$step_pid" && fail "srun succeeded after a task was killed: $(cat "$log")"
    slurm_wait_idle
    slurm_until 10 no_workers || fail "workers left behind: $(workers)"
}

# A task SIGKILLed: srun does not stop the others (-K0), collie does, naming the loss.
start_worker
kill -KILL "$(workers | tail -1)"
step_ends
[ "$(grep -c "error COLLIE_ERR_PEER_LOST" "$log")" = 3 ] ||
    fail "a task SIGKILLed: the 3 others should end with PEER_LOST: $(cat "$log")"
echo "srun, a task SIGKILLed: ok"

# The step cancelled: every task ends, nothing is left.
start_worker
slurm_login scancel "$(slurm_login squeue -h -o %i | head -1).0"
step_ends
echo "scancel of a step: ok"

# --mpi=none, and the port of the next job taken on its first node: a clear error.
next=$(( $(slurm_login sbatch --parsable --hold --wrap true) + 1 ))
slurm_login scancel "$((next - 1))"
port=$((10000 + (16 * next) % 20000))
slurm_on 1 node1 python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('', $port)); s.listen(); time.sleep(60)" &
squatter=$!
slurm_until 10 slurm_on 1 node1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
out=$(COLLIE_TIMEOUT=3 slurm_login srun -N 2 -n 2 --mpi=none "$coll" allreduce 2>&1) &&
    fail "srun --mpi=none ran on a taken port: $out"
kill "$squatter"
expect_output "Slurm step $next.0 without PMI: rank 0 listens on the port derived from the job and step ids, and cannot listen on node1:$port: Address already in use; run with srun --mpi=pmi2"
slurm_wait_idle
echo "srun --mpi=none, a port taken: ok"

# PyTorch: dist.init_process_group("collie") with no MASTER_ADDR, RANK or WORLD_SIZE.
for python in "${pythons[@]}"; do
    [ -x "$python" ] && "$python" -c "import torch, numpy" 2>/dev/null ||
        { echo "skipped: $python has no torch"; continue; }
    srun_ok "torch ($python)" -N 2 -n 2 --mpi=pmi2 env COLLIE_LIBRARY="$(dirname "$collie")/libcollie.so" \
        "$python" "$here/python/test_torch.py" ddp
    expect_output "ddp: ok on rank 0 of 2"
    echo "torch under srun ($python): ok"
done
echo "slurm: ok"
