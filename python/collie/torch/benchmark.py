# SPDX-License-Identifier: BSD-3-Clause
"""Horovod's / BlueFog's synthetic benchmark, with native DDP on Gloo beside collie in the
same processes, interleaved:

    collie run -n 2 /usr/bin/python3 -m collie.torch.benchmark --model resnet18

Every mode trains its own copy of the model (same initial weights) on the same
synthetic batch; each iteration times every mode once, in a rotating order
(A B C, B C A, ...), so a machine whose speed drifts affects all modes alike.
Modes:
  gloo         DistributedDataParallel on Gloo (native DDP: the baseline)
  gloo-fp16    the same with PyTorch's fp16_compress_hook
  gloo-powersgd ... with PyTorch's PowerSGD hook (rank 1, its default; from the 2nd step,
               not its default 1000th, so that a short run measures it; one bucket)
  collie       DistributedDataParallel on collie
  collie-fp16  ... with collie.torch.hooks.fp16_compress_hook (float16 on the wire)
  collie-bf16  ... with collie.torch.hooks.bf16_compress_hook
  collie-int8-ef ... with collie.torch.hooks.int8_ef_hook (8-bit codes, error feedback)
  collie-sign-ef ... with collie.torch.hooks.sign_ef_hook (1-bit codes, error feedback)
  optimizer    collie.torch.DistributedOptimizer, no DDP
  neighbor-atc collie.torch.NeighborOptimizer over --topology (BlueFog's adapt-then-combine:
               the parameters averaged with the neighbours after the step, no gradient
               averaging)
  neighbor-awc ... adapt-with-combine: the average overlaps the next passes
  fsdp2-gloo   FSDP2 (torch 2.x's fully_shard, each layer its own unit) on Gloo
  fsdp2        the same on collie (acc_ratio against fsdp2-gloo)
  compute      DDP under no_sync(): the step without communication (its acc_ratio is
               the bound that no way of communicating can pass)
Printed per mode as Horovod prints it (`Total img/sec on N rank(s): X +- Y`,
the 95% interval over iterations), then acc_ratio = mode / gloo (ACSpeed's
measure: the median of the per-iteration ratios, with their range; fsdp2's is
against fsdp2-gloo), and the
share of the step that communication takes, 1 - step(compute) / step(mode).

Models: any torchvision model by name (weights=None: no download), or
"head": a frozen resnet18 with a trainable 512-4096-4096-10 head (the A6000
study's communication-bound case: 18.9 M trainable parameters).
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.distributed as dist

import collie.torch as ct
from collie.torch import hooks as collie_hooks
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook

MODES = ["gloo", "gloo-fp16", "gloo-powersgd", "collie", "collie-fp16", "collie-bf16",
         "collie-int8-ef", "collie-sign-ef", "optimizer",
         "neighbor-atc", "neighbor-awc", "fsdp2-gloo", "fsdp2", "compute"]
BASELINE = {"fsdp2": "fsdp2-gloo"}  # acc_ratio's reference; "gloo" for the others


def build_model(name, classes):
    import torchvision
    if name == "head":
        model = torchvision.models.resnet18(weights=None)
        for p in model.parameters():
            p.requires_grad_(False)
        model.fc = torch.nn.Sequential(
            torch.nn.Linear(512, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096),
            torch.nn.ReLU(), torch.nn.Linear(4096, 10))
        return model, 10
    return getattr(torchvision.models, name)(weights=None, num_classes=classes), classes


def shard(model, group):
    """FSDP2 over group: each module that holds parameters its own unit, then the root
    (a unit's parameters must all train or all be frozen: the head's backbone is)."""
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.fsdp import fully_shard
    mesh = DeviceMesh.from_group(group, "cpu")
    for module in list(model.modules())[1:]:
        if next(module.parameters(recurse=False), None) is not None:
            fully_shard(module, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


class Mode:
    """One way of training: its model copy, its optimizer, one timed step."""

    def __init__(self, name, args, state, gloo):
        self.name = name
        model, self.classes = build_model(args.model, args.classes)
        model.load_state_dict(state)
        params = [p for p in model.parameters() if p.requires_grad]
        self.sync = None
        if name == "optimizer":
            self.net = model
            self.opt = ct.DistributedOptimizer(torch.optim.SGD(params, lr=0.01))
            return
        if name.startswith("neighbor-"):
            self.net = model
            self.opt = ct.NeighborOptimizer(torch.optim.SGD(params, lr=0.01), args.topology,
                                            combine=name[len("neighbor-"):])
            return
        if name.startswith("fsdp2"):
            self.net = shard(model, gloo if name == "fsdp2-gloo" else dist.group.WORLD)
            self.opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad],
                                       lr=0.01)
            return
        group = gloo if name.startswith("gloo") else None
        # PowerSGD issues its allreduces from futures' callbacks, in an order that differs
        # between ranks where DDP has several buckets (Gloo then aborts on sizes that differ):
        # one bucket.
        buckets = {"bucket_cap_mb": 1 << 14} if name == "gloo-powersgd" else {}
        self.net = torch.nn.parallel.DistributedDataParallel(model, process_group=group, **buckets)
        self.opt = torch.optim.SGD(params, lr=0.01)
        hook = {"gloo-fp16": default_hooks.fp16_compress_hook,
                "gloo-powersgd": powerSGD_hook.powerSGD_hook,
                "collie-fp16": collie_hooks.fp16_compress_hook,
                "collie-bf16": collie_hooks.bf16_compress_hook,
                "collie-int8-ef": collie_hooks.int8_ef_hook,
                "collie-sign-ef": collie_hooks.sign_ef_hook}.get(name)
        hook_state = group
        if name == "gloo-powersgd":
            hook_state = powerSGD_hook.PowerSGDState(process_group=group, start_powerSGD_iter=2)
        elif name.endswith("-ef"):
            hook_state = collie_hooks.ErrorFeedbackState()
        if hook:
            self.net.register_comm_hook(hook_state, hook)
        if name == "compute":
            self.sync = self.net.no_sync

    def step(self, data, target):
        self.opt.zero_grad()
        if self.sync:
            with self.sync():
                torch.nn.functional.cross_entropy(self.net(data), target).backward()
        else:
            torch.nn.functional.cross_entropy(self.net(data), target).backward()
        self.opt.step()


def _has_fsdp2():
    try:
        from torch.distributed.fsdp import fully_shard  # noqa: F401
    except Exception:  # absent, or (torch 1.13 on Python 3.11) not importable at all
        return False
    return True


def interval(rates, size):
    """Horovod's total img/sec: mean and 1.96 standard deviations, times the ranks."""
    mean = statistics.mean(rates)
    sd = statistics.stdev(rates) if len(rates) > 1 else 0.0
    return mean * size, 1.96 * sd * size


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="resnet18",
                        help="a torchvision model, or 'head' (frozen resnet18 + 4096-4096-10)")
    parser.add_argument("--batch-size", type=int, default=8, help="per rank")
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--num-warmup-batches", type=int, default=2)
    parser.add_argument("--num-batches-per-iter", type=int, default=3)
    parser.add_argument("--num-iters", type=int, default=5)
    parser.add_argument("--modes", default="gloo,collie,collie-fp16,compute",
                        help="comma-separated, of: " + ", ".join(MODES))
    parser.add_argument("--topology", default="onepeer-exp2",
                        help="the neighbour modes' topology or schedule (default onepeer-exp2)")
    parser.add_argument("--json", help="also write the results to this file (rank 0)")
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    for m in modes:
        if m not in MODES:
            parser.error("unknown mode %r (choose from %s)" % (m, ", ".join(MODES)))
        if m.startswith("fsdp2") and not _has_fsdp2():
            parser.error("mode %s needs FSDP2 (torch 2.x's torch.distributed.fsdp.fully_shard); "
                         "this torch is %s" % (m, torch.__version__))

    dist.init_process_group("collie")
    rank, size = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo") if any("gloo" in m for m in modes) else None
    torch.manual_seed(0)
    reference, classes = build_model(args.model, args.classes)
    state = reference.state_dict()
    trainable = sum(p.numel() for p in reference.parameters() if p.requires_grad)
    runners = [Mode(m, args, state, gloo) for m in modes]
    g = torch.Generator().manual_seed(rank)
    data = torch.randn(args.batch_size, 3, args.image_size, args.image_size, generator=g)
    target = torch.randint(0, classes, (args.batch_size,), generator=g)

    def log(*a):
        if rank == 0:
            print(*a, flush=True)

    log("Model: %s (%.1f M trainable parameters), batch size %d per rank, %d rank(s), "
        "torch threads %d" % (args.model, trainable / 1e6, args.batch_size, size,
                              torch.get_num_threads()))
    for r in runners:
        for _ in range(args.num_warmup_batches):
            r.step(data, target)
    seconds = {m: [] for m in modes}  # per iteration: seconds per batch
    for it in range(args.num_iters):
        order = runners[it % len(runners):] + runners[:it % len(runners)]
        for r in order:
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(args.num_batches_per_iter):
                r.step(data, target)
            seconds[r.name].append((time.perf_counter() - t0) / args.num_batches_per_iter)
        log("Iter #%d: " % it + ", ".join("%s %.1f" % (m, args.batch_size / seconds[m][-1])
                                           for m in modes) + " img/sec per rank")

    results = {"model": args.model, "batch_size": args.batch_size, "ranks": size,
               "trainable_parameters": trainable, "modes": {}}
    for m in modes:
        total, pm = interval([args.batch_size / s for s in seconds[m]], size)
        log("%-12s Total img/sec on %d rank(s): %.1f +- %.1f" % (m + ":", size, total, pm))
        results["modes"][m] = {"img_sec": total, "pm": pm,
                               "step_s": statistics.median(seconds[m])}
    for m in modes:
        base = BASELINE.get(m, "gloo")
        if m in ("gloo", "fsdp2-gloo") or base not in modes:
            continue
        ratios = [a / b for a, b in zip(seconds[base], seconds[m])]
        med = statistics.median(ratios)
        log("acc_ratio %-12s %.2f  (iterations: %.2f - %.2f; against %s)"
            % (m + ":", med, min(ratios), max(ratios), base))
        results["modes"][m]["acc_ratio"] = med
        results["modes"][m]["acc_ratio_range"] = [min(ratios), max(ratios)]
    if "compute" in modes:
        compute = statistics.median(seconds["compute"])
        for m in modes:
            if m != "compute":
                share = max(0.0, 1 - compute / statistics.median(seconds[m]))
                log("communication share of the step, %-12s %3.0f%%" % (m + ":", 100 * share))
                results["modes"][m]["comm_share"] = share
    for r in runners:
        if r.name.startswith("neighbor-"):
            r.opt.synchronize()  # the neighbour averaging still in flight
    if args.json and rank == 0:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    # Each DDP goes while `gloo` still holds the Gloo group: on torch 1.13 a DDP that drops
    # a group's last reference can deadlock with the group's workers (docs/NOTES.md).
    for r in runners:
        r.net = r.sync = None
    dist.barrier()
    dist.destroy_process_group()
    return 0 if all(math.isfinite(v["img_sec"]) for v in results["modes"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
