"""collie as a torch.distributed backend, checked against Gloo in the same job.

    collie run -n N /usr/bin/python3 tests/python/test_torch.py SCENARIO

ops       every collective the backend serves, on every dtype Gloo supports,
          equal to Gloo's result on the same inputs (bfloat16, which Gloo
          rejects, and reduce_scatter, which it lacks, against their exact
          values); async_op works; send/recv both ways
ddp       DistributedDataParallel on collie and on Gloo, same model, data and
          seed, 50 steps: the same parameters (float tolerance)
mismatch  rank 1 calls another collective: every rank raises CollieError,
          naming MISMATCH, within the timeout; later calls raise at once
package   the plain package: numpy arrays, non-blocking calls, split, unique ids
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import collie  # noqa: E402
import collie.torch  # noqa: E402,F401  (registers the backend)


def init():
    dist.init_process_group("collie")
    return dist.get_rank(), dist.get_world_size(), dist.new_group(backend="gloo")


def values(dtype, n, r, salt=0):
    """Small integers, exact in every dtype and under every op."""
    x = (torch.arange(n, dtype=torch.int64) * 7 + r * 3 + salt) % 5 - 2
    return x.to(dtype)


def ops():
    r, n, gloo = init()
    ops_ = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    checked = 0
    for dtype in [torch.float32, torch.float64, torch.int32, torch.int64, torch.int8, torch.uint8]:
        for count in [1, 7, 1000, 70000]:
            for op in ops_:
                a, b = values(dtype, count, r), values(dtype, count, r)
                dist.all_reduce(a, op=op)
                dist.all_reduce(b, op=op, group=gloo)
                assert torch.equal(a, b), ("all_reduce", dtype, count, op)
                a, b = values(dtype, count, r), values(dtype, count, r)
                dist.reduce(a, dst=n - 1, op=op)
                dist.reduce(b, dst=n - 1, op=op, group=gloo)
                if r == n - 1:
                    assert torch.equal(a, b), ("reduce", dtype, count, op)
                checked += 2
            a, b = values(dtype, count, r), values(dtype, count, r)
            dist.broadcast(a, src=n // 2)
            dist.broadcast(b, src=n // 2, group=gloo)
            assert torch.equal(a, b), ("broadcast", dtype, count)
            outs_a = [torch.zeros(count, dtype=dtype) for _ in range(n)]
            outs_b = [torch.zeros(count, dtype=dtype) for _ in range(n)]
            dist.all_gather(outs_a, values(dtype, count, r))
            dist.all_gather(outs_b, values(dtype, count, r), group=gloo)
            assert all(torch.equal(x, y) for x, y in zip(outs_a, outs_b)), ("all_gather", dtype)
            big = torch.zeros(count * n, dtype=dtype)  # Gloo has no _allgather_base
            dist._all_gather_base(big, values(dtype, count, r))
            assert torch.equal(big, torch.cat(outs_b)), ("_all_gather_base", dtype)
            ia, oa, ob = values(dtype, count * n, r), torch.zeros(count * n, dtype=dtype), \
                torch.zeros(count * n, dtype=dtype)
            dist.all_to_all_single(oa, ia)
            dist.all_to_all_single(ob, ia.clone(), group=gloo)
            assert torch.equal(oa, ob), ("all_to_all_single", dtype)
            if dtype.is_floating_point or dtype == torch.int64:  # Gloo has no reduce_scatter
                out = torch.zeros(count, dtype=dtype)
                dist.reduce_scatter(out, [values(dtype, count, r, salt=k) for k in range(n)])
                want = sum(values(dtype, count, q, salt=r).to(torch.float64) for q in range(n))
                assert torch.equal(out.to(torch.float64), want), ("reduce_scatter", dtype)
            checked += 5
    for dtype in [torch.bfloat16, torch.float16]:  # Gloo rejects bfloat16: exact values
        a = values(dtype, 1000, r)
        dist.all_reduce(a)
        want = sum(values(torch.float64, 1000, q) for q in range(n))
        assert torch.equal(a.to(torch.float64), want), ("all_reduce", dtype)
        checked += 1
    works = [dist.all_reduce(torch.full((5,), float(r)), async_op=True) for _ in range(4)]
    for w in reversed(works):
        w.wait()
    peer = (r + 1) % n
    if n > 1:
        msg = torch.arange(100000, dtype=torch.float32) + r
        got = torch.zeros(100000)
        reqs = [dist.isend(msg, peer), dist.irecv(got, (r - 1) % n)]
        for q in reqs:
            q.wait()
        assert torch.equal(got, torch.arange(100000, dtype=torch.float32) + (r - 1) % n)
    dist.barrier()
    dist.destroy_process_group()
    print("ops: %d cases ok on rank %d of %d" % (checked, r, n))


def train(group, steps=50):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    ddp = torch.nn.parallel.DistributedDataParallel(model, process_group=group,
                                                    bucket_cap_mb=0.001)  # several buckets
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    for step in range(steps):
        g = torch.Generator().manual_seed(1000 * step + dist.get_rank(group))
        x, y = torch.randn(16, 20, generator=g), torch.randint(0, 4, (16,), generator=g)
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def ddp():
    r, n, gloo = init()
    on_collie = train(None)
    on_gloo = train(gloo)
    diff = (on_collie - on_gloo).abs().max().item()
    assert diff < 1e-5, "DDP on collie and on Gloo differ by %g" % diff
    dist.destroy_process_group()
    print("ddp: ok on rank %d of %d (max difference %.2g)" % (r, n, diff))


def mismatch():
    r, n, _ = init()
    t0 = time.time()
    try:
        if r == 1:
            dist.broadcast(torch.zeros(10), src=0)
        else:
            dist.all_reduce(torch.zeros(10))
        dist.barrier()
    except collie.CollieError as e:
        assert e.status == "MISMATCH", e
    else:
        raise AssertionError("a mismatched collective did not raise on rank %d" % r)
    assert time.time() - t0 < 15, "took %.1f s" % (time.time() - t0)
    try:
        dist.all_reduce(torch.zeros(3))
    except collie.CollieError as e:
        assert e.status == "MISMATCH", e
    else:
        raise AssertionError("the failure is not sticky")
    print("mismatch: ok on rank %d of %d" % (r, n))


def package():
    comm = collie.init()
    r, n = comm.rank, comm.size
    x = np.arange(5, dtype=np.float32) + r
    comm.allreduce(x)
    assert (x == np.arange(5) * n + n * (n - 1) / 2).all(), x
    req = comm.iallreduce(np.full(3, r + 1, dtype=np.int64), op="max")
    assert (req.wait() == n).all()
    out = np.zeros(2 * n, dtype=np.int32)
    comm.allgather(np.array([r, r * 10], dtype=np.int32), out)
    assert list(out) == sum([[k, k * 10] for k in range(n)], [])
    uid = np.frombuffer(collie.get_unique_id() if r == 0 else bytes(128), dtype=np.uint8).copy()
    comm.broadcast(uid, 0)
    with collie.init_rank(n, uid.tobytes(), r) as c2:
        y = torch.ones(4, dtype=torch.bfloat16)
        c2.allreduce(y)
        assert (y.float() == n).all()
    sub = comm.split(r % 2, -r)
    z = np.ones(1, dtype=np.float32)
    sub.allreduce(z)
    assert z[0] == sub.size
    try:
        comm.allreduce(np.zeros(3, np.float32), op="bogus")
        raise AssertionError("a bad op was accepted")
    except ValueError:
        pass
    try:
        comm.send(np.zeros(1, np.float32), n)
        raise AssertionError("a bad peer was accepted")
    except collie.CollieError as e:
        assert e.status == "INVALID_ARG" and "peer" in str(e), e
    with comm.group():
        reqs = [comm.iallreduce(np.full(10, k, np.float64)) for k in range(20)]
    for k, q in enumerate(reqs):
        assert (q.wait() == k * n).all()
    sub.finalize()
    comm.finalize()
    print("package: ok on rank %d of %d (collie %s)" % (r, n, collie.version()))


if __name__ == "__main__":
    {"ops": ops, "ddp": ddp, "mismatch": mismatch, "package": package}[sys.argv[1]]()
