#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# collie sim and collie bench --tune, end to end: stored tables for one and
# two hosts, 65,536 ranks in seconds, the same algorithm as the library logs
# at INFO for the same job, the description file round trip through --tune,
# COLLIE_MACHINE and --machine, training predictions, and bad input.
#   test_sim.sh COLLIE DATA_DIR
. "$(dirname "$0")/lib.sh"
collie=$1 data=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Stored expectations: the rows of a 1-host and a 2-host table from round rates.
table() { "$collie" sim "$@" --machine "$data/round.machine" | grep -v '^#'; }
out=$(table allreduce,alltoall -n 8 -b 4 -e 64M -f 64) || fail "sim on one host: $out"
diff <(printf '%s\n' "$out") "$data/expect_1host.txt" || fail "one host: the table changed"
out=$(table all -n 8 --hosts 2 -b 4 -e 64M -f 64) || fail "sim on two hosts: $out"
diff <(printf '%s\n' "$out") "$data/expect_2hosts.txt" || fail "two hosts: the table changed"

# 65,536 ranks: an analytical model, seconds at most
expect_status 0 timeout 5 "$collie" sim all -n 65536 --hosts 8192 --link 100gbit,3us --cores 8
expect_output "^ +67108864 +[0-9]+ +float32 .* ring$"

