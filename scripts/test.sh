#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Quick start, part two: installs what the build needs, builds and runs the tests.
#   test.sh           the gate, what CI runs (.ci/run): every test but the perf tier
#                     (the Python ones on Debian's torch 1.13 and on the newest torch
#                     2.x, scripts/torch_env.sh), in five builds: release with -Werror; AddressSanitizer +
#                     UndefinedBehaviorSanitizer; ThreadSanitizer (the tests whose
#                     processes run threads); without the training workloads
#                     (COLLIE_BUILD_TRAIN=OFF: the library and tools need neither
#                     OpenBLAS nor zlib); the libFuzzer harnesses (clang), each fuzzed
#                     for COLLIE_FUZZ_SECONDS (10)
#   test.sh --quick   the quick tier alone: a release build and `ctest -L quick`, a
#                     correctness test of every area in a few minutes (before each commit)
#   test.sh --perf    the perf tier alone: the tests that measure rates (outside the gate)
# Tests run as many at a time as there are cores, except those that tests/CMakeLists.txt
# declares alone (RUN_SERIAL).  Each section prints its time.
set -euo pipefail
cd "$(dirname "$0")/.."
tier=gate
case "${1:-}" in
"") ;;
--quick) tier=quick ;;
--perf) tier=perf ;;
*) echo "usage: scripts/test.sh [--quick | --perf]" >&2; exit 2 ;;
esac
bash scripts/deps.sh --test   # the MPI baseline, plots, emulated hosts, clang-format
# The newest torch 2.x beside Debian's 1.13: the Python suite runs on both (torch2.*).
# Made once (about 90 s, 5.5 GB) in ~/.cache/collie, outside the clone, then reused.
torch2=$(bash scripts/torch_env.sh)
# Intel MPI, MPICH and Open MPI 5 from the package index: CMake builds collie bench's
# baselines with them, and the bench test checks each (about 20 s once, then reused).
bash scripts/peers_env.sh
jobs=$(nproc)
start=$(date +%s)
section_start=""
section() { # section TITLE: ends the last section (its time), starts the next
    local now
    now=$(date +%s)
    [ -z "$section_start" ] || echo "   ($(( now - section_start )) s)"
    section_start=$now
    [ -z "$1" ] || echo "== $1"
}

section "release build (-Werror)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCOLLIE_WERROR=ON -DCOLLIE_TORCH2_PYTHON="$torch2" >/dev/null
cmake --build build -j"$jobs" >/dev/null
if [ "$tier" != gate ]; then
    (cd build && ctest -j"$jobs" --output-on-failure -L "$tier")
    section ""
    echo "== the $tier tier passed in $(( $(date +%s) - start )) s"
    exit 0
fi
(cd build && ctest -j"$jobs" --output-on-failure -LE perf)

section "AddressSanitizer + UndefinedBehaviorSanitizer build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLIE_SANITIZE=ON -DCOLLIE_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
# The sanitizers make memory traffic several times slower: the largest counts
# (1M and 16M elements) run in the release build above, the rest here.
(cd build-asan && COLLIE_TEST_MAX_COUNT=65537 ctest -j"$jobs" --output-on-failure -LE perf)

section "ThreadSanitizer build: the tests whose processes run several threads"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLIE_TSAN=ON -DCOLLIE_WERROR=ON \
    -DCOLLIE_BUILD_TRAIN=OFF >/dev/null
cmake --build build-tsan -j"$jobs" >/dev/null
# Every test of the asynchronous core (lanes, abort from a second thread, split,
# fusion, the non-blocking form of every collective and of the error-feedback
# allreduce, non-blocking neighbour
# averaging), of the windows (a thread each) and of encrypted links (the two
# directions of a link on two threads), at the sanitizers' sizes.
(cd build-tsan && COLLIE_TEST_MAX_COUNT=65537 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest -j"$jobs" --output-on-failure -LE perf \
    -R '^(async\.|ef\.[0-9]|hosts\.async$|encrypt\.hosts\.async$|seal$|neighbor\.dynamic\.|window\.)')

section "build without the training workloads (COLLIE_BUILD_TRAIN=OFF)"
cmake -S . -B build-notrain -DCMAKE_BUILD_TYPE=Release -DCOLLIE_WERROR=ON -DCOLLIE_BUILD_TRAIN=OFF >/dev/null
cmake --build build-notrain -j"$jobs" >/dev/null
# Its library and tools are the release build's, less collie-train: the tests
# that tell them apart (what the build holds, what it links, installs) run here.
(cd build-notrain && ctest --output-on-failure -R '^(info|lean|install|launcher|unit\.reduce|errors\.badargs\.2|coll\.allreduce\.2)$')
[ ! -e build-notrain/collie-train ] || { echo "COLLIE_BUILD_TRAIN=OFF built collie-train"; exit 1; }

# The seed is fixed (fuzz/run.sh): CI tries the same inputs as a run here, and a
# fresh random campaign (COLLIE_FUZZ_SEED=0) is a developer's job, not the gate's.
section "libFuzzer (clang): every parser of bytes from a peer or a user, ${COLLIE_FUZZ_SECONDS:-10} s each, seed 1"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLIE_FUZZ=ON -DCOLLIE_WERROR=ON \
    -DCOLLIE_BUILD_TESTS=OFF -DCOLLIE_BUILD_EXAMPLES=OFF -DCOLLIE_BUILD_TRAIN=OFF \
    -DCOLLIE_FUZZ_SECONDS="${COLLIE_FUZZ_SECONDS:-10}" >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_harnesses >/dev/null
# A failing input is left in build-fuzz/fuzz-out/artifacts; each harness's figures follow.
rm -f build-fuzz/fuzz-out/summary.txt
(cd build-fuzz && ctest -j"$jobs" --output-on-failure -R '^fuzz\.')
cat build-fuzz/fuzz-out/summary.txt
section ""

echo "== all builds passed in $(( $(date +%s) - start )) s"
