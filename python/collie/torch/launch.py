# SPDX-License-Identifier: BSD-3-Clause
"""``dist.init_process_group("collie")`` under srun or mpirun, with nothing set.

torch's default rendezvous (env://) needs MASTER_ADDR, MASTER_PORT, RANK and
WORLD_SIZE, which torchrun sets and srun and mpirun do not.  Where they are
missing and a launcher started the process, the handler installed here fills
them before torch reads them: libcollie joins the ranks through the launcher
(its PMIx, PMI-2 or PMI-1 store, or Slurm's step), rank 0 names its host and a
free port, and every rank learns them.  Variables already set are kept.
"""
import importlib
import os
import socket

import numpy as np

import collie

# the module: torch.distributed's attribute of that name is its function
_rendezvous = importlib.import_module("torch.distributed.rendezvous")

# the rank and size variables of launchers that set no MASTER_ADDR
_LAUNCHERS = (
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("PMI_RANK", "PMI_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS"),
)


def _under_a_launcher() -> bool:
    return any(rank in os.environ and size in os.environ for rank, size in _LAUNCHERS)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def fill_env() -> None:
    """Sets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE
    from the launcher, where MASTER_ADDR is unset and a launcher started the process."""
    if os.environ.get("MASTER_ADDR") or not _under_a_launcher():
        return
    comm = collie.init()
    try:
        where = np.zeros(512, dtype=np.uint8)
        if comm.rank == 0:
            text = ("%s:%d" % (socket.gethostname(), _free_port())).encode()
            where[:len(text)] = np.frombuffer(text, dtype=np.uint8)
        comm.broadcast(where, root=0)
        host, port = bytes(where).rstrip(b"\0").decode().rsplit(":", 1)
        found = {"MASTER_ADDR": host, "MASTER_PORT": port, "RANK": comm.rank,
                 "WORLD_SIZE": comm.size, "LOCAL_RANK": comm.local_rank,
                 "LOCAL_WORLD_SIZE": comm.local_size}
    finally:
        comm.finalize()
    for name, value in found.items():
        os.environ.setdefault(name, str(value))


def install() -> None:
    """Puts fill_env before torch's env:// rendezvous (once)."""
    original = _rendezvous._rendezvous_handlers.get("env")
    if original is None or getattr(original, "collie_fills_env", False):
        return

    def env_handler(url, *args, **kwargs):
        fill_env()
        return original(url, *args, **kwargs)

    env_handler.collie_fills_env = True
    _rendezvous._rendezvous_handlers["env"] = env_handler
