# SPDX-License-Identifier: BSD-3-Clause
"""The A6000 study (../shared/seeds, Banerjee and Shah), reproduced on collie and Gloo side by
side: a frozen feature extractor with a trainable 4096-4096-10 classifier, trained data-
parallel on Fashion-MNIST, timing computation and communication per iteration.

    collie run -n 2 /usr/bin/python3 examples/a6000.py --batch-sizes 32,64,128 \\
        --hidden 4096,2048,1024 --steps 20

As in the study, each iteration is computation (the frozen extractor's forward, then
zero_grad, forward, loss, backward and step of the classifier) and communication (the gradients' allreduce, here one flat buffer
averaged; the study's timed barrier): not overlapped, so each is timed alone.  Both
backends run in the same processes, interleaved step by step (collie, gloo, collie, ...),
on the same data.  Per configuration (batch size B per rank, hidden width, so trainable
parameters P) it prints the median compute and communication times per iteration and,
per epoch of N = 60,000 images on k ranks:
  formula     (N / (B k)) x P      the study's data transfer size (parameters; x4 bytes)
  counted     bytes collie's counters saw one rank send per iteration x N / (B k)
The formula counts the model once per iteration; an allreduce moves more.  Across hosts
collie's counters count the bytes a rank sends, 2(k-1)/k of the model for the bandwidth-
optimal algorithms (reduce-scatter, then allgather); on one host they count the bytes a
rank stages in shared memory for its peers (the two-shot allreduce stages its whole input,
then its reduced share: (k+1)/k of the model).  Communication here includes packing the
gradients into one buffer and back (about 17 ms for 18.9 M parameters at 1 rank).  Sweep the ranks by launching at -n 1, 2,
4: scripts/a6000.sh.

Backbone: resnet18 (torchvision, weights=None: no download; frozen, so its weights do not
change the timing), on 28x28 images repeated to 3 channels and resized to --image-size.
"""
import argparse
import copy
import gzip
import json
import os
import statistics
import time

import numpy as np
import torch
import torch.distributed as dist

import collie.torch  # registers the backend

DATA = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist


def load_fashion_mnist(directory):
    def idx(name, offset):
        path = os.path.join(directory, name)
        try:
            with gzip.open(path) as f:
                return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)
        except OSError as e:
            raise SystemExit("a6000: cannot read %s (%s): apt-get install dataset-fashion-mnist, "
                             "or give --data DIR" % (path, e.strerror or e))
    images = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    labels = idx("train-labels-idx1-ubyte.gz", 8)
    return torch.from_numpy(images.copy()), torch.from_numpy(labels.astype(np.int64))


def build(hidden, image_size):
    import torchvision
    torch.manual_seed(0)
    backbone = torchvision.models.resnet18(weights=None)
    backbone.fc = torch.nn.Identity()
    for p in backbone.parameters():
        p.requires_grad_(False)
    backbone.eval()
    head = torch.nn.Sequential(
        torch.nn.Linear(512, hidden), torch.nn.ReLU(), torch.nn.Dropout(),
        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(), torch.nn.Dropout(),
        torch.nn.Linear(hidden, 10))

    def features(x):
        x = x.float().div_(255).sub_(0.2860).div_(0.3530).expand(-1, 3, -1, -1)
        if image_size != 28:
            x = torch.nn.functional.interpolate(x, size=image_size, mode="bilinear",
                                                align_corners=False)
        with torch.no_grad():
            return backbone(x)
    return features, head


