# SPDX-License-Identifier: BSD-3-Clause
"""A test script's scenarios, one or several, run in the processes of one job."""
import os

import torch.distributed as dist


def run(table, names):
    """Runs the scenarios NAMES (comma-separated keys of TABLE) one after another.

    Alone, a scenario meets torch as a program does: init_process_group reads
    MASTER_ADDR and MASTER_PORT (env://).  Several share one TCPStore, a key prefix
    each: env:// makes a store on MASTER_PORT at every init, and a rank quick to start
    the next scenario can reach the store that rank 0 is still closing."""
    names = names.split(",")
    unknown = [name for name in names if name not in table]
    if unknown:
        raise SystemExit("no scenario %s (known: %s)" % (", ".join(unknown), ", ".join(table)))
    if len(names) == 1:
        table[names[0]]()
        return
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), size, rank == 0)
    env_init = dist.init_process_group
    for k, name in enumerate(names):
        def init_on_store(*args, _prefix="scenario%d/" % k, **kwargs):
            kwargs.setdefault("store", dist.PrefixStore(_prefix, store))
            kwargs.setdefault("rank", rank)
            kwargs.setdefault("world_size", size)
            return env_init(*args, **kwargs)
        dist.init_process_group = init_on_store
        try:
            table[name]()
        finally:
            dist.init_process_group = env_init
