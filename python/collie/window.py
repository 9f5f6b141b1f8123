# SPDX-License-Identifier: BSD-3-Clause
"""One-sided neighbour windows (collie_win in include/collie.h): BlueFog's
win_create / win_put / win_accumulate / win_get / win_update, and push-sum.

    win = collie.Window(comm, topo, x)          # collective; x: numpy array or CPU tensor
    win.put(x)                                  # to every out-neighbour's mailbox; nobody waits
    win.update(x)                               # x = W[r][r] x + sum W[r][j] mailbox_j (local)

    # push-sum: the estimate is x / win.weight
    win = collie.Window(comm, topo, None, like=x)
    share = 1.0 / (len(topo.out_neighbors(comm.rank)[0]) + 1)
    win.accumulate(x, share)
    win.collect(x, share)

A window's calls come from one thread at a time; free() it (collective) when done.
"""
import ctypes
from typing import Any, List, Optional, Sequence, Union

from . import _lib


class Window:
    """A mailbox per in-neighbour of topology, count elements each, filled by the
    neighbours without this rank's participation."""

    def __init__(self, comm, topology, init, like=None):
        from . import _check, _dtype_of
        proto = init if init is not None else like
        if proto is None:
            raise ValueError("collie: a window needs init, or like= an array of its shape")
        ptr, count, dtype = _dtype_of(proto)
        self._comm = comm
        self._topology = topology  # kept alive with the window
        self._count, self._dtype = count, dtype
        self._handle = ctypes.c_void_p()
        _check(comm._handle, _lib.win_create(comm._handle, topology._handle,
                                             ptr if init is not None else None, count, dtype,
                                             ctypes.byref(self._handle)))
        self.in_degree = len(topology.in_neighbors(comm.rank)[0])
        self.out_degree = len(topology.out_neighbors(comm.rank)[0])

    def _buf(self, x):
        from . import _dtype_of
        ptr, count, dtype = _dtype_of(x)
        if count != self._count or dtype != self._dtype:
            raise ValueError("collie: the window holds %d elements of dtype %d, not %d of %d"
                             % (self._count, self._dtype, count, dtype))
        return ptr

    def _check(self, code):
        if code:
            from . import CollieError
            raise CollieError(code, _lib.win_last_error(self._handle).decode(errors="replace"))

    def _weights(self, weights):
        if weights is None:
            return None
        if isinstance(weights, (int, float)):
            weights = [weights] * self.out_degree
        if len(weights) != self.out_degree:
            raise ValueError("collie: %d weights for %d out-neighbours"
                             % (len(weights), self.out_degree))
        return (ctypes.c_double * max(len(weights), 1))(*map(float, weights))

    def put(self, x: Any, weights: Optional[Union[float, Sequence[float]]] = None) -> None:
        """Replaces this rank's mailbox on every out-neighbour with weights[k] x (a number:
        the same for all; None: x as is); x becomes this rank's published value."""
        self._check(_lib.win_put(self._handle, self._buf(x), self._weights(weights)))

    def accumulate(self, x: Any, weights: Union[float, Sequence[float]]) -> None:
        """Adds weights[k] x (and weights[k] times this rank's weight) into the mailboxes."""
        self._check(_lib.win_accumulate(self._handle, self._buf(x), self._weights(weights)))

    def get(self) -> None:
        """Fetches every in-neighbour's published value into its mailbox here."""
        self._check(_lib.win_get(self._handle))

    def update(self, x: Any) -> Any:
        """x = W[r][r] x + sum W[r][j] mailbox_j (the topology's weights); returns x."""
        self._check(_lib.win_update(self._handle, self._buf(x)))
        return x

    def collect(self, x: Any, self_weight: float) -> Any:
        """Push-sum: x = self_weight x + the sum of the mailboxes, which empty; returns x."""
        self._check(_lib.win_collect(self._handle, self._buf(x), float(self_weight)))
        return x

    def fence(self) -> None:
        """Collective: every deposit made before the fence has landed."""
        self._check(_lib.win_fence(self._handle))

    @property
    def weight(self) -> float:
        """This rank's associated weight (push-sum's p)."""
        return _lib.win_weight(self._handle)

    def deposits(self) -> List[int]:
        """Deposits received from each in-neighbour since the window was made."""
        out = (ctypes.c_ulonglong * max(self.in_degree, 1))()
        n = _lib.win_deposits(self._handle, out, self.in_degree)
        return [int(out[i]) for i in range(n)]

    def free(self) -> None:
        """Collective: stops the window's thread and frees it."""
        if self._handle:
            code = _lib.win_free(self._handle)
            self._handle = None
            if code:
                from . import CollieError
                raise CollieError(code, "collie_win_free failed")
