#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# DDP and FSDP2 on collie against the same on torch's own Gloo, in the same
# processes (collie.torch.benchmark: modes interleaved, iteration by iteration),
# on the newest torch 2.x (scripts/torch_env.sh), on one host and across emulated
# hosts; ROUNDS runs of each; every run's figures become rows of CSV, which
# scripts/perf_tables.py turns into docs/PERFORMANCE.md's PyTorch table.  Needs
# root for the emulated hosts (scripts/bench_hosts.sh).
#   bash scripts/bench_torch.sh CSV [ROUNDS]
#   e.g. bash scripts/bench_torch.sh docs/results/perf/torch2.csv 3
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1 rounds=${2:-3}
python=$(bash "$root/scripts/torch_env.sh")
collie=${COLLIE:-$root/build/collie}
[ -x "$collie" ] || { echo "bench_torch: build collie first (bash scripts/demo.sh)" >&2; exit 1; }
modes=gloo,collie,collie-bf16,fsdp2-gloo,fsdp2,compute
# resnet18: compute-bound at this size; head: 18.9 M trainable parameters behind a
# frozen backbone, the A6000 study's communication-bound case.
models="resnet18 head"
args=(--image-size 64 --batch-size 8 --num-warmup-batches 1 --num-batches-per-iter 2
      --num-iters 6 --modes "$modes")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
env=(env PYTHONPATH="$root/python" COLLIE_LIBRARY="$root/build/libcollie.so" COLLIE_DEBUG=NONE
     OMP_NUM_THREADS=1)
torch=$("$python" -c "import torch; print(torch.__version__.split('+')[0])")
echo "setting,model,mode,round,img_sec,acc_ratio,against,comm_share,torch" > "$out"
row() { # row SETTING MODEL ROUND JSON: one CSV row per mode
    "$python" - "$@" >> "$out" <<'PY'
import csv, json, sys
setting, model, rnd, path, torch = sys.argv[1:6]
res = json.load(open(path))
out = csv.writer(sys.stdout, lineterminator="\n")
for mode, r in res["modes"].items():
    ratio = "acc_ratio" in r
    out.writerow([setting, model, mode, rnd, "%.2f" % r["img_sec"],
                  "%.3f" % r["acc_ratio"] if ratio else "",
                  {"fsdp2": "fsdp2-gloo"}.get(mode, "gloo") if ratio else "",
                  "%.3f" % r["comm_share"] if "comm_share" in r else "", torch])
PY
}
for round in $(seq 1 "$rounds"); do
    for model in $models; do
        echo "# round $round, $model: one host, 2 ranks" >&2
        "${env[@]}" "$collie" run -n 2 "$python" -m collie.torch.benchmark --model "$model" \
            "${args[@]}" --json "$dir/a.json" >&2
        row "one host x 2 ranks" "$model" "$round" "$dir/a.json" "$torch"
        echo "# round $round, $model: 2 emulated hosts x 2 ranks, 1 Gbit/s" >&2
        # Gloo takes its address from the host name, which the namespaces share: eth0 is theirs.
        bash "$root/scripts/bench_hosts.sh" --hosts 2 --ranks-per-host 2 --rate 1gbit --no-iperf \
            --run "${env[@]}" GLOO_SOCKET_IFNAME=eth0 "$python" -m collie.torch.benchmark \
            --model "$model" "${args[@]}" --json "$dir/b.json" >&2
        row "2 hosts x 2 ranks at 1 Gbit/s" "$model" "$round" "$dir/b.json" "$torch"
    done
done
echo "bench_torch: $(($(wc -l < "$out") - 1)) rows in $out" >&2
