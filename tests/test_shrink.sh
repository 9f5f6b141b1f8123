#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie_comm_shrink on real processes: test_shrink.sh COLLIE PROG N SCENARIO [VICTIMS...]
# runs PROG SCENARIO VICTIMS on N ranks under collie run.  A victim that dies
# by SIGKILL (its own, or the survivors' for a stopped one) reports 0, so that
# collie run lets the survivors go on; every survivor must pass its checks.
# Nothing may be left in /dev/shm.  SHRINK_HOSTS=K: the ranks on K "hosts"
# (COLLIE_HOST by rank modulo K), so that the survivors meet across TCP.
collie=$1 prog=$2 n=$3; shift 3
. "$(dirname "$0")/lib.sh"
before=$(ls -A /dev/shm | sort)
victims=" ${*:2} "
[ "$1" = during ] && victims=" $2 $3 " # its last number is milliseconds
expect_status 0 env VICTIMS="$victims" SHRINK_HOSTS="${SHRINK_HOSTS:-}" COLLIE_DEBUG=${COLLIE_DEBUG:-NONE} "$collie" run -n "$n" sh -c '
    [ -n "$SHRINK_HOSTS" ] && export COLLIE_HOST=h$((COLLIE_RANK % SHRINK_HOSTS))
    "$0" "$@"; st=$?
    case "$VICTIMS" in *" $COLLIE_RANK "*) [ $st = 137 ] ;; *) exit $st ;; esac' \
    "$prog" "$@"
expect_output "shrink $1: ok on [0-9]+ of $n ranks"
after=$(ls -A /dev/shm | sort)
[ "$before" = "$after" ] || fail "/dev/shm changed: before [$before] after [$after]"
echo "shrink $*: ok"
