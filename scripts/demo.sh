#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Quick start, part one: installs what the build needs, builds collie, and runs
# the first demonstration: 4 ranks on this host allreduce and say what they got.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "== collie info"
./build/collie info | sed -n '1,4p'
echo "== collie run -n 4 ./build/examples/allreduce_demo"
./build/collie run -n 4 ./build/examples/allreduce_demo
echo "== time per float32 allreduce on 4 ranks (collie run -n 4 ./build/examples/allreduce_loop)"
./build/collie run -n 4 ./build/examples/allreduce_loop
