# SPDX-License-Identifier: BSD-3-Clause
"""collie from Python: collectives on numpy arrays and CPU torch tensors, zero-copy.

    import collie, numpy as np
    comm = collie.init()                      # from collie run's, torchrun's, mpirun's variables
    x = np.arange(4, dtype=np.float32)
    comm.allreduce(x)                         # in place; or comm.allreduce(x, out)
    req = comm.iallreduce(x, op="avg")        # non-blocking: overlaps with what follows
    ...
    req.wait()                                # raises collie.CollieError on failure
    comm.finalize()

Every call is a thin layer over libcollie's C API (include/collie.h documents
the semantics); a failure raises CollieError carrying the status and
collie_last_error's detail.  Buffers must be C-contiguous; numpy arrays and
torch tensors are passed by pointer, never copied, and a non-blocking call
keeps a reference to them until its request completes.
"""
import contextlib
import ctypes
import math
from typing import Any, List, Optional, Sequence, Tuple, Union

from . import _lib

__all__ = ["CollieError", "Comm", "Compressor", "Request", "Schedule", "Topology", "Window",
           "empty", "init", "get_unique_id", "init_rank", "version"]

# include/collie.h's COLLIE_STATUS_MAP, in order (values are stable).
STATUS = ["OK", "INVALID_ARG", "SYSTEM", "TIMEOUT", "PEER_LOST", "MISMATCH", "NOMEM", "AUTH",
          "UNSUPPORTED", "INTERNAL", "ABORTED"]
FLOAT32, FLOAT64, FLOAT16, BFLOAT16, INT8, UINT8, INT32, INT64 = range(8)
_DTYPE_NAMES = {"float32": FLOAT32, "float64": FLOAT64, "float16": FLOAT16, "bfloat16": BFLOAT16,
                "int8": INT8, "uint8": UINT8, "int32": INT32, "int64": INT64}
_OPS = {"sum": 0, "prod": 1, "min": 2, "max": 3, "avg": 4}
Buffer = Any  # a C-contiguous numpy array or CPU torch tensor (neither is a dependency)


class CollieError(RuntimeError):
    """A collie call failed: .status (e.g. "TIMEOUT"), .code, and the detail in the message."""

    def __init__(self, code, detail):
        self.code = code
        self.status = STATUS[code] if 0 <= code < len(STATUS) else "status %d" % code
        reason = _lib.strerror(code).decode()
        super().__init__("COLLIE_ERR_%s: %s%s" % (self.status, reason,
                                                  ": " + detail if detail else ""))


def _check(handle, code):
    if code:
        raise CollieError(code, _lib.last_error(handle).decode(errors="replace"))


def _op(op):
    try:
        return _OPS[op] if isinstance(op, str) else int(op)
    except KeyError:
        raise ValueError("op must be one of %s, not %r" % (", ".join(_OPS), op)) from None


def _dtype_of(x):
    """(pointer, elements, collie dtype) of a contiguous numpy array or CPU torch tensor."""
    module = type(x).__module__
    if module.startswith("torch"):
        if x.device.type != "cpu":
            raise ValueError("collie: tensors must be on the CPU, not %s" % x.device)
        if not x.is_contiguous():
            raise ValueError("collie: tensors must be contiguous (call .contiguous())")
        name = str(x.dtype).replace("torch.", "")
        if name not in _DTYPE_NAMES:
            raise TypeError("collie: unsupported tensor dtype %s" % x.dtype)
        return x.data_ptr(), x.numel(), _DTYPE_NAMES[name]
    if hasattr(x, "__array_interface__"):
        if not x.flags["C_CONTIGUOUS"]:
            raise ValueError("collie: arrays must be C-contiguous (numpy.ascontiguousarray)")
        name = str(x.dtype)
        if name not in _DTYPE_NAMES:
            raise TypeError("collie: unsupported array dtype %s" % x.dtype)
        return x.__array_interface__["data"][0], x.size, _DTYPE_NAMES[name]
    raise TypeError("collie: expected a numpy array or a torch tensor, not %s" % type(x).__name__)


def _pair(send, recv):
    sp, sn, st = _dtype_of(send)
    if recv is None or recv is send:
        return sp, sp, sn, sn, st
    rp, rn, rt = _dtype_of(recv)
    if rt != st:
        raise TypeError("collie: send and receive buffers have different dtypes")
    return sp, rp, sn, rn, st


