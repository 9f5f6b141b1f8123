# SPDX-License-Identifier: BSD-3-Clause
"""The C library under the package: finding libcollie.so and declaring its calls.

No compiled extension: ctypes calls the library's C API (include/collie.h),
so a new PyTorch or Python ABI never breaks the package.  ctypes releases the
GIL during each call, so other Python threads run while one waits.
"""
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("COLLIE_LIBRARY")
    if env:
        yield env
    yield os.path.join(_HERE, "libcollie.so")  # built into the wheel by `pip install .`
    found = ctypes.util.find_library("collie")  # `cmake --install`: the system's
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError(
        "collie: cannot load libcollie.so; tried: %s. Install the package with its library "
        "(pip install . in collie's source tree), install the library (cmake --install build), "
        "or point COLLIE_LIBRARY at one (a source tree's build/libcollie.so)"
        % ("; ".join(tried) or "nothing"))


lib = _load()

c_status = ctypes.c_int
c_comm = ctypes.c_void_p
c_req = ctypes.c_void_p
_size = ctypes.c_size_t
_int = ctypes.c_int
_ptr = ctypes.c_void_p


class UniqueId(ctypes.Structure):
    """collie_unique_id: 128 bytes that name a communicator to be made."""
    _fields_ = [("internal", ctypes.c_char * 128)]


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


P = ctypes.POINTER
init = _declare("collie_init", c_status, P(c_comm))
finalize = _declare("collie_finalize", c_status, c_comm)
rank = _declare("collie_rank", _int, c_comm)
size = _declare("collie_size", _int, c_comm)
local_rank = _declare("collie_local_rank", _int, c_comm)
local_size = _declare("collie_local_size", _int, c_comm)
strerror = _declare("collie_strerror", ctypes.c_char_p, c_status)
last_error = _declare("collie_last_error", ctypes.c_char_p, c_comm)
version = _declare("collie_version", ctypes.c_char_p)
get_counters = _declare("collie_get_counters", c_status, c_comm, P(ctypes.c_ulonglong),
                        P(ctypes.c_ulonglong))

allreduce = _declare("collie_allreduce", c_status, c_comm, _ptr, _ptr, _size, _int, _int)
broadcast = _declare("collie_broadcast", c_status, c_comm, _ptr, _size, _int, _int)
reduce = _declare("collie_reduce", c_status, c_comm, _ptr, _ptr, _size, _int, _int, _int)
allgather = _declare("collie_allgather", c_status, c_comm, _ptr, _ptr, _size, _int)
reduce_scatter = _declare("collie_reduce_scatter", c_status, c_comm, _ptr, _ptr, _size, _int, _int)
alltoall = _declare("collie_alltoall", c_status, c_comm, _ptr, _ptr, _size, _int)
barrier = _declare("collie_barrier", c_status, c_comm)
mem_alloc = _declare("collie_mem_alloc", c_status, P(ctypes.c_void_p), _size)
mem_free = _declare("collie_mem_free", c_status, ctypes.c_void_p)
send = _declare("collie_send", c_status, c_comm, _ptr, _size, _int, _int)
recv = _declare("collie_recv", c_status, c_comm, _ptr, _size, _int, _int)
allreduce_compressed = _declare("collie_allreduce_compressed", c_status, c_comm, _ptr, _ptr,
                                _size, _int, _int)

PR = P(c_req)
iallreduce = _declare("collie_iallreduce", c_status, c_comm, _ptr, _ptr, _size, _int, _int, PR)
ibroadcast = _declare("collie_ibroadcast", c_status, c_comm, _ptr, _size, _int, _int, PR)
ireduce = _declare("collie_ireduce", c_status, c_comm, _ptr, _ptr, _size, _int, _int, _int, PR)
iallgather = _declare("collie_iallgather", c_status, c_comm, _ptr, _ptr, _size, _int, PR)
ireduce_scatter = _declare("collie_ireduce_scatter", c_status, c_comm, _ptr, _ptr, _size, _int,
                           _int, PR)
ialltoall = _declare("collie_ialltoall", c_status, c_comm, _ptr, _ptr, _size, _int, PR)
ibarrier = _declare("collie_ibarrier", c_status, c_comm, PR)
isend = _declare("collie_isend", c_status, c_comm, _ptr, _size, _int, _int, PR)
irecv = _declare("collie_irecv", c_status, c_comm, _ptr, _size, _int, _int, PR)
iallreduce_compressed = _declare("collie_iallreduce_compressed", c_status, c_comm, _ptr, _ptr,
                                 _size, _int, _int, PR)
compressor_create = _declare("collie_compressor_create", c_status, c_comm, _size, _int,
                             P(ctypes.c_void_p))
compressor_free = _declare("collie_compressor_free", c_status, ctypes.c_void_p)
allreduce_ef = _declare("collie_allreduce_ef", c_status, c_comm, ctypes.c_void_p, _ptr, _size, _int)
iallreduce_ef = _declare("collie_iallreduce_ef", c_status, c_comm, ctypes.c_void_p, _ptr, _size,
                         _int, PR)
wait = _declare("collie_wait", c_status, c_req)
test = _declare("collie_test", c_status, c_req, P(_int))
group_start = _declare("collie_group_start", c_status, c_comm)
group_end = _declare("collie_group_end", c_status, c_comm)
comm_split = _declare("collie_comm_split", c_status, c_comm, _int, _int, P(c_comm))
comm_shrink = _declare("collie_comm_shrink", c_status, c_comm, P(c_comm))
comm_abort = _declare("collie_comm_abort", c_status, c_comm)
get_unique_id = _declare("collie_get_unique_id", c_status, P(UniqueId))
init_rank = _declare("collie_init_rank", c_status, P(c_comm), _int, P(UniqueId), _int)

