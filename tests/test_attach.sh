#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Single-copy collectives (allreduce:direct, reduce:direct) and their
# fallback: where the kernel refuses cross-memory attach (a seccomp profile,
# tests/deny_cma.c) or COLLIE_CMA=0, every rank agrees to stage through
# shared memory, results stay exact, and forcing the algorithm is refused by
# name.
#   test_attach.sh COLLIE DENY_CMA TEST_COLL
collie=$1 deny=$2 test_coll=$3
. "$(dirname "$0")/lib.sh"
export COLLIE_TEST_MAX_COUNT=262144 COLLIE_TIMEOUT=30

# Where the kernel allows it (this machine), info says so and prices the single copies at
# the call and rate it measured at init (checked below).  Those move direct's crossovers
# by 10x between machines (a call of 0.4-2.4 us, a copy of 2-31 GB/s), so the choices are
# checked at the built-in rates: with a description, the model runs on 2 ranks a
# broadcast's adaptive from 16 MiB, which runs direct or the window as it finds the CPUs'
# placement and times them; an allreduce's and an alltoall's adaptive from 64 KiB.
expect_status 0 "$collie" run -n 2 "$collie" info
expect_output "cross-memory attach between this host's ranks: on"
expect_output "^  allreduce +oneshot +oneshot +(twoshot|adaptive) +(twoshot|adaptive) +adaptive +adaptive\$"
measured_info=$out
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'host_attach_call_us = 1.4\n' >"$dir/builtin.machine"
expect_status 0 env COLLIE_MACHINE="$dir/builtin.machine" "$collie" run -n 2 "$collie" info
expect_output "^  allreduce +oneshot +oneshot +adaptive +adaptive +adaptive +adaptive\$"
# (a broadcast of 64 KiB goes to single copies where their call takes under 0.2 us, and to
# the window above 1.5; one of 1 MiB where they copy at over 13 GB/s)
expect_output "^  broadcast +tree +tree +(adaptive|direct|staged) +(adaptive|direct) +adaptive +adaptive\$"
expect_output "^  alltoall +staged +staged +adaptive +adaptive +adaptive +adaptive\$"
out=$measured_info
# The call's cost and the copy's rate, measured when the segment opened, price the single
# copies, unless a description says its own.
num='[0-9]+\.[0-9]+'
line=$(grep -E "cross-memory attach between this host's ranks: on, $num us a call and $num GB/s \(measured at init: $num us, $num GB/s\)" <<<"$out") ||
    fail "info names no measured call and rate: $out"
read -r used measured used_gbs measured_gbs < <(sed -E "s/.*on, ($num) us a call and ($num) GB\/s \(measured at init: ($num) us, ($num) GB\/s\)/\1 \3 \2 \4/" <<<"$line")
[ "$used" = "$measured" ] || fail "the built-in rates priced a call at $used us, measured $measured"
[ "$used_gbs" = "$measured_gbs" ] || fail "the built-in rates priced a copy at $used_gbs GB/s, measured $measured_gbs"
awk -v v="$measured" 'BEGIN { exit !(v > 0 && v < 100) }' || fail "a call measured as $measured us"
awk -v v="$measured_gbs" 'BEGIN { exit !(v > 0.1 && v < 1000) }' || fail "a copy measured at $measured_gbs GB/s"
printf 'host_attach_call_us = 7.5\n' >"$dir/slow_call.machine"
expect_status 0 env COLLIE_MACHINE="$dir/slow_call.machine" "$collie" run -n 2 "$collie" info
expect_output "cross-memory attach between this host's ranks: on, 7.50 us a call and 11.0 GB/s \(measured at init: $num us, $num GB/s\)"
expect_status 0 env COLLIE_DEBUG=INFO COLLIE_MACHINE="$dir/builtin.machine" "$collie" run -n 2 \
    "$test_coll" broadcast
expect_output "broadcast of [0-9]+ bytes on 2 ranks: (direct|adaptive) \(cost model\)"
# adaptive: local rank 0's verdict is every rank's, even where the ranks' settings
# would judge the same sync apart (rank 0 far, rank 1 near here).
sim=$(dirname "$0")/sim
for first in far near; do
    [ $first = far ] && second=near || second=far
    expect_status 0 env COLLIE_DEBUG=TRACE COLLIE_ALGO=allreduce:adaptive "$collie" run -n 2 sh -c \
        "[ \$COLLIE_RANK = 0 ] && b=$first || b=$second; COLLIE_MACHINE=$sim/adaptive_\$b.machine exec '$test_coll' allreduce"
    expect_output "TRACE coll: allreduce: a sync in [0-9]+ ns \(far above [0-9]+\): $first"
    printf '%s\n' "$out" | grep "a sync in" | grep -qv ": $first\$" && fail "rank 0 judged both ways: $out"
    # in either placement it times both branches (each twice first, at every size) and runs
    # each exactly: a sync the probe takes for far may still be one where the window wins
    for algo in twoshot direct; do
        expect_output "allreduce of [0-9]+ bytes \($first\): window [0-9.]+ us, direct [0-9.]+ us: runs $algo"
    done
    printf '%s\n' "$out" | grep -E ": runs [a-z]+" | grep -qv "($first)" &&
        fail "rank 0 timed the branches in the other placement: $out"
