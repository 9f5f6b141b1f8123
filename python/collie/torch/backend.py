# SPDX-License-Identifier: BSD-3-Clause
"""ProcessGroupCollie: the torch.distributed backend over one collie communicator.

A call issues its collie request at once on the calling thread (so every rank
issues one group's collectives in one order, as collie requires) and returns a
Work; one completion thread per group waits on the requests in issue order and
completes their futures, so DDP's buckets overlap with the backward pass.

One class serves every torch: on torch 2.x it is a c10d ``Backend`` (the base
torch's process group dispatches each device's ops to, the one FSDP2, DTensor
and functional collectives reach through the dispatcher); on torch 1.x, which
has no such base, it is the ``ProcessGroup`` itself.  Which base, and which of
its methods torch calls, is decided by what torch has, never by its version.
"""
import atexit
import collections
import threading
import weakref
from typing import Any, Callable, List, Optional, Sequence

import torch
import torch.distributed as dist
from torch._C import _distributed_c10d as _c10d
from torch._C._distributed_c10d import _create_work_from_future

import collie

BACKEND = "collie"

# torch 2.x: the per-device base that the ProcessGroup dispatches to; torch 1.x: none.
_BASE = getattr(_c10d, "Backend", None) or _c10d.ProcessGroup

_REDUCE = {
    dist.ReduceOp.SUM: "sum",
    dist.ReduceOp.PRODUCT: "prod",
    dist.ReduceOp.MIN: "min",
    dist.ReduceOp.MAX: "max",
}
if hasattr(dist.ReduceOp, "AVG"):
    _REDUCE[dist.ReduceOp.AVG] = "avg"


def _op(opts) -> str:
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


def _then(*steps):
    """One callable running each step that is not None, in order (None if there is none)."""
    steps = [s for s in steps if s is not None]
    if not steps:
        return None

    def run():
        for step in steps:
            step()
    return run


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


