# SPDX-License-Identifier: BSD-3-Clause
"""collie as a torch.distributed backend: ``import collie.torch``, then

    dist.init_process_group("collie")             # instead of "gloo"; env:// or a store
    dist.init_process_group("cpu:collie,cuda:nccl")   # GPU jobs: CPU tensors on collie

Under srun or mpirun nothing needs to be set: where MASTER_ADDR is missing, the
ranks meet through the launcher and fill torch's variables (collie.torch.launch).

(On torch 2.x with the package installed, the import is not even needed: torch finds
the backend through the package's entry point.)
    model = torch.nn.parallel.DistributedDataParallel(model)

Every op torch.distributed has for CPU tensors is served: the collectives and
their ``_base``/``_single``/``_tensor``/coalesced forms, all_to_all with uneven
splits, gather, scatter, send/recv and barrier; so DDP, FSDP2 (``fully_shard``),
DeviceMesh, DTensor and the functional collectives run on it, on torch 1.13
and on torch 2.x alike.

Errors: a failure completes its Work and future with an error that
``work.wait()``, ``future.wait()`` and DDP's backward pass raise (the text of
the CollieError), becomes sticky on the group, and every later call on the
group raises CollieError at once, on every rank that sees the failure,
within COLLIE_TIMEOUT.

Also here: collie.torch.hooks (DDP communication hooks, compression on the
wire), DistributedOptimizer and broadcast_parameters (Horovod's way, no DDP),
NeighborOptimizer (BlueFog's decentralized training: no gradient averaging).
"""
import inspect

import torch.distributed as dist

from . import launch
from .backend import BACKEND, ProcessGroupCollie, collie_group_of

__all__ = ["ProcessGroupCollie", "BACKEND", "register", "collie_group_of", "hooks", "DistributedOptimizer",
           "broadcast_parameters", "comm_of", "NeighborOptimizer",
           "DistributedAdaptThenCombineOptimizer", "DistributedAdaptWithCombineOptimizer"]


def _create(store, rank, size, timeout):
    return ProcessGroupCollie(store, rank, size, timeout)


def register() -> None:
    """Registers the "collie" backend with torch.distributed (importing collie.torch does;
    torch 2.x calls it itself, through the package's torch.distributed.backends entry
    point, when a job names "collie").  For CPU tensors where torch lets a backend name
    its devices: what makes "cpu:collie,cuda:nccl" route CPU tensors here."""
    if BACKEND.upper() in getattr(dist.Backend, "_plugins", {}):
        return
    kwargs = {}
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        kwargs["devices"] = ["cpu"]
    dist.Backend.register_backend(BACKEND, _create, **kwargs)


register()
launch.install()

from . import hooks  # noqa: E402  (after ProcessGroupCollie, which they use)
from .optimizer import DistributedOptimizer, broadcast_parameters, comm_of  # noqa: E402
from .neighbor import (NeighborOptimizer, DistributedAdaptThenCombineOptimizer,  # noqa: E402
                       DistributedAdaptWithCombineOptimizer)
