/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce_scatter_staged.c - reduce_scatter through the window: per round
 * every rank stages the same window of each of its n blocks, one sync, and
 * rank r reduces window r of all slots, in rank order, into its output.
 * Every rank reduces at once, and each input byte is read once.
 */
#include <string.h>

#include "../reduce/reduce.h"
#include "../transport/shm.h"
#include "algo.h"
#include "staged_blocks.h"

collie_status collie__reduce_scatter_staged(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size, count = op->count, w = collie__block_window(comm, es);
    unsigned char *recv = op->recvbuf;
    const void **srcs = comm->scratch_srcs;
    for (size_t off = 0; off < count; off += w) {
        size_t m = count - off < w ? count - off : w;
        unsigned parity = collie__win_round(comm);
        collie__stage_blocks(comm, parity, op->sendbuf, count, off, m, es);
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;
        for (int r = 0; r < n; r++)
            srcs[r] =
                (const unsigned char *)collie__win_slot(comm, r, parity) + (size_t)me * m * es;
        collie__reduce(recv + off * es, srcs, n, m, op->dtype, op->op, comm->size, op->stream_out);
    }
    return COLLIE_OK;
}
