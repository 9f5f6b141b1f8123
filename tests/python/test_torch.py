# SPDX-License-Identifier: BSD-3-Clause
"""collie as a torch.distributed backend, checked against Gloo in the same job.

    collie run -n N /usr/bin/python3 tests/python/test_torch.py SCENARIO[,SCENARIO...]

Scenarios given together run one after another in the same processes.

ops       every collective the backend serves (all_to_all with uneven splits too),
          on every dtype Gloo supports,
          equal to Gloo's result on the same inputs (bfloat16, which Gloo
          rejects, and reduce_scatter, which it lacks, against their exact
          values); async_op works; send/recv both ways
ddp       DistributedDataParallel on collie and on Gloo, same model, data and
          seed, 50 steps: the same parameters (float tolerance)
hooks     collie.torch.hooks (allreduce, fp16, bf16) on collie give the gradients
          PyTorch's own hooks give on Gloo; the compressed ones send half the bytes;
          on a Gloo group they are PyTorch's hooks
ef        DDP with int8_ef_hook and sign_ef_hook: identical parameters on every rank,
          under 0.35x and 0.1x the plain hook's bytes, and a final loss within 15% of
          the plain hook's
optimizer DistributedOptimizer on collie (no DDP) trains like DDP on Gloo: plain,
          with 2 backward passes per step, with an unused parameter, compressed (bfloat16,
          and int8 codes with error feedback); every rank's parameters alike
mismatch  rank 1 calls another collective: every rank raises, naming MISMATCH,
          within the timeout; later calls raise CollieError at once
kill      the last rank SIGKILLs itself mid-training: every other rank raises
          CollieError within COLLIE_TIMEOUT (its DDP step or the next one)
package   the plain package: numpy arrays, non-blocking calls, split, unique ids
neighbor  decentralized averaging from Python: topologies, schedules, per-call lists,
          hierarchical, windows; every result against the formula
neighbor_opt  collie.torch.NeighborOptimizer: atc over the full graph trains as DDP;
          awc over a schedule gives the bits of doing it by hand; global averaging
          leaves every rank with the same model
benchmark python -m collie.torch.benchmark, every mode, on a small resnet18: each
          prints a throughput, and acc_ratio against Gloo
a6000     examples/a6000.py (the A6000 study) on Fashion-MNIST, two configurations
(benchmark and a6000 exit 77, skipped, without torchvision or the data set)
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import collie  # noqa: E402
import collie.torch  # noqa: E402,F401  (registers the backend)
import scenarios  # noqa: E402


def test_time(seconds):
    """A wall-clock bound of the suite, times COLLIE_TEST_TIME_MULTIPLIER (tests/test_util.h)."""
    return seconds * max(1.0, float(os.environ.get("COLLIE_TEST_TIME_MULTIPLIER", "1")))


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
            sent = [(r + 2 * k) % 3 for k in range(n)]  # uneven, zeros included
            got = [(q + 2 * r) % 3 for q in range(n)]
            ia = values(dtype, sum(sent) * count, r).reshape(sum(sent), count)
            oa = torch.zeros(sum(got), count, dtype=dtype)
            ob = torch.zeros(sum(got), count, dtype=dtype)
            dist.all_to_all_single(oa, ia, got, sent)
            dist.all_to_all_single(ob, ia.clone(), got, sent, group=gloo)
            assert torch.equal(oa, ob), ("all_to_all_single, uneven splits", dtype)
            if dtype.is_floating_point or dtype == torch.int64:  # Gloo has no reduce_scatter
                out = torch.zeros(count, dtype=dtype)
                dist.reduce_scatter(out, [values(dtype, count, r, salt=k) for k in range(n)])
                want = sum(values(dtype, count, q, salt=r).to(torch.float64) for q in range(n))
                assert torch.equal(out.to(torch.float64), want), ("reduce_scatter", dtype)
            checked += 6
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


class WithSpare(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net, self.spare = net, torch.nn.Linear(3, 3)  # spare: never in the forward pass

    def forward(self, x):
        return self.net(x)


def small_model(unused=False):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    return WithSpare(model) if unused else model


def batch(step, rank):
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(16, 20, generator=g), torch.randint(0, 4, (16,), generator=g)


def grads_with_hook(group, hook):
    """Each parameter's gradient after 3 backward passes of DDP with hook on group, and the
    bytes collie sent during them (when group is collie's)."""
    ddp = torch.nn.parallel.DistributedDataParallel(small_model(), process_group=group,
                                                    bucket_cap_mb=0.001)
    ddp.register_comm_hook(group, hook)
    comm = collie.torch.collie_group_of().comm if group is None else None
    out, sent = [], 0
    for step in range(3):
        ddp.zero_grad()
        x, y = batch(step, dist.get_rank())
        before = comm.counters()[1] if comm else 0
        torch.nn.functional.cross_entropy(ddp(x), y).backward()
        sent += comm.counters()[1] - before if comm else 0
        out.append(torch.cat([p.grad.reshape(-1) for p in ddp.parameters()]))
    return torch.cat(out), sent


def hooks():
    from collie.torch import hooks as ch
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as th
    r, n, gloo = init()
    sent = {}
    for name, tol in [("allreduce_hook", 1e-6), ("fp16_compress_hook", 2e-3),
                      ("bf16_compress_hook", 2e-2)]:
        ours, sent[name] = grads_with_hook(None, getattr(ch, name))
        if name != "bf16_compress_hook":  # Gloo in torch 1.13 has no bfloat16
            theirs, _ = grads_with_hook(gloo, getattr(th, name))
            scale = theirs.abs().max().item()
            diff = (ours - theirs).abs().max().item()
            assert diff <= tol * scale, "%s: differs from PyTorch's by %g (scale %g)" % (
                name, diff, scale)
            same, _ = grads_with_hook(gloo, getattr(ch, name))  # any group: PyTorch's hook
            assert torch.equal(same, theirs), name
        else:
            exact, _ = grads_with_hook(None, ch.allreduce_hook)
            diff = (ours - exact).abs().max().item()
            assert diff <= tol * exact.abs().max().item(), "bf16: off by %g" % diff
    if n > 1:
        for name in ["fp16_compress_hook", "bf16_compress_hook"]:
            ratio = sent[name] / sent["allreduce_hook"]
            assert 0.4 < ratio < 0.6, "%s sent %.2f of the plain hook's bytes" % (name, ratio)
    dist.destroy_process_group()
    print("hooks: ok on rank %d of %d (bytes sent %s)" % (r, n, sent))


def ef():
    """DDP with int8_ef_hook and sign_ef_hook: every rank ends with the same bits, the
    codes move the bytes they promise, and training gets as far as without them."""
    from collie.torch import hooks as ch
    os.environ["COLLIE_EF_CODES"] = "all"  # the codes on one host too (else the result is exact)
    r, n, gloo = init()
    results, sent = {}, {}
    for name, hook in [("plain", ch.allreduce_hook), ("int8", ch.int8_ef_hook),
                       ("sign", ch.sign_ef_hook)]:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 4))
        ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.004)
        ddp.register_comm_hook(ch.ErrorFeedbackState() if name != "plain" else None, hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
        before = collie.torch.comm_of(None).counters()[1]
        losses = []
        for step in range(120):
            g = torch.Generator().manual_seed(1000 * step + r)
            x = torch.randn(32, 20, generator=g)
            y = (x[:, :4].argmax(dim=1))  # a rule the model can learn
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sent[name] = collie.torch.comm_of(None).counters()[1] - before
        params = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
        everyone = [torch.zeros_like(params) for _ in range(n)]
        dist.all_gather(everyone, params, group=gloo)
        assert all(torch.equal(everyone[0], p) for p in everyone), "%s: ranks differ" % name
        results[name] = sum(losses[-20:]) / 20
    for name in ["int8", "sign"]:
        assert results[name] < 1.15 * results["plain"] + 0.05, \
            "%s ends at loss %.3f, plain at %.3f" % (name, results[name], results["plain"])
    if n > 1:
        assert sent["int8"] < 0.35 * sent["plain"], "int8 sent %s of %s" % (sent["int8"], sent["plain"])
        assert sent["sign"] < 0.1 * sent["plain"], "sign sent %s of %s" % (sent["sign"], sent["plain"])
    try:
        ch.int8_ef_hook(None, None)  # registered without its state
        raise AssertionError("int8_ef_hook ran without an ErrorFeedbackState")
    except TypeError as e:
        assert "ErrorFeedbackState" in str(e), e
    dist.destroy_process_group()
    print("ef: ok on rank %d of %d (final losses %s, bytes sent %s)" % (r, n, results, sent))


def train_optimizer(make_opt, passes, unused, steps=30):
    model = small_model(unused)
    opt = make_opt(model)
    for step in range(steps):
        opt.zero_grad()
        for k in range(passes):
            x, y = batch(passes * step + k, dist.get_rank())
            torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def train_ddp_gloo(gloo, passes, unused, steps=30, momentum=0.9):
    """DDP on Gloo.  Its own function, so that the caller's reference keeps the Gloo group
    alive when DDP goes: on torch 1.13 a Reducer that drops a group's last reference
    destroys it holding the GIL, and deadlocks with a Gloo worker that waits for the GIL
    to free a tensor (pytorch/pytorch#56297)."""
    model = small_model(unused)
    ddp = torch.nn.parallel.DistributedDataParallel(model, process_group=gloo,
                                                    find_unused_parameters=unused)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=momentum)
    for step in range(steps):
        opt.zero_grad()
        for k in range(passes):
            x, y = batch(passes * step + k, dist.get_rank())
            if k < passes - 1:
                with ddp.no_sync():
                    torch.nn.functional.cross_entropy(ddp(x), y).backward()
            else:
                torch.nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def optimizer():
    import collie.torch as ct
    r, n, gloo = init()
    for passes, unused, compression, tol in [(1, False, None, 1e-5), (2, False, None, 1e-5),
                                             (1, True, None, 1e-5), (1, False, "bfloat16", 2e-2),
                                             (1, False, "int8-ef", 5e-2)]:
        def make(model):
            sgd = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
            opt = ct.DistributedOptimizer(sgd, compression=compression,
                                          backward_passes_per_step=passes, bucket_mb=0.0005)
            assert isinstance(opt, torch.optim.SGD) and len(opt._buckets) > 1
            return opt
        ours = train_optimizer(make, passes, unused)
        theirs = train_ddp_gloo(gloo, passes, unused)
        diff = (ours - theirs).abs().max().item()
        assert diff < tol, "passes %d unused %s compression %s: off by %g" % (
            passes, unused, compression, diff)
        everyone = [torch.zeros_like(ours) for _ in range(n)]
        dist.all_gather(everyone, ours, group=gloo)
        assert all(torch.equal(everyone[0], p) for p in everyone), compression
    w = torch.full((7,), float(r))
    ct.broadcast_parameters({"w": w}, root=n - 1)
    assert (w == n - 1).all()
    dist.destroy_process_group()
    print("optimizer: ok on rank %d of %d" % (r, n))


