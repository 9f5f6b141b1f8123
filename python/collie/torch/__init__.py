# SPDX-License-Identifier: BSD-3-Clause
"""collie as a torch.distributed backend: ``import collie.torch``, then

    dist.init_process_group("collie")            # instead of "gloo"; env:// or a store
    model = torch.nn.parallel.DistributedDataParallel(model)

Every ProcessGroup method PyTorch calls is here, backed by collie's
non-blocking requests: a call issues its request at once on the calling
thread (so every rank issues one group's collectives in one order, as collie
requires) and returns a Work; one completion thread per group waits on the
requests in issue order and completes their futures, so DDP's buckets
overlap with the backward pass.

Errors: a failure completes its Work and future with an error that
``work.wait()``, ``future.wait()`` and DDP's backward pass raise (the text of
the CollieError), becomes sticky on the group, and every later call on the
group raises CollieError at once, on every rank that sees the failure,
within COLLIE_TIMEOUT.

Also here: collie.torch.hooks (DDP communication hooks, compression on the
wire), DistributedOptimizer and broadcast_parameters (Horovod's way, no DDP),
NeighborOptimizer (BlueFog's decentralized training: no gradient averaging).
"""
import atexit
import collections
import threading
import weakref

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup, _create_work_from_future

import collie

__all__ = ["ProcessGroupCollie", "BACKEND", "hooks", "DistributedOptimizer",
           "broadcast_parameters", "comm_of", "NeighborOptimizer",
           "DistributedAdaptThenCombineOptimizer", "DistributedAdaptWithCombineOptimizer"]

BACKEND = "collie"

_REDUCE = {
    dist.ReduceOp.SUM: "sum",
    dist.ReduceOp.PRODUCT: "prod",
    dist.ReduceOp.MIN: "min",
    dist.ReduceOp.MAX: "max",
}
if hasattr(dist.ReduceOp, "AVG"):
    _REDUCE[dist.ReduceOp.AVG] = "avg"


def _op(opts):
    op = getattr(opts, "reduceOp", dist.ReduceOp.SUM) if opts is not None else dist.ReduceOp.SUM
    for key, name in _REDUCE.items():
        if op == key:
            return name
    raise ValueError("collie: reduce op %s is not supported (sum, product, min, max, avg)" % op)


def _flat(tensors):
    """One contiguous tensor: the single one given, or a packed copy (and how to unpack)."""
    if len(tensors) == 1 and tensors[0].is_contiguous():
        return tensors[0], None
    flat = torch.cat([t.reshape(-1) for t in tensors])
    return flat, tensors


def _unpack(flat, tensors):
    offset = 0
    for t in tensors:
        n = t.numel()
        t.copy_(flat[offset:offset + n].view_as(t))
        offset += n


class _All:
    """Several requests completed as one (waits for every one, raises the first failure)."""

    def __init__(self, requests):
        self._requests = requests

    def wait(self):
        first = None
        for r in self._requests:
            try:
                r.wait()
            except Exception as e:  # every request is waited; the first failure is raised
                first = first or e
        if first:
            raise first


class _Failed:
    """What a failed request's future is set to; _raise_failure turns it into an error."""

    def __init__(self, error):
        self.error = error


def _raise_failure(future):
    value = future.value()
    if isinstance(value, _Failed):
        raise value.error
    return value


class _Completion:
    """The group's completion thread: waits on requests in issue order, completes futures."""

    def __init__(self):
        self._queue = collections.deque()
        self._cv = threading.Condition()
        # A daemon killed at the interpreter's exit unwinds through torch's C++ frames
        # (std::terminate): _close_all stops it before the interpreter kills threads.
        self._thread = threading.Thread(target=self._run, name="collie-torch", daemon=True)
        self._stop = False
        self._thread.start()
        _live.add(self)

    def add(self, request, future, result, after):
        with self._cv:
            self._queue.append((request, future, result, after))
            self._cv.notify()

    def _run(self):
        while True:
            with self._cv:
                while not self._queue and not self._stop:
                    self._cv.wait()
                if not self._queue:
                    return
                request, future, result, after = self._queue.popleft()
            try:
                request.wait()  # ctypes releases the GIL while collie waits
                if after is not None:
                    after()
            except Exception as e:  # the group is failed (sticky); the future raises it
                result = _Failed(e)
            future.set_result(result)

    def close(self):
        with self._cv:
            self._stop = True
            self._cv.notify()
        if self._thread is not threading.current_thread():
            self._thread.join()
        _live.discard(self)


_live = weakref.WeakSet()


def _close_all():
    for completion in list(_live):
        completion.close()


# Before threading joins its threads at exit (Python >= 3.9); else with atexit.
getattr(threading, "_register_atexit", atexit.register)(_close_all)


