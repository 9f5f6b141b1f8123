# SPDX-License-Identifier: BSD-3-Clause
"""What the torch.distributed layer costs per call: an 8-byte all_reduce through
collie's own Python call, through dist.all_reduce on collie, and on Gloo, in the same
processes, rounds alternated; medians over the rounds (the slowest rank's view is
rank 0's after a barrier each round).

    collie run -n 2 PYTHON scripts/torch_percall.py [ROUNDS] [CALLS]

PYTHON with torch; collie importable (installed, or PYTHONPATH=python with
COLLIE_LIBRARY=build/libcollie.so)."""
import statistics
import sys
import time

import torch
import torch.distributed as dist

import collie.torch

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
dist.init_process_group("collie")
gloo = dist.new_group(backend="gloo")
comm = collie.torch.collie_group_of().comm
t = torch.ones(2)
ways = {"collie.Comm.allreduce": lambda: comm.allreduce(t),
        "dist.all_reduce on collie": lambda: dist.all_reduce(t),
        "dist.all_reduce on Gloo": lambda: dist.all_reduce(t, group=gloo)}
us = {name: [] for name in ways}
for _ in range(rounds):
    for name, call in ways.items():
        dist.barrier(group=gloo)
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        us[name].append((time.perf_counter() - t0) / calls * 1e6)
if dist.get_rank() == 0:
    print("torch %s, %d ranks, %d rounds of %d calls" % (torch.__version__,
                                                       dist.get_world_size(), rounds, calls))
    for name, v in us.items():
        print("%-26s median %7.1f us  (%.1f-%.1f)" % (name, statistics.median(v), min(v), max(v)))
dist.destroy_process_group()
