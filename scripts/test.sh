#!/bin/bash
# Quick start, part two: installs what the build needs, then builds and runs
# every test twice: a release build with -Werror, and a build with
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --bench   # the bench tests run the MPI baseline and draw plots
jobs=$(nproc)

echo "== release build (-Werror)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCOLLIE_WERROR=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null
(cd build && ctest --output-on-failure)

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLIE_SANITIZE=ON -DCOLLIE_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
# The sanitizers make memory traffic several times slower: the largest counts
# (1M and 16M elements) run in the release build above, the rest here.
(cd build-asan && COLLIE_TEST_MAX_COUNT=65537 ctest --output-on-failure)