# Virtual topologies, schedules and the neighbour operations.
c_topo = ctypes.c_void_p
c_sched = ctypes.c_void_p
_dbl = ctypes.c_double
host_count = _declare("collie_host_count", _int, c_comm)
host_index = _declare("collie_host_index", _int, c_comm)
topology_create = _declare("collie_topology_create", c_status, _int, _int, _int, P(c_topo))
topology_from_edges = _declare("collie_topology_from_edges", c_status, _int, _size, P(_int),
                               P(_int), P(_dbl), P(c_topo))
topology_free = _declare("collie_topology_free", None, c_topo)
topology_size = _declare("collie_topology_size", _int, c_topo)
topology_in = _declare("collie_topology_in", _int, c_topo, _int, P(_int), P(_dbl), _int)
topology_out = _declare("collie_topology_out", _int, c_topo, _int, P(_int), P(_dbl), _int)
topology_self_weight = _declare("collie_topology_self_weight", _dbl, c_topo, _int)


class TopologyProps(ctypes.Structure):
    _fields_ = [("regular", _int), ("row_stochastic", _int), ("column_stochastic", _int),
                ("max_degree", _int), ("rho", _dbl)]


topology_check = _declare("collie_topology_check", c_status, c_topo, P(TopologyProps))
schedule_create = _declare("collie_schedule_create", c_status, _int, _int, _int, P(c_sched))
schedule_from_name = _declare("collie_schedule_from_name", c_status, ctypes.c_char_p, _int,
                              P(c_sched))
schedule_from_name_hosts = _declare("collie_schedule_from_name_hosts", c_status, ctypes.c_char_p,
                                    _int, P(_int), P(c_sched))
host_of = _declare("collie_host_of", _int, c_comm, _int)
schedule_free = _declare("collie_schedule_free", None, c_sched)
schedule_period = _declare("collie_schedule_period", _int, c_sched)
schedule_step = _declare("collie_schedule_step", c_topo, c_sched, ctypes.c_longlong)


class Neighbors(ctypes.Structure):
    _fields_ = [("nrecv", _int), ("recv_ranks", P(_int)), ("recv_weights", P(_dbl)),
                ("self_weight", _dbl), ("nsend", _int), ("send_ranks", P(_int)),
                ("send_weights", P(_dbl))]


neighbor_allreduce = _declare("collie_neighbor_allreduce", c_status, c_comm, c_topo, _ptr, _ptr,
                              _size, _int)
ineighbor_allreduce = _declare("collie_ineighbor_allreduce", c_status, c_comm, c_topo, _ptr, _ptr,
                               _size, _int, PR)
neighbor_allreduce_dynamic = _declare("collie_neighbor_allreduce_dynamic", c_status, c_comm,
                                      P(Neighbors), _ptr, _ptr, _size, _int)
ineighbor_allreduce_dynamic = _declare("collie_ineighbor_allreduce_dynamic", c_status, c_comm,
                                       P(Neighbors), _ptr, _ptr, _size, _int, PR)
hierarchical_neighbor_allreduce = _declare("collie_hierarchical_neighbor_allreduce", c_status,
                                           c_comm, c_topo, _ptr, _ptr, _size, _int)
ihierarchical_neighbor_allreduce = _declare("collie_ihierarchical_neighbor_allreduce", c_status,
                                            c_comm, c_topo, _ptr, _ptr, _size, _int, PR)
neighbor_allreduce_compressed = _declare("collie_neighbor_allreduce_compressed", c_status, c_comm,
                                         c_topo, _ptr, _ptr, _size, _int)
ineighbor_allreduce_compressed = _declare("collie_ineighbor_allreduce_compressed", c_status,
                                          c_comm, c_topo, _ptr, _ptr, _size, _int, PR)
neighbor_allgather = _declare("collie_neighbor_allgather", c_status, c_comm, c_topo, _ptr, _ptr,
                              _size, _int)
ineighbor_allgather = _declare("collie_ineighbor_allgather", c_status, c_comm, c_topo, _ptr, _ptr,
                               _size, _int, PR)
pair_gossip = _declare("collie_pair_gossip", c_status, c_comm, _int, _ptr, _ptr, _size, _int, _dbl,
                       _dbl)
ipair_gossip = _declare("collie_ipair_gossip", c_status, c_comm, _int, _ptr, _ptr, _size, _int,
                        _dbl, _dbl, PR)

c_win = ctypes.c_void_p
win_create = _declare("collie_win_create", c_status, c_comm, c_topo, _ptr, _size, _int, P(c_win))
win_put = _declare("collie_win_put", c_status, c_win, _ptr, P(_dbl))
win_accumulate = _declare("collie_win_accumulate", c_status, c_win, _ptr, P(_dbl))
win_get = _declare("collie_win_get", c_status, c_win)
win_update = _declare("collie_win_update", c_status, c_win, _ptr)
win_collect = _declare("collie_win_collect", c_status, c_win, _ptr, _dbl)
win_fence = _declare("collie_win_fence", c_status, c_win)
win_weight = _declare("collie_win_weight", _dbl, c_win)
win_deposits = _declare("collie_win_deposits", _int, c_win, P(ctypes.c_ulonglong), _int)
win_last_error = _declare("collie_win_last_error", ctypes.c_char_p, c_win)
win_free = _declare("collie_win_free", c_status, c_win)
