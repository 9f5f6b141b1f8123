# SPDX-License-Identifier: BSD-3-Clause
"""Virtual topologies and schedules for decentralized averaging (include/collie.h).

    topo = collie.Topology("exponential", comm.size, 2)     # or ring, mesh, star, full, ...
    comm.neighbor_allreduce(x, topo)                         # x = W[r][r] x + sum W[r][j] x_j
    sched = collie.Schedule("onepeer-exact", comm.size)     # one peer per step, any size
    for t in range(steps):
        comm.neighbor_allreduce(x, sched.step(t))

A topology or schedule is immutable and shared by every thread; every rank
builds the same one.
"""
import ctypes
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _lib

KINDS = {"exponential": 0, "symmetric-exponential": 1, "ring": 2, "mesh": 3, "star": 4,
         "full": 5}
SCHEDULES = {"onepeer-exp2": 0, "onepeer-exact": 1}


def _raise(code):
    from . import CollieError  # the package's, defined before this module is used
    raise CollieError(code, _lib.last_error(None).decode(errors="replace"))


class Topology:
    """A weighted directed graph over size ranks (see collie_topology_create).

    Topology(kind, size, param=0): kind one of KINDS; or Topology.from_edges(...)."""

    def __init__(self, kind, size, param=0, _handle=None, _owner=None):
        self._owner = _owner  # a schedule's step: the schedule keeps it alive and frees it
        if _handle is not None:
            self._handle = _handle
            return
        if kind not in KINDS:
            raise ValueError("collie: topology kind must be one of %s, not %r"
                             % (", ".join(KINDS), kind))
        self._handle = ctypes.c_void_p()
        code = _lib.topology_create(KINDS[kind], int(size), int(param),
                                    ctypes.byref(self._handle))
        if code:
            self._handle = None
            _raise(code)

    @classmethod
    def from_edges(cls, size: int, edges: Sequence[Tuple[int, int]],
                   weights: Optional[Sequence[float]] = None) -> "Topology":
        """edges: (from, to) pairs (data flows from -> to); weights: W[to][from] each, or None."""
        n = len(edges)
        src = (ctypes.c_int * max(n, 1))(*[int(a) for a, _ in edges])
        dst = (ctypes.c_int * max(n, 1))(*[int(b) for _, b in edges])
        w = None if weights is None else (ctypes.c_double * max(n, 1))(*map(float, weights))
        handle = ctypes.c_void_p()
        code = _lib.topology_from_edges(int(size), n, src, dst, w, ctypes.byref(handle))
        if code:
            _raise(code)
        return cls(None, size, _handle=handle)

    @property
    def size(self) -> int:
        return _lib.topology_size(self._handle)

    def _list(self, fn, rank):
        n = fn(self._handle, int(rank), None, None, 0)
        if n < 0:
            raise ValueError("collie: rank %d is outside the topology" % rank)
        ranks, weights = (ctypes.c_int * max(n, 1))(), (ctypes.c_double * max(n, 1))()
        fn(self._handle, int(rank), ranks, weights, n)
        return list(ranks[:n]), list(weights[:n])

    def in_neighbors(self, rank: int) -> Tuple[List[int], List[float]]:
        """(ranks, weights): whose data rank combines, and the weight it gives each."""
        return self._list(_lib.topology_in, rank)

    def out_neighbors(self, rank: int) -> Tuple[List[int], List[float]]:
        """(ranks, weights): who combines rank's data, with the weight each gives it."""
        return self._list(_lib.topology_out, rank)

    def self_weight(self, rank: int) -> float:
        return _lib.topology_self_weight(self._handle, int(rank))

    def check(self) -> Dict[str, Any]:
        """dict: regular, row_stochastic, column_stochastic, max_degree, rho."""
        p = _lib.TopologyProps()
        code = _lib.topology_check(self._handle, ctypes.byref(p))
        if code:
            _raise(code)
        return {f: getattr(p, f) for f, _ in p._fields_}

    def __del__(self):
        if getattr(self, "_handle", None) and self._owner is None:
            _lib.topology_free(self._handle)
            self._handle = None


class Schedule:
    """A topology per step, repeating with a period: Schedule(name, size), name as
    collie_schedule_from_name ("exp2", "ring", ..., "onepeer-exp2", "onepeer-exact"); the
    host-aware "inner-outer-ring" and "inner-outer-exp2" take host_of, every rank's host
    (comm.hosts())."""

    def __init__(self, name, size, host_of=None):
        self._handle = ctypes.c_void_p()
        hosts = None
        if host_of is not None:
            if len(host_of) != size:
                raise ValueError("collie: host_of has %d entries for %d ranks"
                                 % (len(host_of), size))
            hosts = (ctypes.c_int * max(size, 1))(*map(int, host_of))
        code = _lib.schedule_from_name_hosts(str(name).encode(), int(size), hosts,
                                             ctypes.byref(self._handle))
        if code:
            self._handle = None
            _raise(code)

    @property
    def period(self) -> int:
        return _lib.schedule_period(self._handle)

    def step(self, t: int) -> "Topology":
        """The topology of step t (t mod the period); valid while the schedule lives."""
        if t < 0:
            raise ValueError("collie: a schedule's step is >= 0, not %d" % t)
        return Topology(None, 0, _handle=ctypes.c_void_p(_lib.schedule_step(self._handle, t)),
                        _owner=self)

    def __del__(self):
        if getattr(self, "_handle", None):
            _lib.schedule_free(self._handle)
            self._handle = None
