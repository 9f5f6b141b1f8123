#!/bin/bash
# A rank SIGKILLed mid-job: the others return PEER_LOST (no hang) and nothing is
# left in /dev/shm.  The killed rank runs under a shell that reports 0 when it
# died by SIGKILL, so that collie run does not stop the others first.
collie=$1 prog=$2
. "$(dirname "$0")/lib.sh"
before=$(ls -A /dev/shm | sort)
expect_status 0 env COLLIE_TIMEOUT=60 "$collie" run -n 4 sh -c '
    "$0" sigkill; st=$?
    if [ "$COLLIE_RANK" = 1 ]; then [ $st = 137 ]; else exit $st; fi' "$prog"
expect_output "sigkill: ok on 4 ranks"
after=$(ls -A /dev/shm | sort)
[ "$before" = "$after" ] || fail "/dev/shm changed: before [$before] after [$after]"
echo "sigkill: ok"
