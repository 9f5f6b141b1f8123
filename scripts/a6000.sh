#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The A6000 study's sweep on collie and Gloo (examples/a6000.py): ranks 1, 2, 4
# on this host, batch sizes and classifier widths as given; one JSON line per
# configuration in FILE.  Needs python3-torch, python3-torchvision, dataset-fashion-mnist.
#   bash scripts/a6000.sh [--json FILE] [a6000 options...]
#   e.g. bash scripts/a6000.sh --json a6000.jsonl --batch-sizes 32,64,128 --hidden 4096,2048,1024
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
collie=${COLLIE:-$root/build/collie}
[ -x "$collie" ] || { echo "a6000: build collie first (bash scripts/demo.sh)" >&2; exit 1; }
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
export COLLIE_LIBRARY=${COLLIE_LIBRARY:-$root/build/libcollie.so}
for n in ${RANKS:-1 2 4}; do
    "$collie" run -n "$n" /usr/bin/python3 "$root/examples/a6000.py" "$@"
done
