# SPDX-License-Identifier: BSD-3-Clause
"""backend_torch.py - `collie bench --baseline torch`: one rank of the
torch.distributed measurement.

The driver (`collie bench -n N --baseline torch`) runs this script (it needs
torch only, never libcollie) under `collie run`, which sets
torchrun's RANK, WORLD_SIZE, MASTER_ADDR, ..., with the measuring job's
arguments, and reads back its rows.  It runs the loop of
tools/bench/sweep.c on torch.distributed's Gloo backend, the one PyTorch
uses for CPU tensors: the same sizes, warm-up, --min-time scaling, the
slowest rank's mean and median per operation, and a last run on known
inputs whose every element is checked against the same formulas.

What torch.distributed lacks is done the way a PyTorch user has to: an
out-of-place allreduce, reduce or alltoall copies the input into the output
first (the copy is timed); AVG is SUM then a division on the receiving
ranks; there is no reduce_scatter on Gloo (not measured).  Rows carry no
machine probe (handoff 0): the table uses the probes of collie's job.
"""
import argparse
import math
import os
import sys
import time

# One thread a rank unless the user says otherwise, as torchrun sets it for
# several processes a host: with torch's default, a thread per CPU in every
# rank, the ranks' pools oversubscribe the cores (measured on 16 vCPUs, 8
# ranks: a 256 KiB allreduce took 86 ms, and 1.6 ms with one thread).  Read
# by the OpenMP runtime when torch loads, so set before the import.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402 (after OMP_NUM_THREADS)
import torch.distributed as dist  # noqa: E402

COLLS = ["allreduce", "broadcast", "reduce", "allgather", "reduce_scatter", "alltoall",
         "pingpong"]  # tools/bench/bench.h's enum bench_coll, in order
DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64"]
SIZES = [4, 8, 2, 2, 1, 1, 4, 8]
OPS = ["sum", "prod", "min", "max", "avg"]
TORCH_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
                torch.uint8, torch.int32, torch.int64]
ITERS_CAP = 1000000


def parse(argv):
    p = argparse.ArgumentParser(prog="backend_torch.py")
    p.add_argument("colls", nargs="*")
    p.add_argument("-b", type=int)  # options.c's defaults: 8 and 64 MiB, or all of mlbench's
    p.add_argument("-e", type=int)
    p.add_argument("-f", type=float, default=2.0)
    p.add_argument("--sizes")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--op", default="sum")
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.01)
    p.add_argument("--root", type=int, default=0)
    p.add_argument("--inplace", action="store_true")
    p.add_argument("--topology")  # the neighbour operations': not measured here
    p.add_argument("--no-check", action="store_true")
    p.add_argument("--corrupt", action="store_true")
    p.add_argument("--raw")
    p.add_argument("--round", type=int, default=0)
    return p.parse_args(argv)


def sizes_for(o, c, n):
    """tools/bench/options.c's bench_sizes: total bytes of the largest buffer, in order."""
    es = SIZES[DTYPES.index(o.dtype)]
    unit = es * (n if COLLS[c] in ("allgather", "reduce_scatter", "alltoall") else 1)
    out = []
    if o.sizes == "mlbench":
        lo, hi = o.b or 0, math.inf if o.e is None else o.e
        for i in range(80):
            b = int(round(10.0 ** (8.0 * i / 79.0))) * es // unit * unit
            if b and (not out or b != out[-1]) and lo <= b <= hi:
                out.append(b)
        return out
    b, hi = float(8 if o.b is None else o.b), 64 << 20 if o.e is None else o.e
    while b <= hi * 1.000001:
        v = int(b) // unit * unit
        if not out or v != out[-1]:
            out.append(v)
        b = b * o.f if b else 1  # -b 0: a zero-byte call, then 1 byte onwards
    return out


def reduces(name):
    return name in ("allreduce", "reduce", "reduce_scatter")


