# SPDX-License-Identifier: BSD-3-Clause
"""What torch 2.x runs on a process group, on collie, checked against Gloo in the same job.

    collie run -n N PYTHON tests/python/test_torch2.py SCENARIO[,SCENARIO...]

Scenarios given together run one after another in the same processes.

tensors     the tensor forms (all_gather_into_tensor, reduce_scatter_tensor with SUM
            and AVG, their coalesced forms), gather, scatter, the object collectives,
            batch_isend_irecv, barrier with device ids, group_name, subgroups made and
            destroyed, "cpu:collie" backend strings: each equal to Gloo's result
functional  torch.distributed._functional_collectives: all_reduce, all_gather_tensor,
            reduce_scatter_tensor, all_to_all_single, broadcast, against Gloo
mesh        DeviceMesh 1-D over every rank and 2-D (2 x n/2, or n x 1): reductions over
            each dimension against their formula
dtensor     DTensor: distribute_tensor (Shard, Replicate), full_tensor, redistribute,
            a sharded matmul: equal to the plain tensors
fsdp2       FSDP2's fully_shard of an MLP trained 5 SGD steps on collie and on Gloo
            from one seed: the same parameters (1e-5)
compile     torch.compile of a DDP model on collie trains as eager DDP on Gloo
table       every row of the issue's table, as a torch user writes it (one script;
            run under torchrun with the installed package by test_wheel.sh)

A scenario whose API this torch lacks exits 77 (skipped), naming it; the tensors
scenario runs on torch 1.13 too, skipping only the calls 1.13 does not have.
"""
import inspect
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import collie.torch  # noqa: E402,F401  (registers the backend)
import scenarios  # noqa: E402


def needs(have, what):
    if not have:
        print("skipped: this torch (%s) has no %s" % (torch.__version__, what))
        raise SystemExit(77)


def init(backend="collie"):
    dist.init_process_group(backend)
    return dist.get_rank(), dist.get_world_size(), dist.new_group(backend="gloo")


def values(n, r, salt=0, dtype=torch.float32):
    """Small integers: exact under sums in every dtype used here."""
    return ((torch.arange(n, dtype=torch.int64) * 7 + r * 3 + salt) % 5 - 2).to(dtype)


def same(a, b, what):
    assert torch.equal(a, b), "%s: collie %s, Gloo %s" % (what, a[:8].tolist(), b[:8].tolist())


