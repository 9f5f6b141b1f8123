#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A rank SIGKILLed mid-job: the others return PEER_LOST (no hang) and nothing is
# left in /dev/shm.  The killed rank runs under a shell that reports 0 when it
# died by SIGKILL, so that collie run does not stop the others first.
#   test_sigkill.sh COLLIE TEST_ERRORS [SCENARIO [RANKS]]   (sigkill on 4 ranks)
collie=$1 prog=$2 scenario=${3:-sigkill} ranks=${4:-4}
. "$(dirname "$0")/lib.sh"
before=$(ls -A /dev/shm | sort)
expect_status 0 env COLLIE_TIMEOUT=60 "$collie" run -n "$ranks" sh -c '
    "$0" "$1"; st=$?
    if [ "$COLLIE_RANK" = 1 ]; then [ $st = 137 ]; else exit $st; fi' "$prog" "$scenario"
expect_output "$scenario: ok on $ranks ranks"
after=$(ls -A /dev/shm | sort)
[ "$before" = "$after" ] || fail "/dev/shm changed: before [$before] after [$after]"
echo "$scenario: ok"
