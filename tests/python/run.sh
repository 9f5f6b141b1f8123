#!/bin/bash
# Runs a Python test under `collie run`, with Debian's python3 (which has
# torch) and the library of this build; exits 77 (skipped) where
# /usr/bin/python3 lacks torch or numpy (scripts/deps.sh --test installs them).
#   run.sh COLLIE LIBCOLLIE RANKS SCRIPT ARGS...
collie=$1 lib=$2 n=$3
shift 3
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null ||
    { echo "skipped: /usr/bin/python3 has no torch or numpy (apt-get install python3-torch)"; exit 77; }
COLLIE_LIBRARY=$lib exec "$collie" run -n "$n" /usr/bin/python3 "$@"