class Compressor:
    """Error-feedback state for one float32 buffer of `count` elements on `comm`
    (collie_compressor): kind "int8" (3.9x fewer bytes than float32) or "sign" (28x).
    One call at a time may use it; it is freed with the object, or by free()."""

    KINDS = {"int8": 1, "sign": 2}

    def __init__(self, comm: "Comm", count: int, kind: str = "int8"):
        if kind not in self.KINDS:
            raise ValueError("collie: kind must be one of %s, not %r" % (", ".join(self.KINDS), kind))
        self._handle = ctypes.c_void_p()
        _check(comm._handle, _lib.compressor_create(comm._handle, int(count), self.KINDS[kind],
                                                    ctypes.byref(self._handle)))
        self.comm, self.count, self.kind = comm, int(count), kind

    def free(self) -> None:
        if self._handle:
            _check(self.comm._handle, _lib.compressor_free(self._handle))
            self._handle = ctypes.c_void_p()

    def __del__(self):
        try:
            if self._handle:
                _lib.compressor_free(self._handle)
        except Exception:
            pass


class Request:
    """A pending non-blocking operation: wait() or test() it, once, to completion."""

    def __init__(self, comm, keep):
        self._comm = comm
        self._handle = ctypes.c_void_p()
        self._keep = keep  # the buffers stay alive until completion
        self._done = False
        self.result = keep[-1] if keep else None

    def wait(self) -> Any:
        """Blocks until the operation completes; returns its result buffer, or raises."""
        if self._done:
            return self.result
        self._done = True
        code = _lib.wait(self._handle)
        self._keep = None
        _check(self._comm._handle, code)
        return self.result

    def test(self) -> bool:
        """True once complete (raising if it failed); False while pending."""
        if self._done:
            return True
        flag = ctypes.c_int(0)
        code = _lib.test(self._handle, ctypes.byref(flag))
        if flag.value:
            self._done = True
            self._keep = None
        _check(self._comm._handle, code)
        return bool(flag.value)

    def __del__(self):
        if not self._done and self._handle:
            try:
                _lib.wait(self._handle)  # never leave the library holding a dead buffer
            except Exception:
                pass


