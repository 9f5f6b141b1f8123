# SPDX-License-Identifier: BSD-3-Clause
"""An mpi4py script nobody wrote for collie: Allreduce, Bcast, Allgather and Alltoall on
numpy arrays.  Rank 0 prints one digest of every result per rank (so a run with
libcollie-mpi.so preloaded can be compared with one without), and with --time
the median time per Allreduce of each size.

    mpirun -n 4 [-x LD_PRELOAD=libcollie-mpi.so] python3 mpi4py_job.py [--time]
"""
import hashlib
import sys
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
digest = hashlib.sha256()
for dtype in [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8]:
    for n in [1, 100, 10000, 1000000]:
        x = ((np.arange(n) * 7 + rank * 3) % 5).astype(dtype)
        for op in [MPI.SUM, MPI.MAX, MPI.MIN, MPI.PROD]:
            out = np.empty_like(x)
            comm.Allreduce(x, out, op=op)
            digest.update(out.tobytes())
        buf = x.copy() if rank == size - 1 else np.zeros_like(x)
        comm.Bcast(buf, root=size - 1)
        digest.update(buf.tobytes())
        gathered = np.empty(n * size, dtype=dtype)
        comm.Allgather(x, gathered)
        digest.update(gathered.tobytes())
        if n <= 10000:
            blocks = np.tile(x, size)
            exchanged = np.empty_like(blocks)
            comm.Alltoall(blocks, exchanged)
            digest.update(exchanged.tobytes())
    lower = comm.allreduce(rank, op=MPI.SUM)  # the pickle-based, lower-case API
    digest.update(str(lower).encode())
digests = comm.gather(digest.hexdigest(), root=0)  # MPI_Gather: not interposed
if rank == 0:
    print("".join("rank %d digest %s\n" % (r, d) for r, d in enumerate(digests)), end="",
          flush=True)

if "--time" in sys.argv:
    for n in [2, 256, 65536, 1 << 20, 16 << 20]:  # float32 elements: 8 B .. 64 MiB
        x = np.ones(n, dtype=np.float32)
        out = np.empty_like(x)
        iters = max(5, min(2000, (64 << 20) // (4 * n)))
        times = []
        for _ in range(5):
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                comm.Allreduce(x, out, op=MPI.SUM)
            times.append((time.perf_counter() - t0) / iters)
        if rank == 0:
            print("allreduce %10d B: %10.1f us (median of 5 x %d)" % (
                4 * n, 1e6 * sorted(times)[2], iters), flush=True)