def _store_unique_id(store, rank, size):
    """Rank 0's unique id, through the store; each creation of a group gets a fresh key."""
    n = store.add("collie/joined", 1)  # ranks of creation k add k*size-size+1 .. k*size
    key = "collie/uid/%d" % ((n - 1) // size)
    if rank == 0:
        store.set(key, collie.get_unique_id())
    uid = store.get(key)
    return bytes(uid)


class ProcessGroupCollie(ProcessGroup):
    """A torch.distributed process group over one collie communicator."""

    def __init__(self, store, rank, size, timeout=None):
        super().__init__(rank, size)
        self._comm = collie.init_rank(size, _store_unique_id(store, rank, size), rank)
        self._done = _Completion()

    def getBackendName(self):
        return BACKEND

    # ---- the machinery ------------------------------------------------------------------
    def _future(self, issue, result, after=None):
        """Issues one request (raising at once if collie refuses it); returns a Future that
        the completion thread sets to result (after running after()) once it completes."""
        request = issue()
        future = torch.futures.Future()
        self._done.add(request, future, result, after)
        # A future's set_exception is seen only by Python: C++ (DDP) would take the exception
        # object for the result and crash.  An exception raised in a then() callback marks the
        # future failed for C++ too.
        return future.then(_raise_failure)

    def _work(self, issue, result, after=None):
        return _create_work_from_future(self._future(issue, result, after))

    # ---- collectives ----------------------------------------------------------------------
    def allreduce(self, tensors, opts=None):
        flat, parts = _flat(tensors)
        op = _op(opts)
        after = (lambda: _unpack(flat, parts)) if parts else None
        return self._work(lambda: self._comm.iallreduce(flat, op=op), tensors, after)

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(tensors, opts)

    def broadcast(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        flat, parts = _flat(tensors)
        after = (lambda: _unpack(flat, parts)) if parts else None
        return self._work(lambda: self._comm.ibroadcast(flat, root), tensors, after)

    def reduce(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        flat, parts = _flat(tensors)
        op = _op(opts)
        after = (lambda: _unpack(flat, parts)) if parts and self.rank() == root else None
        return self._work(lambda: self._comm.ireduce(flat, op=op, root=root), tensors, after)

    def allgather(self, output_tensors, input_tensors, opts=None):
        inp = input_tensors[0].contiguous()
        outs = output_tensors[0]
        flat = torch.empty(inp.numel() * len(outs), dtype=inp.dtype)
        return self._work(lambda: self._comm.iallgather(inp, flat), output_tensors,
                          lambda: _unpack(flat, outs))

    def _allgather_base(self, output, input, opts=None):
        return self._work(lambda: self._comm.iallgather(input.contiguous(), output), [output])

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        out = output_tensors[0]
        flat = torch.cat([t.reshape(-1) for t in input_tensors[0]])
        op = _op(opts)
        return self._work(lambda: self._comm.ireduce_scatter(flat, out, op=op), output_tensors)

    def _reduce_scatter_base(self, output, input, opts=None):
        op = _op(opts)
        return self._work(lambda: self._comm.ireduce_scatter(input.contiguous(), output, op=op),
                          [output])

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        n = self.size()
        outs = list(output_split_sizes) or [output.shape[0] // n] * n
        ins = list(input_split_sizes) or [input.shape[0] // n] * n
        if len(set(outs + ins)) <= 1 and output.is_contiguous():
            return self._work(lambda: self._comm.ialltoall(input.contiguous(), output), [output])
        return self._alltoallv(output, input.contiguous(), outs, ins)

    def _alltoallv(self, output, input, outs, ins):
        """Uneven splits (rows of dim 0): one send and one receive per peer, on the
        point-to-point lane (pairs keep their order, so calls match in issue order)."""
        me, n = self.rank(), self.size()
        out = output if output.is_contiguous() else torch.empty_like(output)
        at_in = [sum(ins[:k]) for k in range(n)]
        at_out = [sum(outs[:k]) for k in range(n)]
        out[at_out[me]:at_out[me] + outs[me]].copy_(input[at_in[me]:at_in[me] + ins[me]])
        requests = []
        for k in range(1, n):
            to, frm = (me + k) % n, (me - k) % n
            requests.append(self._comm.isend(input[at_in[to]:at_in[to] + ins[to]], to))
            requests.append(self._comm.irecv(out[at_out[frm]:at_out[frm] + outs[frm]], frm))
        after = None if out is output else (lambda: output.copy_(out))
        return self._work(lambda: _All(requests), [output], after)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        flat_in = torch.cat([t.reshape(-1) for t in input_tensors])
        flat_out = torch.empty_like(flat_in)
        return self._work(lambda: self._comm.ialltoall(flat_in, flat_out), output_tensors,
                          lambda: _unpack(flat_out, output_tensors))

    def barrier(self, opts=None):
        return self._work(lambda: self._comm.ibarrier(), None)

    def send(self, tensors, dst, tag=0):
        flat, _ = _flat(tensors)
        return self._work(lambda: self._comm.isend(flat, dst), tensors)

    def recv(self, tensors, src, tag=0):
        flat, parts = _flat(tensors)
        after = (lambda: _unpack(flat, parts)) if parts else None
        return self._work(lambda: self._comm.irecv(flat, src), tensors, after)

    @property
    def comm(self):
        """The collie.Comm under this group (for hooks and optimizers)."""
        return self._comm

    def __del__(self):
        try:
            self._done.close()
            self._comm.finalize()
        except Exception:
            pass


def _create(store, rank, size, timeout):
    return ProcessGroupCollie(store, rank, size, timeout)


dist.Backend.register_backend(BACKEND, _create)

from . import hooks  # noqa: E402  (after ProcessGroupCollie, which they use)
from .optimizer import DistributedOptimizer, broadcast_parameters, comm_of  # noqa: E402
from .neighbor import (NeighborOptimizer, DistributedAdaptThenCombineOptimizer,  # noqa: E402
                       DistributedAdaptWithCombineOptimizer)