def neighbor_opt():
    import collie.torch as ct
    r, n, gloo = init()
    comm = ct.comm_of()

    # atc over the full graph with plain SGD: averaging the parameters after the step is
    # averaging the gradients, so it trains as DDP on Gloo does
    def sgd_of(model):
        return torch.optim.SGD(model.parameters(), lr=0.05)
    ours = train_optimizer(lambda m: ct.NeighborOptimizer(sgd_of(m), "full"), 1, False)
    theirs = train_ddp_gloo(gloo, 1, False, momentum=0)  # plain SGD, as sgd_of
    assert (ours - theirs).abs().max().item() < 1e-5, (ours - theirs).abs().max()

    # awc over a dynamic schedule, with momentum: the same bits as doing it by hand
    # (average a snapshot, compute the gradient at it, take the step from the average)
    def awc(m):
        return ct.DistributedAdaptWithCombineOptimizer(
            torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9), "onepeer-exp2")
    model = small_model()
    opt = awc(model)
    for step in range(20):
        opt.zero_grad()
        x, y = batch(step, r)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    opt.synchronize()
    ours = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    model = small_model()
    sgd = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = collie.Schedule("onepeer-exp2", n)
    for step in range(20):
        flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
        avg = comm.neighbor_allreduce(flat, sched.step(step), torch.empty_like(flat))
        sgd.zero_grad()
        x, y = batch(step, r)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(avg, model.parameters())
        sgd.step()
    theirs = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    assert torch.equal(ours, theirs), (ours - theirs).abs().max()
    if n > 2:  # a sparse graph leaves the ranks apart ...
        spread = torch.stack([theirs] * n)
        dist.all_gather(list(spread), theirs, group=gloo)
        assert (spread - spread.mean(0)).abs().max() > 1e-6

    # ... which global averaging every step removes (atc over a ring, 16-bit wire too)
    for wire in [None, "bfloat16"]:
        ours = train_optimizer(lambda m: ct.NeighborOptimizer(
            torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9), collie.Topology("ring", n),
            global_avg_every=1, wire=wire), 1, False, steps=10)
        every = torch.stack([ours] * n)
        dist.all_gather(list(every), ours, group=gloo)
        assert (every == ours).all(), "global averaging left the ranks apart"
    try:
        ct.NeighborOptimizer(sgd_of(small_model()), combine="both")
        raise AssertionError("combine='both' was accepted")
    except ValueError as e:
        assert "atc" in str(e), e
    dist.destroy_process_group()
    print("neighbor_opt: ok on rank %d of %d" % (r, n))


