#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a Python test under a launcher, with the library of this build, on the
# interpreter COLLIE_TEST_PYTHON names (default Debian's /usr/bin/python3, whose
# torch is 1.13; the torch2.* tests name scripts/torch_env.sh's); exits 77 (skipped)
# where that interpreter lacks torch or numpy.
#   run.sh COLLIE LIBCOLLIE N SCRIPT ARGS...           under `collie run -n N`
#   run.sh COLLIE LIBCOLLIE torchrun:N SCRIPT ARGS...  under torchrun (--standalone)
#   run.sh COLLIE LIBCOLLIE killed:N SCRIPT ARGS...    under `collie run -n N`; the last
#          rank must die of SIGKILL (the test kills it) and the others succeed
collie=$1 lib=$2 how=$3
shift 3
python=${COLLIE_TEST_PYTHON:-/usr/bin/python3}
[ -x "$python" ] ||
    { echo "skipped: no $python (bash scripts/torch_env.sh makes the torch 2.x one)"; exit 77; }
# Found, not imported: an import of torch 2.x takes 1.5-2 s of CPU, a test's worth.
"$python" -c "import importlib.util as u, sys; sys.exit(not (u.find_spec('torch') and u.find_spec('numpy')))" \
    2>/dev/null ||
    { echo "skipped: $python has no torch or numpy (apt-get install python3-torch)"; exit 77; }
export COLLIE_LIBRARY=$lib
case $how in
torchrun:*)
    # --redirects/--tee name a local rank the job does not have: Debian's torch 1.13 on
    # Python 3.11 fails at start on their defaults (Std.from_str("0") gives None).
    exec "$python" -m torch.distributed.run --standalone --nproc_per_node "${how#*:}" \
        --redirects 9:1 --tee 9:1 "$@" ;;
killed:*)
    n=${how#*:}
    exec "$collie" run -n "$n" sh -c '
        "$0" "$@"; st=$?
        if [ "$COLLIE_RANK" = '$((n - 1))' ]; then
            [ $st = 137 ] || { echo "rank $COLLIE_RANK: status $st, not SIGKILL" >&2; exit 1; }
        else exit $st; fi' "$python" "$@" ;;
*)
    exec "$collie" run -n "$how" "$python" "$@" ;;
esac