# The library's choice: what it logs at INFO for a job, the simulator names for the same machine.
cores=$(nproc)
check_choices() { # check_choices SIM_ARGS...: the INFO lines in $out against collie sim
    local lines=$(printf '%s\n' "$out" | grep -Eo '(allreduce|broadcast|reduce) of [0-9]+ bytes on [0-9]+ ranks: [a-z]+ \(cost model\)' | sort -u)
    [ -n "$lines" ] || fail "no INFO line names a choice:
$out"
    # the single copies' call and rate as the job measured them at init, which the library
    # prices them by
    local call=$(printf '%s\n' "$out" | sed -nE 's/.*cross-memory attach on \(a call ([0-9.]+) us, ([0-9.]+) GB\/s\).*/\1 \2/p' | head -1)
    local measured=(${call:+--set host_attach_call_us=${call% *} --set host_attach_gbs=${call#* }})
    while read -r coll _ bytes _ _ _ _ algo _; do
        local sim=$("$collie" sim "$coll" "$@" "${measured[@]}" -b "$bytes" -e "$bytes" | awk '!/^#/ { print $NF }')
        [ "$sim" = "$algo" ] || fail "$coll of $bytes bytes ($*): the library ran $algo, collie sim says $sim"
    done <<<"$lines"
}
expect_status 0 env COLLIE_DEBUG=INFO "$collie" bench -n 4 -b 4 -e 16M -f 4 --iters 1 --warmup 0 --min-time 0
check_choices -n 4 --cores "$cores"
# the rooted calls' trees fit their messages in a pair's ring (cost.c), sized for the fullest host
expect_status 0 env COLLIE_DEBUG=INFO "$collie" bench all -n 4 -b 4 -e 1M -f 4 --iters 1 --warmup 0 --min-time 0
check_choices -n 4 --cores "$cores"
expect_status 0 env COLLIE_NET_PROBE=0 "$collie" run -n 3 --bind none sh -c "COLLIE_HOST=h\$((COLLIE_RANK / 2)) COLLIE_DEBUG=INFO exec \
    $collie bench all -b 4 -e 1M -f 4 --iters 1 --warmup 0 --min-time 0"
check_choices -n 3 --hosts 2 --cores "$cores" --set shared_cores="$cores"
# (the links' rates measured at init are test_link_probe's business: here both use the defaults)
expect_status 0 env COLLIE_NET_PROBE=0 "$collie" run -n 4 --bind none sh -c "COLLIE_HOST=h\$((COLLIE_RANK / 2)) COLLIE_DEBUG=INFO exec \
    $collie bench allreduce -b 4 -e 16M -f 16 --iters 1 --warmup 0 --min-time 0"
# two "hosts" of one kernel: the library finds that they share its cores (shm.c), as --set says
check_choices -n 4 --hosts 2 --cores "$cores" --set shared_cores="$cores"

# --tune writes a description that COLLIE_MACHINE and collie sim --machine read.
expect_status 0 "$collie" bench -n 2 --tune "$dir/tuned.machine" --tune-wait 0
expect_output "host_latency_us .* from allreduce of 64 bytes"
expect_output "host_carry_us .* from allreduce of 4 bytes"
expect_output "host_bandwidth_gbs .* from allreduce of 16777216 bytes"
expect_output "host_resident_gbs .* from allreduce of 1048576 bytes \(oneshot\)"
expect_output "host_alone_gain .* from reduce of 1048576 bytes \(oneshot\)"
if "$collie" info | grep -q "cross-memory attach between this host's ranks: on"; then
    expect_output "host_attach_call_us .* from allreduce of 4 bytes \(direct\)"
    expect_output "host_attach_gbs .* from allreduce of 4194304 bytes \(direct\)"
    expect_output "host_attach_memory_gbs .* from allreduce of 16777216 bytes \(direct\)"
fi
grep -Eq '^ranks += 2 ' "$dir/tuned.machine" || fail "the description lacks its placement"
# A resident rate given below memory's is solved from memory's up (the model
# reads the larger of the two).  Solved from 1 and 2 GB/s, neither of which the
# model reads, it was never explained and stayed at 1.  Now it is solved, or,
# where the call ran slower than memory's rate predicts (a loaded machine),
# rightly left.
printf 'host_resident_gbs = 1\n' >"$dir/slow_resident.machine"
expect_status 0 env COLLIE_MACHINE="$dir/slow_resident.machine" "$collie" bench -n 2 --tune "$dir/x.machine" \
    --tune-wait 0
line=$(grep -E "host_resident_gbs .* from allreduce of 1048576 bytes \(oneshot\)" <<<"$out") ||
    fail "--tune printed no line for host_resident_gbs"
if [[ $line == *"cannot explain"* ]]; then
    measured=$(sed -E 's/.*\(oneshot\): ([0-9.]+) us.*/\1/' <<<"$line")
    floor=$("$collie" sim allreduce --machine "$dir/x.machine" --algo oneshot -b 1M -e 1M |
        awk '!/^#/ { print $4 }')
    awk -v m="$measured" -v f="$floor" 'BEGIN { exit !(m > f) }' ||
        fail "host_resident_gbs left unexplained, though its call ($measured us) ran faster than memory's rate predicts ($floor us)"
fi
expect_status 0 "$collie" sim allreduce --machine "$dir/tuned.machine" -b 64M -e 64M
expect_output "^# +ranks += 2 "
expect_status 0 env COLLIE_MACHINE="$dir/tuned.machine" "$collie" bench -n 2 \
    -b 4 -e 256K -f 16 --iters 1 --warmup 0 --min-time 0
expect_output "^ +262144 +65536 +float32 +sum .* 0  (oneshot|twoshot|direct|adaptive)$"
# ... and a broken one is an error naming the file and the line, on every rank
printf 'ranks = 2\nlink_latency_us = soon\n' >"$dir/bad.machine"
expect_status 1 env COLLIE_MACHINE="$dir/bad.machine" "$collie" bench -n 2 -b 4 -e 4 --iters 1
expect_output "COLLIE_MACHINE: machine description $dir/bad.machine, line 2: link_latency_us = 'soon'"
expect_status 2 "$collie" sim allreduce --machine "$dir/bad.machine"
expect_output "line 2: link_latency_us = 'soon': expected a positive number"
expect_status 2 "$collie" bench -n 2 --tune "$dir/x" --baseline mpi
expect_output "--tune measures collie alone"
# --tune waits for CPUs that share a cache, whose rates the model holds: where
# the probe reads far throughout, every step says so after --tune-wait's
# seconds, and measures; near, none does.
expect_status 0 env COLLIE_TEST_PROBE_NS=300 "$collie" bench -n 2 --tune "$dir/far.machine" \
    --tune-wait 0.5
far_steps=$(grep -c "^# (the next in the far placement: a handoff of 300 ns, over 100, after --tune-wait's 0.5 s)$" <<<"$out")
[ "$far_steps" -ge 5 ] || fail "--tune in the far placement said so for $far_steps steps: $out"
grep -A1 "far placement" <<<"$out" | grep -q "^# host_latency_us " || fail "no step followed the mark: $out"
expect_status 0 env COLLIE_TEST_PROBE_NS=40 "$collie" bench -n 2 --tune "$dir/near.machine" --tune-wait 0.5
grep -q "far placement" <<<"$out" && fail "--tune in the near placement said far: $out"
expect_status 2 "$collie" bench -n 2 --tune "$dir/x" --tune-wait -1
expect_output "bad value '-1' for --tune-wait"

# Options override the file, in any order; --ranks and --hosts spread the ranks evenly again.
expect_status 0 "$collie" sim allreduce --link 1gbit,50us --machine "$data/round.machine" -n 16 --hosts 4 -b 1M -e 1M
expect_output "^# +link_latency_us += 50 "
expect_output "^# +link_bandwidth_gbs += 0.125 "
expect_output "^# +ranks_per_host += 4 "

# Training: one rank is the reference (efficiency 1), the table per --sync, the plot's data.
expect_status 0 "$collie" sim train --model resnet50 --sample-ms 3 --batch 32 -n 64 \
    --ranks-per-host 8 --cores 8 --host 100GB/s,5us --link 25gbit,10us \
    --sync allreduce:ring,allreduce:hierarchical,neighbor --csv "$dir/train.csv" --plot "$dir/train.png"
expect_output "^ +1 +1 +96.00 +0.00 +0.00 +333.3 +1.000 +- "
expect_output "^# sync allreduce:hierarchical"
expect_output "^ +64 +8 .* hierarchical$"
[ "$(grep -c '^neighbor,' "$dir/train.csv")" = 7 ] || fail "train.csv: $(cat "$dir/train.csv")"
[ -s "$dir/train.png.dat" ] || fail "no plot data"
# overlap hides the gradients' time behind the backward pass; without it, all of it shows
on=$("$collie" sim train --params 25.6M --sample-ms 3 -n 2 --link 1gbit,20us --hosts 2 --scale 2 | awk '!/^#/ { print $5 }')
off=$("$collie" sim train --params 25.6M --sample-ms 3 -n 2 --link 1gbit,20us --hosts 2 --scale 2 --no-overlap | awk '!/^#/ { print $5 }')
awk -v on="$on" -v off="$off" 'BEGIN { exit !(on < off) }' || fail "overlap exposes $on ms, none $off ms"

# A stored validation run predicted again with this build's model
# (sim_validate.sh --repredict): its measured rows beside round.machine's
# predictions for 2 ranks.  The run's fastest: twoshot at 16 KiB, direct at 4 MiB;
# the model's: twoshot (4.66 us, since it stores its sum into the output from the
# reduce's block, where oneshot takes 4.69), and at 4 MiB, since twoshot no longer
# stages a rank's own slice, adaptive (921.79), which times twoshot against direct.
mkdir -p "$dir/run"
cp -r "$data/repredict/local2" "$dir/run/"
cp "$data/round.machine" "$dir/run/local.machine"
expect_status 0 env COLLIE="$collie" bash "$(dirname "$0")/../scripts/sim_validate.sh" \
    --repredict "$dir/rp" "$dir/run"
expect_output "^  local2 +2 +1/1 \(median 8%\) +1/1 \(median 7%\) +1/2 +1/1$"
grep -Eq "allreduce +16384 +5.00 +4.66 +-7% +twoshot +twoshot +yes +yes" "$dir/rp/1/local2.txt" ||
    fail "--repredict: 16 KiB's row: $(cat "$dir/rp/1/local2.txt")"
grep -Eq "allreduce +4194304 +1000.00 +921.79 +-8% +adaptive +direct +no +-" "$dir/rp/1/local2.txt" ||
    fail "--repredict: 4 MiB's row: $(cat "$dir/rp/1/local2.txt")"

# Bad input says what is wrong.
expect_status 2 "$collie" sim allreduce
expect_output "ranks = 0: a machine needs at least one rank"
expect_status 2 "$collie" sim allreduze -n 2
expect_output "'allreduze' is no collective"
expect_status 2 "$collie" sim allreduce -n 2 --link fast
expect_output "--link 'fast': expected RATE\\[,LATENCY\\]"
expect_status 2 "$collie" sim allreduce -n 2 --set colour=blue
expect_output "unknown key 'colour'; known: ranks hosts"
expect_status 2 "$collie" sim allreduce -n 2 --algo warp
expect_output "allreduce has no algorithm 'warp'"
expect_status 2 "$collie" sim allreduce -n 2 --hosts 3
expect_output "more hosts than ranks"
expect_status 2 "$collie" sim train -n 4
expect_output "give the model"
echo "sim: all checks passed"