def shrink():
    """The last rank dies; the others get CollieError, shrink, and their allreduce is exact."""
    comm = collie.init()
    r, n = comm.rank, comm.size
    x = np.ones(1000, dtype=np.float32)
    try:
        for step in range(1000):
            if step == 5 and r == n - 1:
                os.kill(os.getpid(), signal.SIGKILL)
            comm.allreduce(x, np.empty_like(x))
    except collie.CollieError as e:
        assert "PEER_LOST" in str(e) or "TIMEOUT" in str(e), e
        with comm.shrink() as sub:
            assert (sub.rank, sub.size) == (r, n - 1), (sub.rank, sub.size)
            v = np.arange(100003, dtype=np.int64) + r
            sub.allreduce(v)
            want = np.arange(100003, dtype=np.int64) * (n - 1) + sum(range(n - 1))
            assert np.array_equal(v, want), "shrunk allreduce wrong"
        comm.finalize()
        print("shrink: rank %d of %d went on as rank %d of %d" % (r, n, r, n - 1))
        return
    raise AssertionError("rank %d ran 1000 allreduces without its peer" % r)


def kill():
    r, n, _ = init()
    model = torch.nn.parallel.DistributedDataParallel(small_model())
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    limit = float(os.environ.get("COLLIE_TIMEOUT", "300")) + test_time(5)
    t0 = None
    try:
        for step in range(1000):
            if step == 5:
                t0 = time.time()
                if r == n - 1:
                    os.kill(os.getpid(), signal.SIGKILL)
            x, y = batch(step, r)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    except Exception as e:  # CollieError, or DDP's RuntimeError carrying its text
        assert "PEER_LOST" in str(e) or "TIMEOUT" in str(e), e
        took = time.time() - t0
        assert took < limit, "raised after %.1f s" % took
        print("kill: rank %d of %d raised after %.1f s at step %d: %s" % (r, n, took, step,
                                                                       str(e)[:120]))
        return
    raise AssertionError("rank %d trained 1000 steps without its peer" % r)


