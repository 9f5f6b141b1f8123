#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a Python test under a launcher, with Debian's python3 (which has torch)
# and the library of this build; exits 77 (skipped) where /usr/bin/python3
# lacks torch or numpy (scripts/deps.sh --test installs them).
#   run.sh COLLIE LIBCOLLIE N SCRIPT ARGS...           under `collie run -n N`
#   run.sh COLLIE LIBCOLLIE torchrun:N SCRIPT ARGS...  under torchrun (--standalone)
#   run.sh COLLIE LIBCOLLIE killed:N SCRIPT ARGS...    under `collie run -n N`; the last
#          rank must die of SIGKILL (the test kills it) and the others succeed
collie=$1 lib=$2 how=$3
shift 3
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null ||
    { echo "skipped: /usr/bin/python3 has no torch or numpy (apt-get install python3-torch)"; exit 77; }
export COLLIE_LIBRARY=$lib
case $how in
torchrun:*)
    # --redirects/--tee name a local rank the job does not have: Debian's torch 1.13 on
    # Python 3.11 fails at start on their defaults (Std.from_str("0") gives None).
    exec /usr/bin/python3 -m torch.distributed.run --standalone --nproc_per_node "${how#*:}" \
        --redirects 9:1 --tee 9:1 "$@" ;;
killed:*)
    n=${how#*:}
    exec "$collie" run -n "$n" sh -c '
        /usr/bin/python3 "$@"; st=$?
        if [ "$COLLIE_RANK" = '$((n - 1))' ]; then
            [ $st = 137 ] || { echo "rank $COLLIE_RANK: status $st, not SIGKILL" >&2; exit 1; }
        else exit $st; fi' sh "$@" ;;
*)
    exec "$collie" run -n "$how" /usr/bin/python3 "$@" ;;
esac