done
# An alltoall's window is staged for small blocks and, where the model prices it lower,
# the pairwise exchange through the pairs' rings (adaptive.c's collie__adaptive_window). At
# 2 ranks staged's copies cost less at every size at the pair's rate; at a tenth of it
# (host_pair_gbs) pairwise costs less from 1 KiB: near, adaptive runs each of the three over
# the sizes, exactly.
{ cat "$sim/adaptive_near.machine" && printf 'host_pair_gbs = 4\n'; } >"$dir/slow_pair.machine"
expect_status 0 env COLLIE_DEBUG=TRACE COLLIE_ALGO=alltoall:adaptive \
    COLLIE_MACHINE="$dir/slow_pair.machine" "$collie" run -n 2 "$test_coll" alltoall
for algo in staged pairwise direct; do
    expect_output "alltoall of [0-9]+ bytes \(near\): window [0-9.]+ us, direct [0-9.]+ us: runs $algo(,|\$)"
done
# The probe: in the first call, then once a millisecond at most; the calls between sync once.
probes=$(printf '%s\n' "$out" | grep -c "alltoall: a sync in")
calls=$(printf '%s\n' "$out" | grep -c ": runs ")
[ "$probes" -ge 2 ] && [ "$probes" -lt "$calls" ] ||
    fail "$probes probes in $calls calls: not the first and then once a millisecond"
# Far apart, a copy's single copy moves each byte once: alltoall runs direct, untimed.
expect_status 0 env COLLIE_DEBUG=TRACE COLLIE_ALGO=alltoall:adaptive \
    COLLIE_MACHINE=$sim/adaptive_far.machine "$collie" run -n 2 "$test_coll" alltoall
expect_output "alltoall of [0-9]+ bytes \(far\): runs direct(,|\$)"
printf '%s\n' "$out" | grep -E "alltoall of .*: runs " | grep -Eqv "\(far\): runs direct(,|\$)" &&
    fail "far apart, an alltoall ran its window or was timed: $out"

# Refused by the kernel, on every rank, or on one rank only: all stage (the window where
# direct ran above: twoshot, and for reduce oneshot, whose root reduces alone), exactly.
"$deny" true || { [ $? = 77 ] && echo "SKIP: no seccomp here" && exit 77; }
expect_status 0 "$deny" "$collie" run -n 2 "$collie" info
expect_output "cross-memory attach between this host's ranks: off"
expect_output "^  allreduce +oneshot +oneshot +twoshot +twoshot "
for who in all 1; do
    for coll in allreduce reduce; do
        if [ $who = all ]; then
            expect_status 0 env COLLIE_DEBUG=INFO "$deny" "$collie" run -n 2 "$test_coll" $coll
        else
            expect_status 0 env COLLIE_DEBUG=INFO "$collie" run -n 2 sh -c \
                "[ \$COLLIE_RANK = $who ] && exec '$deny' '$test_coll' $coll || exec '$test_coll' $coll"
        fi
        expect_output "cross-memory attach to local rank [0-9] \(pid [0-9]+\) refused: Operation not permitted"
        expect_output "cross-memory attach off"
        window=twoshot
        [ $coll = reduce ] && window=oneshot
        expect_output "$coll of [0-9]+ bytes on 2 ranks: $window \(cost model\)"
        printf '%s\n' "$out" | grep -qE ": (direct|adaptive) \(cost model\)" &&
            fail "a single copy chosen where refused: $out"
    done
done
# Forced where refused: every rank fails init, naming the cause.
expect_status 1 env COLLIE_ALGO=allreduce:direct "$collie" run -n 2 sh -c \
    "[ \$COLLIE_RANK = 0 ] && exec '$deny' '$test_coll' allreduce || exec '$test_coll' allreduce"
expect_output "COLLIE_ALGO forces allreduce:direct, which reads the other ranks' buffers \(cross-memory attach\), but COLLIE_CMA=0 or the kernel refused"
expect_status 1 env COLLIE_CMA=0 COLLIE_ALGO=reduce:direct "$collie" run -n 2 "$test_coll" reduce
expect_output "COLLIE_ALGO forces reduce:direct"
# COLLIE_CMA=0 on one rank turns it off for all.
expect_status 0 env COLLIE_DEBUG=INFO "$collie" run -n 2 sh -c \
    "[ \$COLLIE_RANK = 1 ] && export COLLIE_CMA=0; exec '$test_coll' allreduce"
expect_output "cross-memory attach off"
echo "attach: ok"
