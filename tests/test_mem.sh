#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie_mem_alloc's segments: peers copy from them through their own
# mappings (the INFO line at the end counts the bytes of each path), results
# stay exact while segments come and go (test_mem.c), and where single copies
# are off (COLLIE_CMA=0) the same program runs exact through the window.
#   test_mem.sh COLLIE TEST_MEM
collie=$1 test_mem=$2
. "$(dirname "$0")/lib.sh"
export COLLIE_TIMEOUT=60

for n in 2 3; do
    expect_status 0 env COLLIE_DEBUG=INFO COLLIE_ALGO=allgather:direct "$collie" run -n $n "$test_mem"
    expect_output "^mem on $n ranks: 30 rounds exact$"
    mapped=$(printf '%s\n' "$out" | grep -cE "single copies: [0-9]+ bytes through the kernel, [1-9][0-9]* through peers' collie_mem segments")
    [ "$mapped" = $n ] || fail "$n ranks, $mapped copied from peers' mapped segments: $out"
    # rounds of ordinary memory where a segment was go through the kernel
    kernel=$(printf '%s\n' "$out" | grep -cE "single copies: [1-9][0-9]* bytes through the kernel")
    [ "$kernel" = $n ] || fail "$n ranks, $kernel copied ordinary memory through the kernel: $out"
done
expect_status 0 env COLLIE_CMA=0 COLLIE_DEBUG=INFO "$collie" run -n 2 "$test_mem"
expect_output "^mem on 2 ranks: 30 rounds exact$"
printf '%s\n' "$out" | grep -qE "[1-9][0-9]* (bytes through the kernel|through peers' collie_mem)" &&
    fail "COLLIE_CMA=0: nothing is single-copied: $out"
echo "mem: ok"
