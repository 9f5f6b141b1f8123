/* SPDX-License-Identifier: BSD-3-Clause */
/* barrier_sync.c - barrier: one sync of the window, which every rank must reach. */
#include "../transport/shm.h"
#include "algo.h"

collie_status collie__barrier_sync(collie_comm *comm, const struct collie__op *op)
{
    (void)op;
    return collie__win_sync(comm);
}
