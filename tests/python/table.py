# SPDX-License-Identifier: BSD-3-Clause
"""A torch user's script, as torchrun runs it: every call that had failed on collie
under torch 2.x, on the backend named by argv[1] ("gloo", "collie", "cpu:collie,...").
Rank 0 writes each call's result (a list of numbers) to the JSON file argv[2]; the
caller (test_wheel.sh) compares collie's file with Gloo's.  No import of collie and no
sys.path edit: torch finds the installed package's backend through its entry point."""
import json
import os
import sys

import torch
import torch.distributed as dist

backend, path = sys.argv[1], sys.argv[2]
dist.init_process_group(backend)
r, n = dist.get_rank(), dist.get_world_size()
out = {}


def row(name, tensor):
    out[name] = [round(float(v), 5) for v in tensor.reshape(-1).tolist()]


def x(k, salt=0):
    return (torch.arange(k, dtype=torch.float32) * 7 + r * 3 + salt) % 5 - 2


t = x(6)
dist.all_reduce(t)
row("all_reduce", t)
o = torch.zeros(2 * n)
dist.all_to_all_single(o, x(2 * n))
row("all_to_all_single", o)
sent = [(r + k) % 2 + 1 for k in range(n)]
got = [(q + r) % 2 + 1 for q in range(n)]
o = torch.zeros(sum(got))
dist.all_to_all_single(o, x(sum(sent)), got, sent)
row("all_to_all_single, splits", o)
dist.barrier()

torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    model(x(16, step).reshape(2, 8)).sum().backward()
    opt.step()
row("DDP", torch.cat([p.detach().reshape(-1) for p in model.parameters()]))

o = torch.zeros(3 * n)
dist.all_gather_into_tensor(o, x(3))
row("all_gather_into_tensor", o)
for op in ("SUM", "AVG"):
    o = torch.zeros(3)
    dist.reduce_scatter_tensor(o, x(3 * n), op=getattr(dist.ReduceOp, op))
    row("reduce_scatter_tensor " + op, o)
out["group_name"] = [len(dist.group.WORLD.group_name) > 0]
g = dist.new_group([0, 1])
if r < 2:
    t = x(4)
    dist.all_reduce(t, group=g)
    row("new_group all_reduce", t)
dist.destroy_process_group(g)

import torch.distributed._functional_collectives as fc  # noqa: E402
row("functional all_reduce", fc.all_reduce(x(5), "sum", dist.group.WORLD))

from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.tensor import Shard, distribute_tensor  # noqa: E402

mesh = init_device_mesh("cpu", (n,))
t = x(4)
dist.all_reduce(t, group=mesh.get_group())
row("init_device_mesh all_reduce", t)
torch.manual_seed(1)
full = torch.randn(2 * n + 1, 3)
row("DTensor full_tensor", distribute_tensor(full, mesh, [Shard(0)]).full_tensor())

from torch.distributed.fsdp import fully_shard  # noqa: E402

torch.manual_seed(0)
mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
for layer in (mlp[0], mlp[2], mlp):
    fully_shard(layer, mesh=mesh)
opt = torch.optim.SGD(mlp.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    mlp(x(16, step).reshape(2, 8)).sum().backward()
    opt.step()
row("FSDP2", torch.cat([p.full_tensor().detach().reshape(-1) for p in mlp.parameters()]))

if "collie" in backend:  # where the backend came from: the installed package
    import collie
    out["collie package"] = [collie.__file__, collie.__version__]
if r == 0:
    with open(path, "w") as f:
        json.dump(out, f, indent=0)
dist.destroy_process_group()
print("table: %d calls on %s, rank %d of %d" % (len(out), backend, r, n), flush=True)
if backend == "gloo":
    # torch 2.15's Gloo now and then aborts at interpreter exit, after its work is done
    # ("terminate called without an active exception": seen at 3 ranks); the reference's
    # results are written by now, and collie's runs exit normally.
    os._exit(0)
