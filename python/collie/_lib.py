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
    yield os.path.join(_HERE, "libcollie.so")  # bundled by `pip install ./python`
    repo = os.path.dirname(os.path.dirname(_HERE))  # a source tree: its build
    yield os.path.join(repo, "build", "libcollie.so")
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
        "collie: cannot load libcollie.so; tried: %s. Build it (bash scripts/demo.sh or "
        "cmake -S . -B build && cmake --build build), install it (cmake --install build), "
        "or point COLLIE_LIBRARY at it" % "; ".join(tried) or "nothing")


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
wait = _declare("collie_wait", c_status, c_req)
test = _declare("collie_test", c_status, c_req, P(_int))
group_start = _declare("collie_group_start", c_status, c_comm)
group_end = _declare("collie_group_end", c_status, c_comm)
comm_split = _declare("collie_comm_split", c_status, c_comm, _int, _int, P(c_comm))
comm_abort = _declare("collie_comm_abort", c_status, c_comm)
get_unique_id = _declare("collie_get_unique_id", c_status, P(UniqueId))
init_rank = _declare("collie_init_rank", c_status, P(c_comm), _int, P(UniqueId), _int)
