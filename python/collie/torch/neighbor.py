# SPDX-License-Identifier: BSD-3-Clause
"""BlueFog's neighbour optimizers on collie: decentralized training in PyTorch.

    opt = collie.torch.NeighborOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                         topology="exp2", combine="atc")
    for x, y in data:
        opt.zero_grad()
        loss_fn(model(x), y).backward()     # no gradient allreduce
        opt.step()                          # the local step, then the model averaged
    opt.synchronize()                       # (awc) before reading the model at the end

No gradient is averaged: each rank takes its own optimizer step and averages
its *parameters* with its neighbours of a virtual topology
(comm.ineighbor_allreduce).  topology: a name ("exp2", "ring", "full", the
schedules "onepeer-exp2", "onepeer-exact", the host-aware "inner-outer-ring"
and "inner-outer-exp2"), a collie.Topology (static) or a collie.Schedule
(dynamic: step t averages over its step t).

combine="atc" (adapt-then-combine, BlueFog's DistributedAdaptThenCombineOptimizer):
    x <- W (x - lr g(x)): the step, then the average.
combine="awc" (adapt-with-combine, BlueFog's DistributedAdaptWithCombineOptimizer):
    x <- W x - lr g(x): W x is computed while the next forward and backward passes
    run (the average of a snapshot starts at the end of step()), so the
    communication overlaps the computation.
global_avg_every=H also averages the parameters over all ranks every H steps.
wire="float16" / "bfloat16" sends float32 parameters in 16 bits.
"""
import torch

import collie

from .optimizer import comm_of, wrap_optimizer

__all__ = ["NeighborOptimizer", "DistributedAdaptThenCombineOptimizer",
           "DistributedAdaptWithCombineOptimizer"]

_AVERAGED = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


class _Flat:
    """Parameters of one dtype, averaged as one buffer."""

    def __init__(self, params):
        self.params = params
        numel = sum(p.numel() for p in params)
        self.send = torch.empty(numel, dtype=params[0].dtype)
        self.out = torch.empty_like(self.send)
        self.request = None

    def pack(self):
        offset = 0
        for p in self.params:
            self.send[offset:offset + p.numel()].copy_(p.detach().reshape(-1))
            offset += p.numel()

    def unpack(self, flat):
        offset = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(flat[offset:offset + p.numel()].view_as(p))
                offset += p.numel()


class _NeighborOptimizer:
    """Methods mixed into a subclass of the wrapped optimizer's class."""

    def _collie_setup(self, comm, topology, combine, global_avg_every, wire):
        if combine not in ("atc", "awc"):
            raise ValueError("collie: combine is 'atc' or 'awc', not %r" % (combine,))
        if wire not in (None, "float16", "bfloat16"):
            raise ValueError("collie: wire is None, 'float16' or 'bfloat16', not %r" % (wire,))
        if isinstance(topology, str):
            topology = collie.Schedule(topology, comm.size, comm.hosts())
        if not isinstance(topology, (collie.Topology, collie.Schedule)):
            raise TypeError("collie: topology is a name, a collie.Topology or a collie.Schedule")
        by_dtype = {}
        for g in self.param_groups:
            for p in g["params"]:
                if p.dtype not in _AVERAGED:
                    raise TypeError("collie: neighbour averaging takes floating-point "
                                    "parameters, not %s" % p.dtype)
                by_dtype.setdefault(p.dtype, []).append(p)
        self._comm = comm
        self._topology = topology
        self._awc = combine == "awc"
        self._global_every = int(global_avg_every or 0)
        self._wire = wire
        self._flats = [_Flat(ps) for ps in by_dtype.values()]
        self._steps = 0   # optimizer steps taken
        self._averages = 0  # averaging steps issued (the schedule's step)

    def _topology_now(self):
        t = self._topology
        return t.step(self._averages) if isinstance(t, collie.Schedule) else t

    def _start_average(self):
        topo = self._topology_now()
        self._averages += 1
        for f in self._flats:
            f.pack()
            wire = self._wire if f.send.dtype == torch.float32 else None
            f.request = self._comm.ineighbor_allreduce(f.send, topo, f.out, wire=wire)

    def _finish_average(self, apply=True):
        for f in self._flats:
            if f.request is not None:
                f.request.wait()
                f.request = None
                if apply:
                    f.unpack(f.out)

    def _global_average(self):
        for f in self._flats:
            f.pack()
            self._comm.allreduce(f.send, op="avg")
            f.unpack(f.send)

    def step(self, closure=None):
        if self._awc:
            if self._flats and self._flats[0].request is None:
                self._start_average()  # the first step: nothing was started during its passes
            self._finish_average()     # x <- W x ...
        loss = super(self.__class__, self).step(closure)  # ... - lr g(x)
        self._steps += 1
        if not self._awc:
            self._start_average()
            self._finish_average()
        if self._global_every and self._steps % self._global_every == 0:
            self._global_average()
        if self._awc:
            self._start_average()  # the next step's combine, during its passes
        return loss

    def synchronize(self):
        """Waits for the averaging in flight (awc) without applying it: the parameters are
        this rank's model after its last step."""
        self._finish_average(apply=False)


def NeighborOptimizer(optimizer, topology="exp2", combine="atc", global_avg_every=0, wire=None,
                      group=None):
    """Wraps optimizer so that step() takes the local step and averages the parameters
    with the neighbours of topology (see the module's text); group as comm_of.  Every
    rank wraps alike and steps in the same order."""
    wrapped = wrap_optimizer(optimizer, _NeighborOptimizer)
    wrapped._collie_setup(comm_of(group), topology, combine, global_avg_every, wire)
    return wrapped


def DistributedAdaptThenCombineOptimizer(optimizer, topology="exp2", **kwargs):
    """BlueFog's name: NeighborOptimizer with combine="atc"."""
    return NeighborOptimizer(optimizer, topology, combine="atc", **kwargs)


def DistributedAdaptWithCombineOptimizer(optimizer, topology="exp2", **kwargs):
    """BlueFog's name: NeighborOptimizer with combine="awc"."""
    return NeighborOptimizer(optimizer, topology, combine="awc", **kwargs)