def _store_unique_id(store, rank: int, size: int) -> bytes:
    """Rank 0's unique id, through the store; each creation of a group gets a fresh key."""
    n = store.add("collie/joined", 1)  # ranks of creation k add k*size-size+1 .. k*size
    key = "collie/uid/%d" % ((n - 1) // size)
    if rank == 0:
        store.set(key, collie.get_unique_id())
    uid = store.get(key)
    return bytes(uid)


def _cpu(tensors: Sequence[torch.Tensor]):
    for t in tensors:
        if t.device.type != "cpu":
            raise ValueError("collie: tensors must be on the CPU, not %s; GPU jobs name a "
                             "backend per device: init_process_group(\"cpu:collie,cuda:nccl\")"
                             % t.device)


class ProcessGroupCollie(_BASE):
    """A torch.distributed process group over one collie communicator."""

    # torch 2.x's Backend answers these through a property that looks for a Python
    # override of the same name, finds itself and recurses: plain attributes answer first.
    # (No NCCL-style coalescing: torch issues batched calls one by one, as for Gloo.)
    supports_coalescing = False
    supports_splitting = False
    supports_shrinking = False
    supports_window = False

    def __init__(self, store, rank: int, size: int, timeout=None):
        super().__init__(rank, size)
        self._comm = collie.init_rank(size, _store_unique_id(store, rank, size), rank)
        self._done = _Completion()
        self._closed = False

    def getBackendName(self) -> str:
        return BACKEND

    @property
    def comm(self) -> "collie.Comm":
        """The collie.Comm under this group (for hooks and optimizers)."""
        return self._comm

    # ---- the machinery ------------------------------------------------------------------
    def _future(self, issue: Callable[[], Any], result: Any,
                after: Optional[Callable[[], None]] = None) -> torch.futures.Future:
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

    def _each(self, issues, result, after=None):
        """Several requests issued in order, completed as one Work."""
        return self._work(lambda: _All([issue() for issue in issues]), result, after)

    # ---- reductions -----------------------------------------------------------------------
    def allreduce(self, tensors: List[torch.Tensor], opts=None):
        _cpu(tensors)
        flat, parts = _flat(tensors)
        op = _op(opts)
        after = (lambda: _unpack(flat, parts)) if parts else None
        return self._work(lambda: self._comm.iallreduce(flat, op=op), tensors, after)

    def allreduce_coalesced(self, tensors: List[torch.Tensor], opts=None):
        if len({t.dtype for t in tensors}) <= 1:
            return self.allreduce(tensors, opts)
        _cpu(tensors)
        op = _op(opts)
        outs = [t if t.is_contiguous() else t.contiguous() for t in tensors]
        after = _then(*[(lambda t=t, o=o: t.copy_(o)) if o is not t else None
                        for t, o in zip(tensors, outs)])
        return self._each([lambda o=o: self._comm.iallreduce(o, op=op) for o in outs],
                          tensors, after)

    def reduce(self, tensors: List[torch.Tensor], opts=None):
        _cpu(tensors)
        root = opts.rootRank if opts is not None else 0
        flat, parts = _flat(tensors)
        op = _op(opts)
        after = (lambda: _unpack(flat, parts)) if parts and self.rank() == root else None
        return self._work(lambda: self._comm.ireduce(flat, op=op, root=root), tensors, after)

    def _reduce_scatter_one(self, output, input, op):
        """(issue, after) of one reduce-scatter of input into output."""
        out = output if output.is_contiguous() else torch.empty_like(output)
        after = None if out is output else (lambda: output.copy_(out))
        return (lambda: self._comm.ireduce_scatter(input.contiguous(), out, op=op)), after

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        _cpu(output_tensors)
        op = _op(opts)
        issues, afters = [], []
        for out, ins in zip(output_tensors, input_tensors):
            flat = torch.cat([t.reshape(-1) for t in ins])
            issue, after = self._reduce_scatter_one(out, flat, op)
            issues.append(issue)
            afters.append(after)
        return self._each(issues, output_tensors, _then(*afters))

    def _reduce_scatter_base(self, output: torch.Tensor, input: torch.Tensor, opts=None):
        _cpu([output, input])
        issue, after = self._reduce_scatter_one(output, input, _op(opts))
        return self._work(issue, [output], after)

    reduce_scatter_single = _reduce_scatter_base  # torch 2.13+'s name

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        _cpu(outputs)
        op = _op(opts)
        pairs = [self._reduce_scatter_one(o, i, op) for o, i in zip(outputs, inputs)]
        return self._each([p[0] for p in pairs], list(outputs), _then(*[p[1] for p in pairs]))

    reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced

    # ---- data movement --------------------------------------------------------------------
    def broadcast(self, tensors: List[torch.Tensor], opts=None):
        _cpu(tensors)
        root = opts.rootRank if opts is not None else 0
        flat, parts = _flat(tensors)
        after = (lambda: _unpack(flat, parts)) if parts else None
        return self._work(lambda: self._comm.ibroadcast(flat, root), tensors, after)

    def _allgather_one(self, output, input):
        """(issue, after) of one allgather of input into output (any shapes, n times the
        elements)."""
        out = output if output.is_contiguous() else torch.empty_like(output)
        after = None if out is output else (lambda: output.copy_(out))
        return (lambda: self._comm.iallgather(input.contiguous(), out)), after

    def allgather(self, output_tensors, input_tensors, opts=None):
        _cpu(input_tensors)
        issues, afters = [], []
        for outs, inp in zip(output_tensors, input_tensors):
            flat = torch.empty(inp.numel() * len(outs), dtype=inp.dtype)
            issues.append(self._allgather_one(flat, inp)[0])
            afters.append(lambda flat=flat, outs=outs: _unpack(flat, outs))
        return self._each(issues, output_tensors, _then(*afters))

    def _allgather_base(self, output: torch.Tensor, input: torch.Tensor, opts=None):
        _cpu([output, input])
        issue, after = self._allgather_one(output, input)
        return self._work(issue, [output], after)

    all_gather_single = _allgather_base  # torch 2.13+'s name

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        return self.allgather(output_lists, input_list, opts)

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        _cpu(outputs)
        pairs = [self._allgather_one(o, i) for o, i in zip(outputs, inputs)]
        return self._each([p[0] for p in pairs], list(outputs), _then(*[p[1] for p in pairs]))

    all_gather_single_coalesced = allgather_into_tensor_coalesced

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        _cpu([output, input])
        n = self.size()
        outs = list(output_split_sizes) or [output.shape[0] // n] * n
        ins = list(input_split_sizes) or [input.shape[0] // n] * n
        if len(set(outs + ins)) <= 1 and output.is_contiguous():
            return self._work(lambda: self._comm.ialltoall(input.contiguous(), output), [output])
        return self._alltoallv(output, input.contiguous(), outs, ins)

    all_to_all_single = alltoall_base  # torch 2.13+'s name

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
        _cpu(input_tensors)
        flat_in = torch.cat([t.reshape(-1) for t in input_tensors])
        flat_out = torch.empty_like(flat_in)
        return self._work(lambda: self._comm.ialltoall(flat_in, flat_out), output_tensors,
                          lambda: _unpack(flat_out, output_tensors))

    def gather(self, output_tensors, input_tensors, opts=None):
        _cpu(input_tensors)
        root = opts.rootRank if opts is not None else 0
        inp = input_tensors[0].contiguous()
        if self.rank() != root:
            return self._work(lambda: self._comm.isend(inp, root), output_tensors)
        outs = output_tensors[0]
        bufs = [o if o.is_contiguous() else torch.empty_like(o) for o in outs]
        requests = [self._comm.irecv(bufs[k], k) for k in range(self.size()) if k != root]
        bufs[root].copy_(inp.view_as(bufs[root]))
        after = _then(*[(lambda o=o, b=b: o.copy_(b)) if b is not o else None
                        for o, b in zip(outs, bufs)])
        return self._work(lambda: _All(requests), output_tensors, after)

    def scatter(self, output_tensors, input_tensors, opts=None):
        _cpu(output_tensors)
        root = opts.rootRank if opts is not None else 0
        out = output_tensors[0]
        buf = out if out.is_contiguous() else torch.empty_like(out)
        after = None if buf is out else (lambda: out.copy_(buf))
        if self.rank() != root:
            return self._work(lambda: self._comm.irecv(buf, root), output_tensors, after)
        ins = [t.contiguous() for t in input_tensors[0]]
        requests = [self._comm.isend(ins[k], k) for k in range(self.size()) if k != root]
        buf.copy_(ins[root].view_as(buf))
        return self._work(lambda: _All(requests), output_tensors, after)

    def barrier(self, opts=None):
        return self._work(lambda: self._comm.ibarrier(), None)

    def send(self, tensors: List[torch.Tensor], dst: int, tag: int = 0):
        _cpu(tensors)
        flat, _ = _flat(tensors)
        return self._work(lambda: self._comm.isend(flat, dst), tensors)

    def recv(self, tensors: List[torch.Tensor], src: int, tag: int = 0):
        _cpu(tensors)
        flat, parts = _flat(tensors)
        after = (lambda: _unpack(flat, parts)) if parts else None
        return self._work(lambda: self._comm.irecv(flat, src), tensors, after)

    # ---- life -----------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stops the completion thread and finalizes the communicator (once)."""
        if self._closed:
            return
        self._closed = True
        self._done.close()
        self._comm.finalize()

    def abort(self) -> None:
        """Aborts the communicator: pending and later calls fail at once on this rank."""
        self._comm.abort()

    def __del__(self):
        try:
            self.shutdown()
        except Exception:
            pass


def _untraced(fn):
    """fn, kept out of torch.compile's tracing (where torch has it): torch calls the
    backend from C++ while a compiled frame runs, and tracing ctypes and a completion
    thread can only break the graph, or rebuild collie's requests half-made."""
    disable = getattr(getattr(torch, "compiler", None), "disable", None)
    return disable(fn) if disable is not None else fn


for _name, _fn in list(vars(ProcessGroupCollie).items()):
    if callable(_fn) and not _name.startswith("__") and not isinstance(_fn, type):
        setattr(ProcessGroupCollie, _name, _untraced(_fn))


def collie_group_of(group=None) -> Optional[ProcessGroupCollie]:
    """The ProcessGroupCollie behind group (None: the default group), or None when
    the group's CPU backend is another's.  On torch 2.x a group is torch's ProcessGroup
    with one backend per device; on 1.x a collie group is a ProcessGroupCollie."""
    if group is None:
        if not dist.is_initialized():
            return None
        group = dist.distributed_c10d._get_default_group()
    if isinstance(group, ProcessGroupCollie):
        return group
    get = getattr(group, "_get_backend", None)
    if get is None:
        return None
    try:
        backend = get(torch.device("cpu"))
    except RuntimeError:  # no backend for the CPU in this group
        return None
    return backend if isinstance(backend, ProcessGroupCollie) else None