class Comm:
    """A communicator: the collectives, their non-blocking forms, send/recv, split, abort."""

    def __init__(self, handle):
        self._handle = handle

    # ---- identity -----------------------------------------------------------------
    @property
    def rank(self) -> int:
        return _lib.rank(self._handle)

    @property
    def size(self) -> int:
        return _lib.size(self._handle)

    @property
    def local_rank(self) -> int:
        return _lib.local_rank(self._handle)

    @property
    def local_size(self) -> int:
        return _lib.local_size(self._handle)

    @property
    def host_count(self) -> int:
        return _lib.host_count(self._handle)

    @property
    def host_index(self) -> int:
        """This rank's host, 0..host_count-1 (in the order of each host's lowest rank)."""
        return _lib.host_index(self._handle)

    def counters(self) -> Tuple[int, int]:
        """(operations completed, bytes of this rank's data that other ranks received).

        Each byte counts once per receiving rank, whichever side moved it
        (collie_get_counters in collie.h)."""
        ops, sent = ctypes.c_ulonglong(), ctypes.c_ulonglong()
        _check(self._handle, _lib.get_counters(self._handle, ctypes.byref(ops), ctypes.byref(sent)))
        return ops.value, sent.value

    # ---- calls ----------------------------------------------------------------------
    def _run(self, blocking, fn, args, keep):
        if blocking:
            _check(self._handle, fn(self._handle, *args))
            return keep[-1]
        req = Request(self, keep)
        _check(self._handle, fn(self._handle, *args, ctypes.byref(req._handle)))
        return req

    def _allreduce(self, blocking, send, out, op):
        sp, rp, sn, rn, t = _pair(send, out)
        if rn != sn:
            raise ValueError("collie: allreduce buffers differ in length (%d, %d)" % (sn, rn))
        fn = _lib.allreduce if blocking else _lib.iallreduce
        return self._run(blocking, fn, (sp, rp, sn, t, _op(op)),
                         [send, send if out is None else out])

    def allreduce(self, send: Buffer, out: Optional[Buffer] = None, op: str = "sum") -> Buffer:
        """out[i] = op over ranks of send[i] (in place when out is None); returns out."""
        return self._allreduce(True, send, out, op)

    def iallreduce(self, send: Buffer, out: Optional[Buffer] = None,
                   op: str = "sum") -> "Request":
        return self._allreduce(False, send, out, op)

    def _broadcast(self, blocking, buf, root):
        p, n, t = _dtype_of(buf)
        return self._run(blocking, _lib.broadcast if blocking else _lib.ibroadcast,
                         (p, n, t, int(root)), [buf])

    def broadcast(self, buf: Buffer, root: int = 0) -> Buffer:
        """Copies root's buf into buf on every rank; returns buf."""
        return self._broadcast(True, buf, root)

    def ibroadcast(self, buf: Buffer, root: int = 0) -> "Request":
        return self._broadcast(False, buf, root)

    def _reduce(self, blocking, send, out, op, root):
        sp, rp, sn, _, t = _pair(send, out)
        fn = _lib.reduce if blocking else _lib.ireduce
        return self._run(blocking, fn, (sp, rp, sn, t, _op(op), int(root)),
                         [send, send if out is None else out])

    def reduce(self, send: Buffer, out: Optional[Buffer] = None, op: str = "sum",
               root: int = 0) -> Buffer:
        """Like allreduce, but only root's out is written."""
        return self._reduce(True, send, out, op, root)

    def ireduce(self, send: Buffer, out: Optional[Buffer] = None, op: str = "sum",
                root: int = 0) -> "Request":
        return self._reduce(False, send, out, op, root)

    def _allgather(self, blocking, send, out):
        sp, rp, sn, rn, t = _pair(send, out)
        if rn != sn * self.size:
            raise ValueError("collie: allgather's out needs size x %d elements, has %d" % (sn, rn))
        fn = _lib.allgather if blocking else _lib.iallgather
        return self._run(blocking, fn, (sp, rp, sn, t), [send, out])

    def allgather(self, send: Buffer, out: Buffer) -> Buffer:
        """out (size x len(send) elements) receives every rank's send in rank order."""
        return self._allgather(True, send, out)

    def iallgather(self, send: Buffer, out: Buffer) -> "Request":
        return self._allgather(False, send, out)

    def _reduce_scatter(self, blocking, send, out, op):
        sp, rp, sn, rn, t = _pair(send, out)
        if sn != rn * self.size:
            raise ValueError("collie: reduce_scatter's send needs size x %d elements, has %d"
                             % (rn, sn))
        fn = _lib.reduce_scatter if blocking else _lib.ireduce_scatter
        return self._run(blocking, fn, (sp, rp, rn, t, _op(op)), [send, out])

    def reduce_scatter(self, send: Buffer, out: Buffer, op: str = "sum") -> Buffer:
        """Rank r's out receives block r (len(out) elements) of send, reduced over ranks."""
        return self._reduce_scatter(True, send, out, op)

    def ireduce_scatter(self, send: Buffer, out: Buffer, op: str = "sum") -> "Request":
        return self._reduce_scatter(False, send, out, op)

    def _alltoall(self, blocking, send, out):
        sp, rp, sn, rn, t = _pair(send, out)
        if sn != rn or sn % self.size:
            raise ValueError("collie: alltoall needs equal buffers of size x count elements")
        fn = _lib.alltoall if blocking else _lib.ialltoall
        return self._run(blocking, fn, (sp, rp, sn // self.size, t), [send, out])

    def alltoall(self, send: Buffer, out: Buffer) -> Buffer:
        """Block j of rank i's send lands in block i of rank j's out."""
        return self._alltoall(True, send, out)

    def ialltoall(self, send: Buffer, out: Buffer) -> "Request":
        return self._alltoall(False, send, out)

    def barrier(self) -> None:
        _check(self._handle, _lib.barrier(self._handle))

    def ibarrier(self) -> "Request":
        return self._run(False, _lib.ibarrier, (), [None])

    def _p2p(self, blocking, fn, buf, peer):
        p, n, t = _dtype_of(buf)
        return self._run(blocking, fn, (p, n, t, int(peer)), [buf])

    def send(self, buf: Buffer, peer: int) -> None:
        return self._p2p(True, _lib.send, buf, peer)

    def recv(self, buf: Buffer, peer: int) -> Buffer:
        """Receives into buf (its length and dtype must match the sender's); returns buf."""
        return self._p2p(True, _lib.recv, buf, peer)

    def isend(self, buf: Buffer, peer: int) -> "Request":
        return self._p2p(False, _lib.isend, buf, peer)

    def irecv(self, buf: Buffer, peer: int) -> "Request":
        return self._p2p(False, _lib.irecv, buf, peer)

    def _compressed(self, blocking, send, out, wire, op):
        sp, rp, sn, rn, t = _pair(send, out)
        if t != FLOAT32 or rn != sn:
            raise TypeError("collie: a compressed allreduce takes float32 buffers of one length")
        w = _DTYPE_NAMES.get(wire, wire)
        fn = _lib.allreduce_compressed if blocking else _lib.iallreduce_compressed
        return self._run(blocking, fn, (sp, rp, sn, w, _op(op)),
                         [send, send if out is None else out])

    def allreduce_compressed(self, send: Buffer, out: Optional[Buffer] = None,
                             wire: str = "float16", op: str = "avg") -> Buffer:
        """A float32 allreduce that travels as float16 or bfloat16 and is reduced in float32."""
        return self._compressed(True, send, out, wire, op)

    def iallreduce_compressed(self, send: Buffer, out: Optional[Buffer] = None,
                              wire: str = "float16", op: str = "avg") -> "Request":
        return self._compressed(False, send, out, wire, op)

    def _ef(self, blocking, buf, compressor, op):
        ptr, n, t = _dtype_of(buf)
        if t != FLOAT32 or n != compressor.count or compressor.comm is not self:
            raise ValueError("collie: allreduce_ef takes the float32 buffer of %d elements its "
                             "compressor was made for, on its communicator" % compressor.count)
        fn = _lib.allreduce_ef if blocking else _lib.iallreduce_ef
        return self._run(blocking, fn, (compressor._handle, ptr, n, _op(op)), [compressor, buf])

    def allreduce_ef(self, buf: Buffer, compressor: "Compressor", op: str = "avg") -> Buffer:
        """buf becomes its compressed sum or average over the ranks, in place, with error
        feedback: what the codes drop stays in the compressor for the next call."""
        return self._ef(True, buf, compressor, op)

    def iallreduce_ef(self, buf: Buffer, compressor: "Compressor",
                      op: str = "avg") -> "Request":
        return self._ef(False, buf, compressor, op)

    # ---- decentralized averaging (topology.py) ------------------------------------------
    def _neighbor(self, blocking, send, out, topology, hierarchical, wire=None):
        sp, rp, sn, rn, t = _pair(send, out)
        if rn != sn:
            raise ValueError("collie: neighbour buffers differ in length (%d, %d)" % (sn, rn))
        if wire is not None:
            if t != FLOAT32:
                raise TypeError("collie: a compressed neighbour step takes float32 buffers")
            fn = _lib.neighbor_allreduce_compressed if blocking else \
                _lib.ineighbor_allreduce_compressed
            return self._run(blocking, fn, (topology._handle, sp, rp, sn,
                                            _DTYPE_NAMES.get(wire, wire)),
                             [topology, send, send if out is None else out])
        if hierarchical:
            fn = _lib.hierarchical_neighbor_allreduce if blocking else \
                _lib.ihierarchical_neighbor_allreduce
        else:
            fn = _lib.neighbor_allreduce if blocking else _lib.ineighbor_allreduce
        return self._run(blocking, fn, (topology._handle, sp, rp, sn, t),
                         [topology, send, send if out is None else out])

    def hosts(self) -> List[int]:
        """Every rank's host (0..host_count-1), for the host-aware schedules."""
        return [_lib.host_of(self._handle, r) for r in range(self.size)]

    def neighbor_allreduce(self, send: Buffer, topology: "Topology", out: Optional[Buffer] = None,
                           wire: Optional[str] = None) -> Buffer:
        """One averaging step over topology (a Topology, or a Schedule's step): on rank r,
        out = W[r][r] send + sum over in-neighbours j of W[r][j] send_j; returns out.
        wire="float16" or "bfloat16": float32 data travels in 16 bits."""
        return self._neighbor(True, send, out, topology, False, wire)

    def ineighbor_allreduce(self, send: Buffer, topology: "Topology",
                            out: Optional[Buffer] = None,
                            wire: Optional[str] = None) -> "Request":
        return self._neighbor(False, send, out, topology, False, wire)

    def hierarchical_neighbor_allreduce(self, send: Buffer, topology: "Topology",
                                        out: Optional[Buffer] = None) -> Buffer:
        """The same between hosts: topology over host_count nodes, each host's mean as a node."""
        return self._neighbor(True, send, out, topology, True)

    def ihierarchical_neighbor_allreduce(self, send: Buffer, topology: "Topology",
                                         out: Optional[Buffer] = None) -> "Request":
        return self._neighbor(False, send, out, topology, True)

    def _dynamic(self, blocking, send, out, recv_ranks, recv_weights, self_weight, send_ranks,
                 send_weights):
        sp, rp, sn, rn, t = _pair(send, out)
        if rn != sn:
            raise ValueError("collie: neighbour buffers differ in length (%d, %d)" % (sn, rn))

        def ints(v):
            return (ctypes.c_int * max(len(v), 1))(*map(int, v))

        def dbls(v):
            return None if v is None else (ctypes.c_double * max(len(v), 1))(*map(float, v))
        nb = _lib.Neighbors(len(recv_ranks), ints(recv_ranks), dbls(recv_weights),
                            float(self_weight), len(send_ranks), ints(send_ranks),
                            dbls(send_weights))
        fn = _lib.neighbor_allreduce_dynamic if blocking else _lib.ineighbor_allreduce_dynamic
        return self._run(blocking, fn, (ctypes.byref(nb), sp, rp, sn, t),
                         [send, send if out is None else out])

    def neighbor_allreduce_dynamic(self, send: Buffer, recv_ranks: Sequence[int],
                                   send_ranks: Sequence[int],
                                   recv_weights: Optional[Sequence[float]] = None,
                                   self_weight: float = 0.0,
                                   send_weights: Optional[Sequence[float]] = None,
                                   out: Optional[Buffer] = None) -> Buffer:
        """This step's lists (collie_neighbors): receive from recv_ranks (weights recv_weights,
        own weight self_weight; None: uniform 1/(len+1)), send to send_ranks (each scaled
        by send_weights; None: as is)."""
        return self._dynamic(True, send, out, recv_ranks, recv_weights, self_weight, send_ranks,
                             send_weights)

    def ineighbor_allreduce_dynamic(self, send: Buffer, recv_ranks: Sequence[int],
                                    send_ranks: Sequence[int],
                                    recv_weights: Optional[Sequence[float]] = None,
                                    self_weight: float = 0.0,
                                    send_weights: Optional[Sequence[float]] = None,
                                    out: Optional[Buffer] = None) -> "Request":
        return self._dynamic(False, send, out, recv_ranks, recv_weights, self_weight, send_ranks,
                             send_weights)

    def _allgather_nbr(self, blocking, send, out, topology):
        sp, rp, sn, rn, t = _pair(send, out)
        degree = len(topology.in_neighbors(self.rank)[0])
        if out is None or out is send or rn != degree * sn:
            raise ValueError("collie: neighbor_allgather needs out of in-degree x len(send) = "
                             "%d x %d elements, apart from send" % (degree, sn))
        fn = _lib.neighbor_allgather if blocking else _lib.ineighbor_allgather
        return self._run(blocking, fn, (topology._handle, sp, rp, sn, t), [topology, send, out])

    def neighbor_allgather(self, send: Buffer, topology: "Topology", out: Buffer) -> Buffer:
        """out = the in-neighbours' sends, one after the other in increasing rank order
        (this rank's own is not among them); returns out."""
        return self._allgather_nbr(True, send, out, topology)

    def ineighbor_allgather(self, send: Buffer, topology: "Topology",
                            out: Buffer) -> "Request":
        return self._allgather_nbr(False, send, out, topology)

    def _gossip(self, blocking, send, out, peer, self_weight, pair_weight):
        sp, rp, sn, rn, t = _pair(send, out)
        if rn != sn:
            raise ValueError("collie: gossip buffers differ in length (%d, %d)" % (sn, rn))
        fn = _lib.pair_gossip if blocking else _lib.ipair_gossip
        return self._run(blocking, fn, (int(peer), sp, rp, sn, t, float(self_weight),
                                        float(pair_weight)), [send, send if out is None else out])

    def pair_gossip(self, send: Buffer, peer: int, self_weight: float = 0.5,
                    pair_weight: float = 0.5, out: Optional[Buffer] = None) -> Buffer:
        """Exchange with peer (who calls it with this rank): out = self_weight send +
        pair_weight (peer's send); returns out."""
        return self._gossip(True, send, out, peer, self_weight, pair_weight)

    def ipair_gossip(self, send: Buffer, peer: int, self_weight: float = 0.5,
                     pair_weight: float = 0.5, out: Optional[Buffer] = None) -> "Request":
        return self._gossip(False, send, out, peer, self_weight, pair_weight)

    @contextlib.contextmanager
    def group(self):
        """Fuses the non-blocking allreduces issued inside (collie_group_start/end)."""
        _check(self._handle, _lib.group_start(self._handle))
        try:
            yield self
        finally:
            _check(self._handle, _lib.group_end(self._handle))

    # ---- communicators ----------------------------------------------------------------
    def split(self, color: int, key: int = 0) -> Optional["Comm"]:
        """MPI_Comm_split: a Comm of the ranks with this color (ordered by key), or None."""
        out = ctypes.c_void_p()
        _check(self._handle, _lib.comm_split(self._handle, int(color), int(key), ctypes.byref(out)))
        return Comm(out) if out.value else None

    def shrink(self) -> "Comm":
        """ULFM's MPI_Comm_shrink: a Comm of the ranks still alive, in their order.

        Call it on every survivor after a failure (CollieError PEER_LOST or
        TIMEOUT); this Comm stays as it is and must still be finalized.
        """
        out = ctypes.c_void_p()
        _check(None, _lib.comm_shrink(self._handle, ctypes.byref(out)))
        return Comm(out)

    def abort(self) -> None:
        """Fails every pending and later call with ABORTED; safe from any thread."""
        _check(self._handle, _lib.comm_abort(self._handle))

    def finalize(self) -> None:
        if self._handle:
            _lib.finalize(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finalize()


class _Memory:
    """collie_mem_alloc's bytes, freed when the last array on them goes."""

    def __init__(self, nbytes):
        ptr = ctypes.c_void_p()
        _check(None, _lib.mem_alloc(ctypes.byref(ptr), nbytes))
        self._ptr = ptr.value
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                    "data": (self._ptr, False)}

    def __del__(self):
        if getattr(self, "_ptr", None):
            _lib.mem_free(self._ptr)
            self._ptr = None


def empty(shape: Union[int, Sequence[int]], dtype: str = "float32") -> Any:
    """A zeroed numpy array in memory that this host's other ranks map (collie_mem_alloc).

    Collectives whose buffers lie in it copy between the host's ranks through
    those mappings, not the kernel (include/collie.h).  torch.from_numpy(a)
    gives a tensor on the same memory.  Freed when the last array or tensor
    on it goes.
    """
    import numpy as np
    dt = np.dtype(dtype)
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    count = math.prod(int(d) for d in dims)
    raw = np.asarray(_Memory(max(count * dt.itemsize, 1)))
    return raw[:count * dt.itemsize].view(dt).reshape(dims)


def init() -> Comm:
    """Joins the job the environment describes (collie run, torchrun, mpirun, srun)."""
    handle = ctypes.c_void_p()
    _check(None, _lib.init(ctypes.byref(handle)))
    return Comm(handle)


def get_unique_id() -> bytes:
    """128 bytes naming a new communicator (rank 0 draws them, any channel carries them)."""
    uid = _lib.UniqueId()
    _check(None, _lib.get_unique_id(ctypes.byref(uid)))
    return ctypes.string_at(ctypes.addressof(uid), 128)  # .internal would stop at a NUL


def init_rank(size: int, unique_id: bytes, rank: int) -> Comm:
    """Joins, as rank, the communicator of size ranks that unique_id names."""
    if len(unique_id) != 128:
        raise ValueError("collie: a unique id is 128 bytes, not %d" % len(unique_id))
    uid = _lib.UniqueId()
    ctypes.memmove(ctypes.addressof(uid), bytes(unique_id), 128)
    handle = ctypes.c_void_p()
    _check(None, _lib.init_rank(ctypes.byref(handle), int(size), ctypes.byref(uid), int(rank)))
    return Comm(handle)


def version() -> str:
    """The library's version ("major.minor.patch"): the package's is the same."""
    return _lib.version().decode()


__version__ = version()


from .topology import Schedule, Topology  # noqa: E402 (uses CollieError above)
from .window import Window  # noqa: E402
