#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie_init understands the variables of torchrun, Open MPI, MPICH and Slurm:
# start 3 ranks by hand with each launcher's variables and run real collectives.
# (tests/test_mpirun.sh and test_slurm.sh start them with the launchers themselves.)
collie=$1 prog=$2 port_prog=$3
. "$(dirname "$0")/lib.sh"
n=3
launch() { # launch STYLE: starts n ranks with STYLE's variables, waits, fails on any error
    local style=$1 port pids=() r
    port=$("$port_prog")
    for r in $(seq 0 $((n - 1))); do
        case $style in
        torchrun) env RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n \
                      MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$prog" allreduce & ;;
        openmpi)  env OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$n OMPI_COMM_WORLD_LOCAL_RANK=$r \
                      OMPI_COMM_WORLD_LOCAL_SIZE=$n COLLIE_ADDR=127.0.0.1:$port "$prog" allreduce & ;;
        openmpi5) env OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$n \
                      OMPI_COMM_WORLD_LOCAL_RANK=$(( (n - r) % n )) OMPI_COMM_WORLD_LOCAL_SIZE=$n \
                      COLLIE_ADDR=127.0.0.1:$port "$prog" allreduce & ;;
        mpich)    env PMI_RANK=$r PMI_SIZE=$n COLLIE_ADDR=127.0.0.1:$port "$prog" allreduce & ;;
        slurm)    env SLURM_PROCID=$r SLURM_NTASKS=$n SLURM_LOCALID=$r \
                      MASTER_ADDR=localhost MASTER_PORT=$port "$prog" allreduce & ;;
        esac
        pids+=($!)
    done
    for r in "${pids[@]}"; do wait "$r" || fail "$style: a rank failed"; done
}
export COLLIE_TEST_MAX_COUNT=1000 COLLIE_TIMEOUT=60
for style in torchrun openmpi openmpi5 mpich slurm; do
    out=$(launch $style 2>&1) || fail "$out"
    expect_output "allreduce on 3 ranks: [0-9]+ cases, 0 failures"
    # Open MPI 5 numbers a host's ranks in another order than collie: no cause to warn
    printf '%s\n' "$out" | grep -q "says local rank" && fail "$style: $out"
done

# no address for a multi-rank job: a clear error, not a hang
expect_status 1 env RANK=0 WORLD_SIZE=2 "$prog" allreduce
expect_output "no rendezvous address .*COLLIE_ADDR"
expect_status 1 env COLLIE_RANK=5 COLLIE_SIZE=2 COLLIE_ADDR=127.0.0.1:1 "$prog" allreduce
expect_output "need 0 <= rank < size"
expect_status 1 env COLLIE_RANK=0 COLLIE_SIZE=2 COLLIE_ADDR=nowhere "$prog" allreduce
expect_output "COLLIE_ADDR='nowhere' is not host:port"
# rank 1 alone: rank 0 never comes, so the connect gives up at COLLIE_TIMEOUT
expect_status 1 env COLLIE_RANK=1 COLLIE_SIZE=2 COLLIE_ADDR=127.0.0.1:$("$port_prog") COLLIE_TIMEOUT=1 "$prog" allreduce
expect_output "rank 0.s rendezvous: cannot reach .* before COLLIE_TIMEOUT"
echo "launch env: ok"
