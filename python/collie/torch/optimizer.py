# SPDX-License-Identifier: BSD-3-Clause
"""Horovod's DistributedOptimizer on collie: data parallelism without DDP.

    opt = collie.torch.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))
    collie.torch.broadcast_parameters(model.state_dict(), root=0)
    for x, y in data:
        opt.zero_grad()
        loss_fn(model(x), y).backward()    # each bucket's allreduce starts as its gradients land
        opt.step()                         # waits for them, then the wrapped optimizer's step

The wrapped optimizer becomes an instance of a subclass of its own class (so
learning-rate schedulers and isinstance checks keep working, as in Horovod).
Gradients are packed into buckets of at most bucket_mb MiB, in the reverse
order of the parameters (the order backward produces them); a hook on each
parameter's gradient accumulator counts it in, and a bucket whose gradients
have all arrived is reduced at once with a non-blocking allreduce, so the
communication overlaps with the rest of the backward pass.  Buckets are issued
in one fixed order on every rank (bucket k only after bucket k-1), which collie
requires of collectives; a parameter that got no gradient contributes zeros at
step().

compression="float16" or "bfloat16" sends float32 gradients in that format
on the wire (collie_iallreduce_compressed, summed in float32); "int8-ef" and
"sign-ef" send error-feedback codes (collie_iallreduce_ef: 3.9x and 28x fewer
bytes than float32), each bucket keeping what its codes dropped for the next
step.
backward_passes_per_step=k accumulates k backward passes locally before one
allreduce (gradient accumulation, as Horovod's).
"""
import torch
import torch.distributed as dist

import collie

__all__ = ["DistributedOptimizer", "broadcast_parameters", "comm_of"]

_world = {}


def comm_of(group=None):
    """The collie.Comm to use for group: a collie.Comm, a collie process group, or None
    (the default process group if it is collie's, else a collie group made over the same
    ranks with dist.new_group, else -- without torch.distributed -- collie.init())."""
    from .backend import collie_group_of
    if isinstance(group, collie.Comm):
        return group
    if group is not None:
        found = collie_group_of(group)
        if found is None:
            raise TypeError("collie: %r is neither a collie.Comm nor a collie process group"
                            % (group,))
        return found.comm
    if dist.is_initialized():
        default = collie_group_of()
        if default is not None:
            return default.comm
        if "group" not in _world:  # collective: every rank of the default group comes here
            _world["group"] = dist.new_group(backend="collie")
        return collie_group_of(_world["group"]).comm
    if "comm" not in _world:
        _world["comm"] = collie.init()
    return _world["comm"]


def wrap_optimizer(optimizer, mixin):
    """A new optimizer over optimizer's parameter groups whose class is a subclass of
    optimizer's own with mixin's methods (learning-rate schedulers and isinstance checks
    keep working, as in Horovod); the mixin's super() calls reach the wrapped class."""
    cls = type(optimizer.__class__.__name__, (optimizer.__class__,),
               {k: v for k, v in mixin.__dict__.items() if k not in ("__dict__", "__weakref__")})
    wrapped = cls.__new__(cls)
    try:  # the defaults are the constructor's keywords for torch's optimizers
        optimizer.__class__.__init__(wrapped, optimizer.param_groups, **optimizer.defaults)
    except TypeError:  # each group carries its settings anyway
        optimizer.__class__.__init__(wrapped, optimizer.param_groups)
    return wrapped


def broadcast_parameters(params, root=0, group=None):
    """Copies root's tensors into every rank's: params is a state_dict (broadcast in the
    order of its sorted names) or an iterable of tensors or (name, tensor) pairs."""
    comm = comm_of(group)
    items = sorted(params.items()) if isinstance(params, dict) else list(params)
    for item in items:
        tensor = item[1] if isinstance(item, tuple) else item
        data = tensor.data if isinstance(tensor, torch.nn.Parameter) else tensor
        if data.is_contiguous():
            comm.broadcast(data, root)
        else:
            copy = data.contiguous()
            comm.broadcast(copy, root)
            data.copy_(copy)


class _Bucket:
    """Parameters whose gradients travel together in one flat buffer."""

    def __init__(self, params):
        self.params = params
        self.numel = sum(p.numel() for p in params)
        self.flat = None
        self.request = None
        self.arrived = 0
        self.compressor = None  # compression "int8-ef", "sign-ef": the bucket's residuals

    def pack(self):
        if self.flat is None:
            self.flat = torch.empty(self.numel, dtype=self.params[0].dtype)
        offset = 0
        for p in self.params:
            n = p.numel()
            if p.grad is None:
                self.flat[offset:offset + n].zero_()
            else:
                self.flat[offset:offset + n].copy_(p.grad.reshape(-1))
            offset += n

    def unpack(self):
        offset = 0
        for p in self.params:
            n = p.numel()
            part = self.flat[offset:offset + n].view_as(p)
            if p.grad is None:
                p.grad = part.clone()
            else:
                p.grad.copy_(part)
            offset += n


