/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall_staged.c - alltoall through the window: per round every rank
 * stages the same window of each of its n blocks, one sync, and rank r
 * copies window r out of every slot.
 */
#include <string.h>

#include "../transport/shm.h"
#include "algo.h"
#include "staged_blocks.h"

collie_status collie__alltoall_staged(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size, count = op->count, w = collie__block_window(comm, es);
    unsigned char *recv = op->recvbuf;
    for (size_t off = 0; off < count; off += w) {
        size_t m = count - off < w ? count - off : w;
        unsigned parity = collie__win_round(comm);
        collie__stage_blocks(comm, parity, op->sendbuf, count, off, m, es);
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;
        for (int r = 0; r < n; r++) {
            const unsigned char *slot = collie__win_slot(comm, r, parity);
            collie__copy_out(op, recv + ((size_t)r * count + off) * es, slot + (size_t)me * m * es,
                             m * es);
        }
    }
    return COLLIE_OK;
}