def mismatch():
    r, n, _ = init()
    t0 = time.time()
    try:
        if r == 1:
            dist.broadcast(torch.zeros(10), src=0)
        else:
            dist.all_reduce(torch.zeros(10))
        dist.barrier()
    except RuntimeError as e:  # torch wraps the CollieError its Work failed with
        assert "COLLIE_ERR_MISMATCH" in str(e), e
    else:
        raise AssertionError("a mismatched collective did not raise on rank %d" % r)
    assert time.time() - t0 < test_time(15), "took %.1f s" % (time.time() - t0)
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
    # collie.empty: memory the peers map; an allgather over it (forced to single copies
    # by the test's COLLIE_ALGO where set) is exact, and a tensor can share it
    big = collie.empty((n, 100000), dtype=np.float32)
    assert big.shape == (n, 100000) and (big == 0).all()
    mine = torch.from_numpy(collie.empty(100000, dtype=np.float32))
    mine[:] = torch.arange(100000, dtype=torch.float32) + r * 1000
    comm.allgather(mine, big)
    for k in range(n):
        assert (big[k] == np.arange(100000, dtype=np.float32) + k * 1000).all(), k
    del mine, big
    sub.finalize()
    comm.finalize()
    print("package: ok on rank %d of %d (collie %s)" % (r, n, collie.version()))


