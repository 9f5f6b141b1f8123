#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A rank SIGKILLed amid allreduces under the interposer: the job ends with an
# error well within the timeout, no rank is left running, and /dev/shm holds
# nothing of it.
#   test_kill.sh LIBCOLLIE_MPI TEST_MPI_INTERPOSE
lib=$1 prog=$2
here=$(dirname "$0")
. "$here/../lib.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
shm_before=$(ls /dev/shm | grep -c collie)
start=$(date +%s)
COLLIE_TIMEOUT=20 timeout 120 "$here/run.sh" "$lib" 3 "$prog" kill >/tmp/collie-mpi-kill.$$ 2>&1
st=$?
took=$(($(date +%s) - start))
out=$(cat /tmp/collie-mpi-kill.$$); rm -f /tmp/collie-mpi-kill.$$
[ $st != 0 ] || fail "the job exited 0 without its killed rank"
[ $st != 124 ] || fail "the job hung (killed by timeout after 120 s):
$out"
[ $took -le $((20 + $(test_time 10))) ] || fail "the job took $took s to end (COLLIE_TIMEOUT=20)"
sleep 1
pgrep -f "test_mpi_interpose kill" >/dev/null && fail "ranks are still running: $(pgrep -af 'test_mpi_interpose kill')"
shm_after=$(ls /dev/shm | grep -c collie)
[ "$shm_after" -le "$shm_before" ] || fail "/dev/shm kept $((shm_after - shm_before)) collie entries"
echo "kill: the job ended with status $st after $took s; $(printf '%s\n' "$out" | grep -m1 -E 'collie|killed|signal' || true)"