def tensors():
    r, n, gloo = init()
    done, skipped = [], []
    # all_gather_into_tensor / reduce_scatter_tensor: torch 2.13+ routes them to the
    # backend's all_gather_single / reduce_scatter_single, earlier ones to the _base forms.
    for count in [1, 1000, 70001]:
        flat = torch.zeros(count * n)  # Gloo lacks it on 1.x: against the formula
        dist.all_gather_into_tensor(flat, values(count, r))
        same(flat, torch.cat([values(count, q) for q in range(n)]), "all_gather_into_tensor")
        stacked = torch.zeros(n, count)
        dist.all_gather_into_tensor(stacked, values(count, r))
        same(stacked, torch.stack([values(count, q) for q in range(n)]),
             "all_gather_into_tensor, stacked")
        for op in [dist.ReduceOp.SUM, dist.ReduceOp.AVG]:
            out = torch.zeros(count)
            dist.reduce_scatter_tensor(out, values(count * n, r), op=op)
            want = sum(values(count * n, q) for q in range(n))[r * count:(r + 1) * count]
            if op == dist.ReduceOp.AVG:
                want = want / n
            torch.testing.assert_close(out, want, rtol=0, atol=1e-6)
    done += ["all_gather_into_tensor", "reduce_scatter_tensor SUM/AVG"]

    # coalesced: the fast path of _coalescing_manager, and all_reduce_coalesced
    cm = getattr(dist.distributed_c10d, "_coalescing_manager", None)
    if cm is not None and "async_ops" in inspect.signature(cm).parameters:
        outs = [torch.zeros(k * n) for k in (3, 5)]
        with cm(async_ops=True) as handle:
            for o, k in zip(outs, (3, 5)):
                dist.all_gather_into_tensor(o, values(k, r, salt=k), async_op=True)
        handle.wait()
        for o, k in zip(outs, (3, 5)):
            same(o, torch.cat([values(k, q, salt=k) for q in range(n)]), "coalesced all_gather")
        outs = [torch.zeros(k) for k in (3, 5)]
        with cm(async_ops=True) as handle:
            for o, k in zip(outs, (3, 5)):
                dist.reduce_scatter_tensor(o, values(k * n, r), async_op=True)
        handle.wait()
        for o, k in zip(outs, (3, 5)):
            same(o, sum(values(k * n, q) for q in range(n))[r * k:(r + 1) * k],
                 "coalesced reduce_scatter")
        outs = [values(3, r), values(5, r, dtype=torch.float64), values(2, r, dtype=torch.int64)]
        with cm(async_ops=True) as handle:  # mixed dtypes: one reduction each
            for o in outs:
                dist.all_reduce(o, async_op=True)
        handle.wait()
        for o in outs:
            same(o, sum(values(o.numel(), q, dtype=o.dtype) for q in range(n)),
                 "coalesced all_reduce %s" % o.dtype)
        done.append("_coalescing_manager")
    else:
        skipped.append("_coalescing_manager")
    parts = [values(4, r), values(12, r).reshape(3, 4).t()]  # a non-contiguous one
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in 2.x, still served
        dist.all_reduce_coalesced(parts)
    same(parts[0], sum(values(4, q) for q in range(n)), "all_reduce_coalesced")
    same(parts[1], sum(values(12, q) for q in range(n)).reshape(3, 4).t(),
         "all_reduce_coalesced, non-contiguous")
    done.append("all_reduce_coalesced")

    # gather and scatter, to and from a root in the middle
    root = n // 2
    got = [torch.zeros(7) for _ in range(n)] if r == root else None
    dist.gather(values(7, r), got, dst=root)
    if r == root:
        for q in range(n):
            same(got[q], values(7, q), "gather from %d" % q)
    mine = torch.zeros(7)
    dist.scatter(mine, [values(7, q, salt=1) for q in range(n)] if r == root else None, src=root)
    same(mine, values(7, r, salt=1), "scatter")
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": r, "name": "r%d" % r})
    assert objs == [{"rank": q, "name": "r%d" % q} for q in range(n)], objs
    box = [{"from": root}] if r == root else [None]
    dist.broadcast_object_list(box, src=root)
    assert box == [{"from": root}], box
    if hasattr(dist, "scatter_object_list"):
        out = [None]
        dist.scatter_object_list(out, [q * 10 for q in range(n)] if r == root else None, src=root)
        assert out == [r * 10], out
    done += ["gather", "scatter", "object collectives"]

    # point-to-point batches and a barrier naming a device
    if n > 1:
        send, recv = values(100, r), torch.zeros(100)
        ops = [dist.P2POp(dist.isend, send, (r + 1) % n), dist.P2POp(dist.irecv, recv, (r - 1) % n)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        same(recv, values(100, (r - 1) % n), "batch_isend_irecv")
        done.append("batch_isend_irecv")
    try:  # torch 1.x takes device ids from NCCL users only: Gloo refuses them too
        dist.barrier(group=gloo, device_ids=[0])
    except RuntimeError:
        skipped.append("barrier(device_ids) on CPU")
    else:
        dist.barrier(device_ids=[0])
        done.append("barrier(device_ids)")

    # names and subgroups
    world = dist.group.WORLD
    if hasattr(world, "group_name"):
        assert world.group_name, "the default group has no name"
        done.append("group_name")
    else:
        skipped.append("group_name")
    for _ in range(3):  # made and destroyed, again and again
        sub = dist.new_group([0, 1] if n > 1 else [0])
        if r in ([0, 1] if n > 1 else [0]):
            t = values(5, r)
            dist.all_reduce(t, group=sub)
            same(t, sum(values(5, q) for q in range(min(n, 2))), "subgroup all_reduce")
        dist.destroy_process_group(sub)
    done.append("new_group/destroy_process_group")
    if hasattr(dist.Backend, "backend_capability"):  # "device:backend" strings
        pair = dist.new_group(backend="cpu:collie")
        t = values(5, r)
        dist.all_reduce(t, group=pair)
        same(t, sum(values(5, q) for q in range(n)), "cpu:collie group")
        assert collie.torch.collie_group_of(pair) is not None
        assert collie.torch.collie_group_of(gloo) is None
        done.append('backend "cpu:collie"')
    else:
        skipped.append('backend "cpu:collie"')
    dist.barrier()
    dist.destroy_process_group()
    print("tensors: rank %d of %d: ok: %s; this torch lacks: %s"
          % (r, n, ", ".join(done), ", ".join(skipped) or "nothing"))


def functional():
    try:
        import torch.distributed._functional_collectives as fc
    except ImportError:
        needs(False, "torch.distributed._functional_collectives")
    r, n, gloo = init()
    world = dist.group.WORLD
    all_gather = getattr(fc, "all_gather_single", None) or fc.all_gather_tensor  # 2.13+ names
    reduce_scatter = getattr(fc, "reduce_scatter_single", None) or fc.reduce_scatter_tensor
    for count in [1, 1000, 70000]:
        x = values(count * n, r)
        for group in (world, gloo):
            out = fc.all_reduce(x, "sum", group)
            want = sum(values(count * n, q) for q in range(n))
            same(fc.wait_tensor(out) if hasattr(fc, "wait_tensor") else out, want,
                 "functional all_reduce %s" % dist.get_backend(group))
            same(all_gather(values(count, r), 0, group),
                 torch.cat([values(count, q) for q in range(n)]), "functional all_gather_tensor")
            same(reduce_scatter(x, "sum", 0, group),
                 want[r * count:(r + 1) * count], "functional reduce_scatter_tensor")
            a2a = fc.all_to_all_single(x, None, None, group)
            same(a2a, torch.cat([values(count * n, q)[r * count:(r + 1) * count]
                                 for q in range(n)]), "functional all_to_all_single")
            same(fc.broadcast(values(count, r), n - 1, group), values(count, n - 1),
                 "functional broadcast")
    dist.destroy_process_group()
    print("functional: ok on rank %d of %d" % (r, n))


def mesh():
    try:
        from torch.distributed.device_mesh import init_device_mesh
    except ImportError:
        needs(False, "torch.distributed.device_mesh")
    dist.init_process_group("collie")
    r, n = dist.get_rank(), dist.get_world_size()
    flat = init_device_mesh("cpu", (n,), mesh_dim_names=("dp",))
    assert collie.torch.collie_group_of(flat.get_group("dp")) is not None
    t = values(10, r)
    dist.all_reduce(t, group=flat.get_group("dp"))
    same(t, sum(values(10, q) for q in range(n)), "1-D mesh all_reduce")
    rows = 2 if n % 2 == 0 else n
    grid = init_device_mesh("cpu", (rows, n // rows), mesh_dim_names=("dp", "tp"))
    i, j = divmod(r, n // rows)
    for dim, members in (("dp", [q * (n // rows) + j for q in range(rows)]),
                         ("tp", [i * (n // rows) + q for q in range(n // rows)])):
        g = grid.get_group(dim)
        assert sorted(dist.get_process_group_ranks(g)) == members, (dim, members)
        t = values(10, r)
        dist.all_reduce(t, group=g)
        same(t, sum(values(10, q) for q in members), "2-D mesh all_reduce over %s" % dim)
    dist.destroy_process_group()
    print("mesh: 1-D (%d) and 2-D (%d x %d) ok on rank %d" % (n, rows, n // rows, r))


def dtensor():
    try:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    except ImportError:
        needs(False, "torch.distributed.tensor (DTensor)")
    dist.init_process_group("collie")
    r, n = dist.get_rank(), dist.get_world_size()
    m = init_device_mesh("cpu", (n,))
    torch.manual_seed(0)  # the same full tensors on every rank
    a, b = torch.randn(4 * n + 1, 6), torch.randn(6, 3 * n)
    da = distribute_tensor(a, m, [Shard(0)])
    same(da.to_local(), torch.chunk(a, n)[r], "DTensor Shard(0): this rank's shard")
    same(da.full_tensor(), a, "DTensor Shard(0) full_tensor")
    same(da.redistribute(m, [Replicate()]).to_local(), a, "DTensor Shard -> Replicate")
    db = distribute_tensor(b, m, [Shard(1)])
    same(db.redistribute(m, [Shard(0)]).full_tensor(), b, "DTensor Shard(1) -> Shard(0)")
    prod = da @ distribute_tensor(b, m, [Replicate()])
    torch.testing.assert_close(prod.full_tensor(), a @ b)
    partial = distribute_tensor(a[:, :n * 2], m, [Shard(1)]) @ distribute_tensor(
        b[:n * 2, :], m, [Shard(0)])  # a Partial sum: reduced on full_tensor()
    torch.testing.assert_close(partial.full_tensor(), a[:, :n * 2] @ b[:n * 2, :])
    dist.destroy_process_group()
    print("dtensor: ok on rank %d of %d" % (r, n))


def fsdp2_train(mesh_, steps=5):
    from torch.distributed.fsdp import fully_shard
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                torch.nn.ReLU(), torch.nn.Linear(64, 4))
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh_)
    fully_shard(model, mesh=mesh_)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    r = dist.get_rank()
    for step in range(steps):
        g = torch.Generator().manual_seed(1000 * step + r)
        x, y = torch.randn(16, 20, generator=g), torch.randint(0, 4, (16,), generator=g)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return torch.cat([p.full_tensor().detach().reshape(-1) for p in model.parameters()])


def fsdp2():
    try:
        from torch.distributed.device_mesh import DeviceMesh
        from torch.distributed.fsdp import fully_shard  # noqa: F401
    except ImportError:
        needs(False, "FSDP2 (torch.distributed.fsdp.fully_shard)")
    r, n, gloo = init()
    on_collie = fsdp2_train(DeviceMesh.from_group(dist.group.WORLD, "cpu"))
    on_gloo = fsdp2_train(DeviceMesh.from_group(gloo, "cpu"))
    diff = (on_collie - on_gloo).abs().max().item()
    assert diff < 1e-5, "FSDP2 on collie and on Gloo differ by %g" % diff
    dist.destroy_process_group()
    print("fsdp2: ok on rank %d of %d (max difference %.2g)" % (r, n, diff))


def compile_ddp():
    needs(hasattr(torch, "compile"), "torch.compile")
    r, n, gloo = init()
    unraisable = []  # e.g. a __del__ of an object dynamo rebuilt without its __init__
    sys.unraisablehook = unraisable.append

    def run(group, compiled):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 4))
        ddp = torch.nn.parallel.DistributedDataParallel(model, process_group=group)
        step_fn = torch.compile(ddp) if compiled else ddp
        opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
        for step in range(5):
            g = torch.Generator().manual_seed(1000 * step + r)
            x, y = torch.randn(16, 20, generator=g), torch.randint(0, 4, (16,), generator=g)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(step_fn(x), y).backward()
            opt.step()
        return torch.cat([p.detach().reshape(-1) for p in model.parameters()])

    on_collie = run(None, True)
    on_gloo = run(gloo, False)
    diff = (on_collie - on_gloo).abs().max().item()
    assert diff < 1e-5, "compiled DDP on collie and eager DDP on Gloo differ by %g" % diff
    assert not unraisable, "ignored exceptions: %s" % [str(u.exc_value) for u in unraisable]
    dist.destroy_process_group()
    print("compile: ok on rank %d of %d (max difference %.2g)" % (r, n, diff))


if __name__ == "__main__":
    scenarios.run({"tensors": tensors, "functional": functional, "mesh": mesh, "dtensor": dtensor,
                   "fsdp2": fsdp2, "compile": compile_ddp}, sys.argv[1])