def neighbor():
    comm = collie.init()
    r, n = comm.rank, comm.size
    x = np.arange(1000, dtype=np.float64) + 10.0 * r

    def formula(topo, node_value):
        ranks, weights = topo.in_neighbors(r)
        want = topo.self_weight(r) * node_value(r)
        for j, w in zip(ranks, weights):
            want = want + w * node_value(j)
        return want

    for kind, param in [("exponential", 2), ("ring", 0), ("star", 0), ("mesh", 0), ("full", 0)]:
        topo = collie.Topology(kind, n, param)
        props = topo.check()
        assert props["row_stochastic"] and props["column_stochastic"], (kind, props)
        out = comm.neighbor_allreduce(x, topo, np.empty_like(x))
        want = formula(topo, lambda j: np.arange(1000, dtype=np.float64) + 10.0 * j)
        assert np.allclose(out, want, rtol=0, atol=1e-12), (kind, out[:4], want[:4])
        req = comm.ineighbor_allreduce(torch.full((7,), float(r), dtype=torch.bfloat16), topo)
        got = req.wait().float()
        assert torch.allclose(got, torch.full((7,), float(formula(topo, float))), atol=0.05), got
    # float32 on a 16-bit wire: the neighbours' values arrive rounded (0.1 is not exact)
    topo = collie.Topology("exponential", n, 2)
    v = np.full(64, 0.1 * (r + 1), dtype=np.float32)
    got = comm.neighbor_allreduce(v, topo, np.empty_like(v), wire="bfloat16")
    want = formula(topo, lambda j: float(np.float32(0.1 * (j + 1))))
    assert np.allclose(got, want, rtol=2 ** -7, atol=0) and not np.all(got == want) or n == 1, \
        (got[:2], want)
    # a schedule reaches the exact mean in its period, at any size
    sched = collie.Schedule("onepeer-exact", n)
    y = np.array([3.0 * r + 1])
    for t in range(sched.period):
        comm.neighbor_allreduce(y, sched.step(t))
    mean = sum(3.0 * j + 1 for j in range(n)) / n
    assert abs(y[0] - mean) < 1e-12, (y, mean)
    # host-aware: one host here, a ring of all its ranks; the mean is kept
    hs = collie.Schedule("inner-outer-exp2", n, comm.hosts())
    y = np.array([3.0 * r + 1])
    for t in range(hs.period * 40):
        comm.neighbor_allreduce(y, hs.step(t))
    assert abs(y[0] - mean) < 1e-6, (y, mean)
    # per-call lists, with sender and receiver weights (BlueFog's dst and src weights)
    nxt, prv = (r + 1) % n, (r - 1) % n
    z = comm.neighbor_allreduce_dynamic(np.full(5, float(r)), recv_ranks=[prv], send_ranks=[nxt],
                                        recv_weights=[0.5], self_weight=0.25, send_weights=[2.0])
    assert np.all(z == 0.25 * r + 0.5 * 2.0 * prv), z
    # gathering the in-neighbours' data, and gossip between pairs
    topo = collie.Topology("exponential", n, 2)
    ranks, _ = topo.in_neighbors(r)
    g = comm.neighbor_allgather(np.full(4, r, dtype=np.int32), topo,
                                np.empty(4 * len(ranks), dtype=np.int32))
    assert np.all(g == np.repeat(np.array(ranks, dtype=np.int32), 4)), (g, ranks)
    if (r ^ 1) < n:
        q = comm.ipair_gossip(torch.full((6,), float(r)), r ^ 1, 0.25, 0.75).wait()
        assert torch.all(q == 0.25 * r + 0.75 * (r ^ 1)), q
    # one-sided: a put, a fence, an update gives the neighbour step; push-sum keeps the sum
    topo = collie.Topology("exponential", n, 2)
    v = np.full(8, float(r + 1))
    win = collie.Window(comm, topo, v)
    comm.barrier()
    win.put(v * 2)
    win.fence()
    assert win.deposits() == [1] * len(topo.in_neighbors(r)[0]), win.deposits()
    got = win.update(v * 2)
    assert np.allclose(got, formula(topo, lambda j: 2.0 * (j + 1))), got
    win.free()
    ps = collie.Window(comm, topo, None, like=v)
    x = np.full(8, float(r + 1))
    share = 1.0 / (len(topo.out_neighbors(r)[0]) + 1)
    for _ in range(30):
        ps.accumulate(x, share)
        ps.fence()
        ps.collect(x, share)
    assert np.allclose(x / ps.weight, (n + 1) / 2.0, atol=1e-9), (x, ps.weight)
    ps.free()
    # between hosts: one host here, so every rank gets the mean
    h = comm.hierarchical_neighbor_allreduce(np.full(3, float(r)),
                                             collie.Topology("full", comm.host_count))
    assert np.allclose(h, (n - 1) / 2.0), h
    try:
        comm.neighbor_allreduce(x, collie.Topology("ring", n + 1))
        raise AssertionError("a topology of another size was accepted")
    except collie.CollieError as e:
        assert e.status == "INVALID_ARG" and "nodes" in str(e), e
    try:
        collie.Schedule("torus", n)
        raise AssertionError("an unknown schedule was accepted")
    except collie.CollieError as e:
        assert "no topology 'torus'" in str(e), e
    comm.finalize()


