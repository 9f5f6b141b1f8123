#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Error-feedback compression across emulated hosts (one rank a host, links
# shaped by tc tbf; scripts/bench_hosts.sh), as CSV rows for
# docs/PERFORMANCE.md (scripts/perf_tables.py).  Needs root.
#
#   bash scripts/bench_ef.sh train --csv FILE
#     `collie train mlp --preset small` on Fashion-MNIST with float32, bfloat16,
#     int8-ef and sign-ef gradients, at 4 and 8 hosts, at 1 Gbit/s and 100
#     Mbit/s: each to 0.88 test accuracy (at most EPOCHS, default 25).  One row
#     per epoch: hosts,rate,compress,epoch,wall_s,test_accuracy,bytes_per_epoch,
#     steps_per_epoch,parameters.  sign-ef trains at the rate per rank unscaled
#     (--no-scale-lr): at the linearly scaled rate its 1-bit codes diverge.
#   bash scripts/bench_ef.sh torch --csv FILE [--rounds R]
#     collie.torch.benchmark's head (18.9 M trainable parameters, DDP) on 4 hosts
#     at 1 Gbit/s and 100 Mbit/s: Gloo, PowerSGD on Gloo, collie's fp16, int8-ef
#     and sign-ef hooks and the step without communication, interleaved in the
#     same processes; rows as scripts/bench_torch.sh writes them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?train or torch}
shift
out= rounds=1
while [ $# -gt 0 ]; do
    case $1 in
    --csv) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "bench_ef: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || { echo "bench_ef: --csv FILE is required" >&2; exit 2; }
collie=${COLLIE:-$root/build/collie}
[ -x "$collie" ] || { echo "bench_ef: build collie first (bash scripts/demo.sh)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
hosts() { # hosts K RATE PROGRAM...: PROGRAM on K emulated hosts of one rank each
    local k=$1 rate=$2
    shift 2
    bash "$root/scripts/bench_hosts.sh" --hosts "$k" --rate "$rate" --no-iperf --run "$@" >&2
}

train() {
    local train_bin=$root/build/collie-train
    [ -x "$train_bin" ] || { echo "bench_ef: no build/collie-train (COLLIE_BUILD_TRAIN=ON)" >&2; exit 1; }
    echo "hosts,rate,compress,epoch,wall_s,test_accuracy,bytes_per_epoch,steps_per_epoch,parameters" > "$out"
    local k rate c
    for k in 4 8; do
        for rate in 1gbit 100mbit; do
            local stop=(--target 0.88 --epochs "${EPOCHS:-25}")
            for c in none bfloat16 int8-ef sign-ef; do
                echo "# $k hosts at $rate, gradients: $c" >&2
                local press=()
                [ $c = none ] || press=(--compress $c)
                # 1-bit codes diverge at the linearly scaled rate: the unscaled one
                [ $c = sign-ef ] && press+=(--no-scale-lr)
                hosts "$k" "$rate" "$train_bin" mlp --preset small "${stop[@]}" "${press[@]}" \
                    --json "$dir/t.json"
                python3 - "$k" "$rate" "$c" "$dir/t.json" >> "$out" <<'PY'
import json, sys
k, rate, c, path = sys.argv[1:5]
r = json.load(open(path))
s = r["summary"]
steps = 60000 // (64 * int(k))
for e in r["epochs"]:
    print(f"{k},{rate},{c},{e['epoch']},{e['wall_s']:.3f},{e['test_accuracy']:.4f},"
          f"{s['bytes_per_epoch_actual']},{steps},{s['parameters']}")
PY
            done
        done
    done
}

torch() {
    local python
    python=$(bash "$root/scripts/torch_env.sh")
    local modes=gloo,gloo-powersgd,collie-fp16,collie-int8-ef,collie-sign-ef,compute
    local env=(env PYTHONPATH="$root/python" COLLIE_LIBRARY="$root/build/libcollie.so"
               COLLIE_DEBUG=NONE OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME=eth0)
    local ver
    ver=$("$python" -c "import torch; print(torch.__version__.split('+')[0])")
    echo "setting,model,mode,round,img_sec,acc_ratio,against,comm_share,torch" > "$out"
    local round rate
    for round in $(seq 1 "$rounds"); do
        for rate in 1gbit 100mbit; do
            local iters=6
            [ $rate = 100mbit ] && iters=3
            echo "# round $round: head, 4 hosts at $rate" >&2
            hosts 4 "$rate" "${env[@]}" "$python" -m collie.torch.benchmark --model head \
                --image-size 64 --batch-size 8 --num-warmup-batches 3 --num-batches-per-iter 1 \
                --num-iters $iters --modes $modes --json "$dir/b.json"
            "$python" - "4 hosts x 1 rank at ${rate/gbit/ Gbit/s}" "$round" "$dir/b.json" "$ver" \
                >> "$out" <<'PY'
import csv, json, sys
setting, rnd, path, ver = sys.argv[1:5]
setting = setting.replace("mbit", " Mbit/s")
res = json.load(open(path))
out = csv.writer(sys.stdout, lineterminator="\n")
for mode, r in res["modes"].items():
    ratio = "acc_ratio" in r
    out.writerow([setting, res["model"], mode, rnd, "%.2f" % r["img_sec"],
                  "%.3f" % r["acc_ratio"] if ratio else "", "gloo" if ratio else "",
                  "%.3f" % r["comm_share"] if "comm_share" in r else "", ver])
PY
        done
    done
}

case $what in
train) train ;;
torch) torch ;;
*) echo "bench_ef: train or torch, not $what" >&2; exit 2 ;;
esac
echo "bench_ef: $(($(wc -l < "$out") - 1)) rows in $out" >&2
