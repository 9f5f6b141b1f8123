#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Absurd settings: each either fails init on every rank with a message that
# names the variable, or is shrugged off (clamped, or harmless) and the job
# computes exact results; none hangs (each job runs under a 60 s limit).
#   test_limits.sh COLLIE TEST_COLL
collie=$1 prog=$2
. "$(dirname "$0")/lib.sh"
export COLLIE_TEST_MAX_COUNT=70000
refused() { # refused VAR=VALUE: init fails, naming VAR
    expect_status 1 env "$1" timeout 60 "$collie" run -n 2 "$prog" allreduce
    expect_output "${1%%=*}='"
}
shrugged() { # shrugged VAR=VALUE: the job runs and every result is exact
    expect_status 0 env "$1" timeout 60 "$collie" run -n 3 "$prog" allreduce
    expect_output "allreduce on 3 ranks: [0-9]+ cases, 0 failures"
}
for v in COLLIE_TIMEOUT=0 COLLIE_TIMEOUT=-1 COLLIE_TIMEOUT=1e400 COLLIE_TIMEOUT=nan \
    COLLIE_SHM_SLOT=-1 COLLIE_SHM_SLOT=2T COLLIE_SHM_SLOT=1x COLLIE_NT_MIN=-5 \
    COLLIE_TCP_STREAMS=lots COLLIE_SPIN_US=1e9 COLLIE_DEBUG=LOUD; do
    refused "$v"
done
# a slot of 0 or 3 bytes is raised to a page; of 64 GiB, a sparse segment nobody touches;
# a ring of 0 or 1 TiB is clamped; negative waits mean the defaults
for v in COLLIE_SHM_SLOT=0 COLLIE_SHM_SLOT=3 COLLIE_SHM_SLOT=64G COLLIE_P2P_BUFFER=0 \
    COLLIE_P2P_BUFFER=1024G COLLIE_SPIN_US=-1 COLLIE_YIELD_US=-7 COLLIE_TCP_STREAMS=100000; do
    shrugged "$v"
done
# pieces of the pipelined steps: off (0), below an element (one element), beyond any message
for v in COLLIE_P2P_PIECE=-1 COLLIE_P2P_PIECE=1x; do
    refused "$v"
done
for v in COLLIE_P2P_PIECE=0 COLLIE_P2P_PIECE=3 COLLIE_P2P_PIECE=64G; do
    COLLIE_ALGO=allreduce:rabenseifner shrugged "$v"
done
# ranks of a host sized differently: init fails everywhere; the rank that finds it says so
# (at WARN, before the others learn that it failed) naming both sizes and the settings
expect_status 1 env COLLIE_DEBUG=WARN timeout 60 "$collie" run -n 2 sh -c \
    "[ \$COLLIE_RANK = 1 ] && export COLLIE_SHM_SLOT=64K; exec '$prog' allreduce"
expect_output "rank 0's shared segment has [1-9][0-9]* bytes, this rank expects [0-9]+: do all ranks use the same COLLIE_SHM_SLOT and COLLIE_P2P_BUFFER"
echo "limits: ok"