def needs(module, path=None):
    try:
        __import__(module)
    except ImportError:
        print("skipped: no %s (apt-get install python3-%s)" % (module, module))
        raise SystemExit(77)
    if path and not os.path.exists(path):
        print("skipped: no %s (apt-get install dataset-fashion-mnist)" % path)
        raise SystemExit(77)


def benchmark():
    needs("torchvision")
    import json
    import tempfile
    from collie.torch import benchmark as bench
    path = os.path.join(tempfile.gettempdir(), "collie-test-bench-%s.json" % os.environ["MASTER_PORT"])
    modes = ["gloo", "gloo-fp16", "gloo-powersgd", "collie", "collie-fp16", "collie-bf16",
             "collie-int8-ef", "collie-sign-ef", "optimizer", "neighbor-atc", "neighbor-awc",
             "compute"]
    if bench._has_fsdp2():  # torch 2.x
        modes += ["fsdp2-gloo", "fsdp2"]
    assert bench.main(["--model", "resnet18", "--image-size", "32", "--batch-size", "2",
                       "--num-iters", "2", "--num-batches-per-iter", "1",
                       "--num-warmup-batches", "1", "--modes", ",".join(modes),
                       "--json", path]) == 0
    if int(os.environ["RANK"]) == 0:
        with open(path) as f:
            results = json.load(f)
        os.unlink(path)
        assert sorted(results["modes"]) == sorted(modes), results
        for m, r in results["modes"].items():
            assert r["img_sec"] > 0, (m, r)
            assert m in ("gloo", "fsdp2-gloo") or r["acc_ratio"] > 0, (m, r)
        print("benchmark: every mode measured: %s" % {m: round(r["img_sec"], 1)
                                                      for m, r in results["modes"].items()})


def a6000():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "examples"))
    import a6000 as study
    needs("torchvision", os.path.join(study.DATA, "train-images-idx3-ubyte.gz"))
    import json
    import tempfile
    path = os.path.join(tempfile.gettempdir(), "collie-test-a6000-%s.jsonl" % os.environ["MASTER_PORT"])
    study.main(["--batch-sizes", "8,16", "--hidden", "256", "--steps", "2", "--warmup", "1",
                "--json", path])
    if int(os.environ["RANK"]) == 0:
        with open(path) as f:
            rows = [json.loads(line) for line in f]
        os.unlink(path)
        assert [r["batch"] for r in rows] == [8, 16], rows
        k = rows[0]["ranks"]
        for r in rows:
            assert r["params"] == 512 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10, r
            assert r["formula_params_per_epoch"] == 60000 / (r["batch"] * k) * r["params"], r
            assert r["compute_ms"] > 0 and all(v > 0 for v in r["comm_ms"].values()), r
            assert k == 1 or r["counted_bytes_per_epoch"] > 0, r
        print("a6000: %d configurations on %d rank(s)" % (len(rows), k))


if __name__ == "__main__":
    scenarios.run({"ops": ops, "ddp": ddp, "hooks": hooks, "ef": ef, "optimizer": optimizer,
                   "mismatch": mismatch, "neighbor_opt": neighbor_opt, "kill": kill, "shrink": shrink,
                   "package": package, "neighbor": neighbor, "benchmark": benchmark, "a6000": a6000},
                  sys.argv[1])
