#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Kept host segments (shm_keep.c): test_keep.c checks every element on
# communicators made again of the same ranks; here the shared-memory INFO
# line of each says whether its segment was new or kept, and the counts must
# be what the keep's rule gives:
#   dup,     N ranks, C cycles: the job and the first split new, then every split kept;
#   reorder, COLLIE_SHM_KEEP=2: the first of each order new, then each kept;
#   reorder, COLLIE_SHM_KEEP=1: the other order took the only place: all new;
#   dup,     COLLIE_SHM_KEEP=0: all new.
# Dup runs twice: with the default algorithms (a large allreduce through the
# slots) and with the ring allreduce and the pairwise alltoall (through the
# collectives' rings).
#   test_keep.sh COLLIE TEST_KEEP RANKS      (RANKS 2 also tries COLLIE_SHM_KEEP 1 and 0)
collie=$1 test_keep=$2 n=$3
. "$(dirname "$0")/lib.sh"
export COLLIE_TIMEOUT=60
cycles=6

# run N KEEP MODE WANT_NEW WANT_KEPT [ALGO]: segments opened new and kept, over all ranks
run() {
    local n=$1 keep=$2 mode=$3 want_new=$4 want_kept=$5
    expect_status 0 env COLLIE_DEBUG=INFO COLLIE_SHM_KEEP="$keep" COLLIE_ALGO="${6:-}" \
        "$collie" run -n "$n" "$test_keep" "$mode" $cycles
    [ "$(printf '%s\n' "$out" | grep -c ": $cycles cycles checked$")" = "$n" ] ||
        fail "$mode on $n ranks, COLLIE_SHM_KEEP=$keep: not every rank checked every cycle: $out"
    local new kept
    new=$(printf '%s\n' "$out" | grep -c "segment [0-9]* bytes (new)")
    kept=$(printf '%s\n' "$out" | grep -c "segment [0-9]* bytes (kept from a finalized communicator)")
    [ "$new $kept" = "$want_new $want_kept" ] ||
        fail "$mode on $n ranks, COLLIE_SHM_KEEP=$keep: $new segments new and $kept kept, want $want_new and $want_kept: $out"
}

run "$n" 2 dup $((2 * n)) $(((cycles - 1) * n))
run "$n" 2 dup $((2 * n)) $(((cycles - 1) * n)) allreduce:ring,alltoall:pairwise
run "$n" 2 reorder $((3 * n)) $(((cycles - 2) * n))
if [ "$n" = 2 ]; then
    run 2 1 reorder $(((cycles + 1) * 2)) 0
    run 2 0 dup $(((cycles + 1) * 2)) 0
fi
echo "keep.$n: ok"