class _DistributedOptimizer:
    """Methods mixed into a subclass of the wrapped optimizer's class."""

    def _collie_setup(self, comm, compression, op, backward_passes_per_step, bucket_bytes):
        if compression not in (None, "float16", "bfloat16", "int8-ef", "sign-ef"):
            raise ValueError("collie: compression is None, 'float16', 'bfloat16', 'int8-ef' "
                             "or 'sign-ef', not %r" % (compression,))
        if compression in ("int8-ef", "sign-ef") and op not in ("avg", "sum"):
            raise ValueError("collie: %s averages or sums, not %r" % (compression, op))
        if backward_passes_per_step < 1:
            raise ValueError("collie: backward_passes_per_step must be at least 1")
        self._comm = comm
        self._compression = compression
        self._reduce_op = op
        self._passes_per_step = backward_passes_per_step
        params = [p for g in self.param_groups for p in g["params"] if p.requires_grad]
        self._buckets = []
        current, size = [], 0
        for p in reversed(params):
            if current and (size + p.numel() * p.element_size() > bucket_bytes
                            or p.dtype != current[0].dtype):
                self._buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += p.numel() * p.element_size()
        if current:
            self._buckets.append(_Bucket(current))
        self._bucket_of = {p: b for b in self._buckets for p in b.params}
        self._passes = {p: 0 for p in params}
        self._next = 0
        self._accumulators = []  # the hooks live as long as these
        for p in params:
            accumulator = p.expand_as(p).grad_fn.next_functions[0][0]
            accumulator.register_hook(self._make_hook(p))
            self._accumulators.append(accumulator)

    def _make_hook(self, p):
        def hook(*_):
            self._passes[p] += 1
            if self._passes[p] != self._passes_per_step:
                return
            self._bucket_of[p].arrived += 1
            self._issue_ready()
        return hook

    def _issue(self, bucket):
        bucket.pack()
        if self._compression in ("int8-ef", "sign-ef") and bucket.flat.dtype == torch.float32:
            if bucket.compressor is None:  # its residuals, kept from step to step
                bucket.compressor = collie.Compressor(self._comm, bucket.flat.numel(),
                                                      self._compression[:-3])
            bucket.request = self._comm.iallreduce_ef(bucket.flat, bucket.compressor,
                                                      op=self._reduce_op)
        elif self._compression and bucket.flat.dtype == torch.float32:
            bucket.request = self._comm.iallreduce_compressed(bucket.flat, wire=self._compression,
                                                              op=self._reduce_op)
        else:
            bucket.request = self._comm.iallreduce(bucket.flat, op=self._reduce_op)

    def _issue_ready(self):
        while (self._next < len(self._buckets)
               and self._buckets[self._next].arrived == len(self._buckets[self._next].params)):
            self._issue(self._buckets[self._next])
            self._next += 1

    def synchronize(self):
        """Issues the buckets backward has not completed (zeros for missing gradients), waits
        for every allreduce and writes the averaged gradients into .grad."""
        while self._next < len(self._buckets):
            self._issue(self._buckets[self._next])
            self._next += 1
        for bucket in self._buckets:
            bucket.request.wait()
            bucket.request = None
            bucket.unpack()
            bucket.arrived = 0
        self._next = 0
        for p in self._passes:
            self._passes[p] = 0

    def step(self, closure=None):
        self.synchronize()
        return super(self.__class__, self).step(closure)

    def zero_grad(self, set_to_none=False):
        if any(b.request is not None for b in self._buckets):
            raise RuntimeError("collie: zero_grad() while gradients are being reduced: "
                               "call step() (or synchronize()) after backward() first")
        return super(self.__class__, self).zero_grad(set_to_none)


def DistributedOptimizer(optimizer, named_parameters=None, compression=None, op="avg",
                         backward_passes_per_step=1, bucket_mb=25, group=None):
    """Wraps optimizer so that step() applies gradients averaged (op) over the ranks of
    group (see comm_of).  named_parameters is accepted for Horovod's signature; the
    parameters are the optimizer's.  Wrap before the first step: the wrapped optimizer's
    state is not carried over."""
    del named_parameters
    wrapped = wrap_optimizer(optimizer, _DistributedOptimizer)
    wrapped._collie_setup(comm_of(group), compression, op, backward_passes_per_step,
                          int(bucket_mb * (1 << 20)))
    return wrapped
