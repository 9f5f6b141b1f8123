#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Surviving failures in collie train:
#  - elastic: a rank SIGKILLed mid-training at 4 ranks (rank 2, then rank 0,
#    the one that reports); the 3 survivors shrink, regroup and reach the
#    target accuracy on Fashion-MNIST; collie run --keep-going exits 0;
#  - checkpoints: a job killed mid-epoch resumes from its last checkpoint to
#    exactly the weights of an uninterrupted run (SGD with dropout, Adam
#    without overlap), and refuses a damaged or foreign checkpoint by name.
collie=$1
. "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export COLLIE_TIMEOUT=10

for victim in 2 0; do
    expect_status 0 "$collie" train mlp --hidden 64 -n 4 --epochs 6 --target 0.84 --elastic \
        --inject-kill $victim:300
    expect_output "rank $victim kills itself at step 300"
    expect_output "the other 3 go on \(--keep-going\)"
    expect_output "lost 1 rank\(s\); 3 continue from step (299|300) \(epoch 2"
    expect_output "Total samples/sec on 3 rank\(s\)"
    expect_output "elastic: 1 rank\(s\) lost, training went on with 3"
    expect_output "time to accuracy 0.840: [0-9.]+ s"
done

for opts in "--dropout 0.2 --batch 32" "--hidden 32,16 --adam --lr 0.001 --no-overlap"; do
    run=(train mlp --synthetic 3000 --hidden 32 -n 3 --epochs 3 --seed 5 $opts)
    expect_status 0 "$collie" "${run[@]}" --save "$dir/whole.bin"
    rm -f "$dir/ck"
    # killed at step 37: the last checkpoint is step 30's (every 10 steps)
    expect_status 1 "$collie" "${run[@]}" --checkpoint "$dir/ck" --checkpoint-every 10 \
        --inject-kill 1:37
    # collie run names the killed rank, unless a survivor's error exit reaches it first
    expect_output "rank 1 \(pid [0-9]+\) (was killed by signal 9|exited while)"
    [ -s "$dir/ck" ] || fail "no checkpoint written before the kill"
    ls "$dir"/ck.tmp.* 2>/dev/null && fail "a temporary checkpoint was left behind"
    expect_status 0 "$collie" "${run[@]}" --resume "$dir/ck" --save "$dir/resumed.bin"
    expect_output "resumed from .*ck at step 30"
    cmp "$dir/whole.bin" "$dir/resumed.bin" || fail "resumed weights differ ($opts)"
done

head -c 1000 "$dir/ck" > "$dir/short"
expect_status 1 "$collie" train mlp --synthetic 3000 --hidden 32,16 --adam -n 2 --resume "$dir/short"
expect_output "short: damaged: truncated, or its CRC-32 does not match"
expect_status 1 "$collie" train mlp --synthetic 3000 --hidden 8 --adam -n 2 --resume "$dir/ck"
expect_output "a checkpoint of another model or optimizer"
expect_status 2 "$collie" train mlp --synthetic 3000 --sync neighbor --elastic
expect_output "need --sync allreduce"
echo "elastic: ok"
