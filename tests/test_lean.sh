#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The measuring tool measures collie, nothing else: `collie` and libcollie link
# no BLAS and no zlib (collie-train does, as its own executable), and a
# `collie bench` rank runs no thread of its own and maps no BLAS library
# while it measures (the machine probe's two threads live for about 1 ms
# between sizes, never while an operation is timed).
collie=$1
. "$(dirname "$0")/lib.sh"
lib=$(dirname "$collie")/libcollie.so
for bin in "$collie" "$lib"; do
    deps=$(ldd "$bin" | grep -Ei 'blas|lapack|libz\.|gfortran|gomp' || true)
    [ -z "$deps" ] || fail "$bin links what only training needs: $deps"
done

# A long bench job; look at its ranks while they measure, then stop it.
# In a session of its own, so that the whole job (driver, collie run, ranks) stops together.
setsid "$collie" bench allreduce -n 2 -b 8 -e 8 --iters 100000000 --warmup 0 >/dev/null 2>&1 &
job=$!
trap 'kill -- -$job 2>/dev/null; wait $job 2>/dev/null' EXIT
ranks=()
for _ in $(seq 1 100); do
    ranks=()
    for pid in $(pgrep -s "$job" -f "bench allreduce" || true); do
        tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -q '^COLLIE_RANK=' && ranks+=("$pid")
    done
    [ ${#ranks[@]} = 2 ] && break
    sleep 0.1
done
[ ${#ranks[@]} = 2 ] || fail "could not find the 2 bench ranks (found ${#ranks[@]})"
sleep 0.3 # past collie_init: the ranks are measuring
for pid in "${ranks[@]}"; do
    threads=$(ls "/proc/$pid/task" | wc -l)
    [ "$threads" = 1 ] || fail "bench rank $pid runs $threads threads: $(cat /proc/$pid/task/*/comm | tr '\n' ' ')"
    blas=$(grep -Ei 'blas|lapack|gomp' "/proc/$pid/maps" | awk '{print $6}' | sort -u || true)
    [ -z "$blas" ] || fail "bench rank $pid maps $blas"
done
echo "lean: ok"