class Trainer:
    """One backend's copy of the classifier, its optimizer and its timed iteration."""

    def __init__(self, group, head):
        self.group = group
        self.head = head
        self.params = [p for p in head.parameters()]
        self.flat = torch.zeros(sum(p.numel() for p in self.params))
        self.opt = torch.optim.SGD(self.params, lr=0.01, momentum=0.9)

    def step(self, feats, labels):
        t0 = time.perf_counter()
        self.opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.head(feats), labels)
        loss.backward()
        t1 = time.perf_counter()
        torch.cat([p.grad.reshape(-1) for p in self.params], out=self.flat)
        dist.all_reduce(self.flat, group=self.group)
        self.flat.div_(dist.get_world_size(self.group))
        offset = 0
        for p in self.params:
            p.grad.copy_(self.flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        t2 = time.perf_counter()
        self.opt.step()
        t3 = time.perf_counter()
        return (t1 - t0) + (t3 - t2), t2 - t1, loss.item()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch-sizes", default="32,64,128", help="per rank")
    parser.add_argument("--hidden", default="4096", help="classifier widths (trainable params)")
    parser.add_argument("--steps", type=int, default=20, help="timed iterations per config")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--backends", default="collie,gloo")
    parser.add_argument("--data", default=DATA)
    parser.add_argument("--json", help="append the results (rank 0) to this file, one per line")
    args = parser.parse_args(argv)

    dist.init_process_group("collie")
    rank, k = dist.get_rank(), dist.get_world_size()
    backends = args.backends.split(",")
    groups = {b: (None if b == "collie" else dist.new_group(backend=b)) for b in backends}
    world = collie.torch.collie_group_of().comm
    images, labels = load_fashion_mnist(args.data)
    n = images.shape[0]
    if rank == 0:
        print("# A6000 study on collie: %d rank(s), Fashion-MNIST (%d images), frozen resnet18 "
              "at %dx%d, classifier 512-H-H-10; medians over %d iterations" % (
                  k, n, args.image_size, args.image_size, args.steps))
        print("%5s %6s %7s %10s %10s %s %13s %13s %13s" % (
            "ranks", "batch", "hidden", "params", "compute_ms",
            " ".join("%9s" % ("comm_ms:" + b) for b in backends),
            "formula_param", "formula_bytes", "counted_bytes"))
    for hidden in [int(h) for h in args.hidden.split(",")]:
        for batch in [int(b) for b in args.batch_sizes.split(",")]:
            features, head = build(hidden, args.image_size)
            trainers = {b: Trainer(groups[b], copy.deepcopy(head)) for b in backends}
            params = sum(p.numel() for p in trainers[backends[0]].params)
            compute, comm, sent, losses = [], {b: [] for b in backends}, [], []
            per_epoch = n / (batch * k)
            for step in range(args.warmup + args.steps):
                start = ((step * k + rank) * batch) % (n - batch)
                t0 = time.perf_counter()
                feats = features(images[start:start + batch])  # once, for every backend
                extract = time.perf_counter() - t0
                y = labels[start:start + batch]
                for b in backends:
                    before = world.counters()[1]
                    c, m, loss = trainers[b].step(feats, y)
                    if step >= args.warmup:
                        comm[b].append(m)
                        if b == backends[0]:
                            compute.append(extract + c)
                            losses.append(loss)
                        if b == "collie":
                            sent.append(world.counters()[1] - before)
            row = {"ranks": k, "batch": batch, "hidden": hidden, "params": params,
                   "compute_ms": 1e3 * statistics.median(compute),
                   "comm_ms": {b: 1e3 * statistics.median(comm[b]) for b in backends},
                   "formula_params_per_epoch": per_epoch * params,
                   "formula_bytes_per_epoch": per_epoch * params * 4,
                   "counted_bytes_per_epoch": per_epoch * statistics.median(sent) if sent else 0,
                   "loss": statistics.mean(losses[-5:])}
            if rank == 0:
                print("%5d %6d %7d %10d %10.1f %s %13.3g %13.3g %13.3g" % (
                    k, batch, hidden, params, row["compute_ms"],
                    " ".join("%9.1f" % row["comm_ms"][b] for b in backends),
                    row["formula_params_per_epoch"], row["formula_bytes_per_epoch"],
                    row["counted_bytes_per_epoch"]), flush=True)
                if args.json:
                    with open(args.json, "a") as f:
                        f.write(json.dumps(row) + "\n")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