def inputs(name, op, r, n, idx):
    """sweep.c's bench_input for index tensor idx (int64), as float64."""
    if not reduces(name):
        return ((r * 31 + idx) % 101).double()
    if op == "prod":
        return (idx % n == r).double() + 1.0
    if op in ("min", "max"):
        return (idx % 5 + (r + idx) % n).double()
    return (idx % 3 + r % 2).double()


def reduced(dt, op, n, idx):
    """sweep.c's bench_reduced, already in the element type."""
    t = TORCH_DTYPES[DTYPES.index(dt)]
    s = (n * (idx % 3) + n // 2).double()
    if op == "prod":
        return torch.full(idx.shape, 2.0, dtype=torch.float64).to(t)
    if op == "min":
        return (idx % 5).to(t)
    if op == "max":
        return (idx % 5 + n - 1).to(t)
    if op == "avg":
        if dt == "float64":
            return (s / n).to(t)
        if t.is_floating_point:
            return (s.float() / float(n)).to(t)
        return torch.div(s.long(), n, rounding_mode="trunc").to(t)
    return s.to(t)


class Job:
    def __init__(self, o):
        self.o = o
        self.rank, self.size = dist.get_rank(), dist.get_world_size()
        self.dtype = TORCH_DTYPES[DTYPES.index(o.dtype)]
        self.es = SIZES[DTYPES.index(o.dtype)]
        self.rop = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.SUM,
                    "prod": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
                    "max": dist.ReduceOp.MAX}[o.op]

    def average(self, t):
        """AVG: the sum divided in the element's own arithmetic, as sweep.c's bench_divide."""
        if self.o.op != "avg":
            return
        if t.dtype == torch.float64:
            t.div_(self.size)
        elif t.is_floating_point():
            t.copy_(t.float() / float(self.size))
        else:
            t.copy_(torch.div(t, self.size, rounding_mode="trunc"))

    def run(self, name, send, recv, count):
        """One operation; send is recv when in place (broadcast: always)."""
        o, n = self.o, self.size
        if count == 0:
            return  # nothing to move (as the Gloo backend)
        if name == "allreduce":
            if send is not recv:
                recv.copy_(send)
            dist.all_reduce(recv, op=self.rop)
            self.average(recv)
        elif name == "broadcast":
            dist.broadcast(recv, src=o.root)
        elif name == "reduce":
            if send is not recv:
                recv.copy_(send)
            dist.reduce(recv, dst=o.root, op=self.rop)
            if self.rank == o.root:
                self.average(recv)
        elif name == "allgather":
            mine = send if send is not recv else self.blocks[self.rank]
            dist.all_gather(self.blocks, mine)
        elif name == "alltoall":
            dist.all_to_all_single(recv, send.clone() if send is recv else send)
        elif name == "pingpong":
            peer = self.rank ^ 1
            if peer >= n:
                return
            if self.rank % 2 == 0:
                dist.send(send, peer)
                dist.recv(recv, peer)
            else:
                dist.recv(recv, peer)
                dist.send(send, peer)

    def max_of(self, v):
        t = torch.tensor([v], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.item()

    def sum_of(self, v):
        t = torch.tensor([v], dtype=torch.int64)
        dist.all_reduce(t)
        return int(t.item())

    def buffers(self, name, nbytes):
        """(send, recv, count) for a size, as sweep.c's shape() and in_place(); an
        allgather's output blocks, made once per size as a PyTorch program would."""
        n, es = self.size, self.es
        elems = nbytes // es
        count = elems // n if name in ("allgather", "alltoall") else elems
        send_elems = count if name == "allgather" else elems
        send = torch.zeros(send_elems, dtype=self.dtype)
        recv = torch.zeros(elems, dtype=self.dtype)
        if (self.o.inplace and name != "pingpong") or name == "broadcast":
            send = recv
        self.blocks = list(recv.split(count)) if name == "allgather" and count else None
        return send, recv, count

    def fill(self, name, send, recv, count):
        o, r, n = self.o, self.rank, self.size
        if name == "broadcast" and r != o.root:
            return  # its buffer is the output
        buf = send
        if o.inplace and name == "allgather":  # the own block, where recv keeps it
            buf = recv[r * count:(r + 1) * count]
        idx = torch.arange(buf.numel(), dtype=torch.int64)
        buf.copy_(inputs(name, o.op, r, n, idx).to(self.dtype))

    def verify(self, name, recv, count):
        o, r, n = self.o, self.rank, self.size
        if (name == "reduce" and r != o.root) or (name == "pingpong" and (r ^ 1) >= n):
            return 0
        elems = count * n if name in ("allgather", "alltoall") else count
        idx = torch.arange(elems, dtype=torch.int64)
        if name == "broadcast":
            want = inputs(name, o.op, o.root, n, idx).to(self.dtype)
        elif name == "pingpong":
            want = inputs(name, o.op, r ^ 1, n, idx).to(self.dtype)
        elif name == "allgather":
            want = inputs(name, o.op, idx // count, n, idx % count).to(self.dtype)
        elif name == "alltoall":
            want = inputs(name, o.op, idx // count, n, r * count + idx % count).to(self.dtype)
        else:
            want = reduced(o.dtype, o.op, n, idx)
        return int((recv[:elems] != want).sum().item())

    def size_row(self, c, nbytes):
        o, name = self.o, COLLS[c]
        send, recv, count = self.buffers(name, nbytes)
        self.fill(name, send, recv, count)
        warm, timed_warmup = 0.0, o.warmup // 2
        for i in range(o.warmup):
            if i == o.warmup - timed_warmup:
                warm = time.perf_counter()
            self.run(name, send, recv, count)
        iters = o.iters
        if timed_warmup and o.min_time > 0:
            per_op = self.max_of((time.perf_counter() - warm) / timed_warmup)
            want = math.ceil(o.min_time / per_op) if per_op > 0 else ITERS_CAP
            iters = max(iters, min(want, ITERS_CAP))
            for _ in range(iters // 10):
                self.run(name, send, recv, count)
        dist.barrier()
        times = []
        prev = time.perf_counter()
        for _ in range(iters):
            self.run(name, send, recv, count)
            now = time.perf_counter()
            times.append((now - prev) / (2 if name == "pingpong" else 1))
            prev = now
        mean = sum(times) / iters
        median = sorted(times)[iters // 2]
        wrong = -1
        if not o.no_check:
            self.fill(name, send, recv, count)
            self.run(name, send, recv, count)
            if o.corrupt and self.rank == 0 and recv.numel():
                recv.view(torch.uint8)[0] ^= 0x40
            wrong = self.sum_of(self.verify(name, recv, count))
        mean, median = self.max_of(mean), self.max_of(median)
        local = int(os.environ.get("LOCAL_WORLD_SIZE", self.size))
        return "\t".join(str(v) for v in [
            "torch", c, o.round, self.size, local, nbytes, nbytes // self.es,
            DTYPES.index(o.dtype), OPS.index(o.op), int(o.inplace), "%.6f" % (mean * 1e6),
            "%.6f" % (median * 1e6), "0", "0", "0", "0", wrong, "gloo"]) + "\n"


def main(argv=None):
    o = parse(sys.argv[1:] if argv is None else argv)
    dist.init_process_group("gloo")  # env://: collie run sets torchrun's variables
    job = Job(o)
    if job.rank == 0:
        print("torch bench: %d thread(s) a rank (OMP_NUM_THREADS=%s)" %
              (torch.get_num_threads(), os.environ["OMP_NUM_THREADS"]), file=sys.stderr)
    for name in o.colls or ["allreduce"]:
        if name not in COLLS:
            raise SystemExit("backend_torch.py: %s is not measured with torch.distributed" % name)
        if name == "reduce_scatter":
            if job.rank == 0:
                print("torch bench: torch.distributed on Gloo has no reduce_scatter; not measured",
                      file=sys.stderr)
            continue
        c = COLLS.index(name)
        for nbytes in sizes_for(o, c, job.size):
            row = job.size_row(c, nbytes)
            if job.rank == 0 and o.raw:  # as measured: a sweep stopped midway keeps its rows
                with open(o.raw, "a") as f:
                    f.write(row)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
