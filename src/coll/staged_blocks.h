/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * staged_blocks.h - packing a window of every block into one slot, for the
 * collectives whose input is one block per rank (reduce_scatter, alltoall).
 */
#ifndef COLLIE_STAGED_BLOCKS_H
#define COLLIE_STAGED_BLOCKS_H

#include <string.h>

#include "../transport/shm.h"
#include "algo.h"

/* Elements of every block that one round moves: n of them fill a slot. */
static inline size_t collie__block_window(const collie_comm *comm, size_t es)
{
    size_t w = collie__win_bytes(comm) / (es * (size_t)comm->local_size);
    return w ? w : 1;
}

/*
 * Where local rank `from` stages, in its slot, the block of m elements for
 * local rank `to`: the next rank's first, so that at 2 ranks both stage at
 * the head of the slot, on the lines each read from the other two rounds
 * before (collie__win_exchange()).
 */
static inline size_t collie__block_at(int from, int to, int n, size_t m, size_t es)
{
    return (size_t)((to - from + n) % n - 1) * m * es;
}

/*
 * Copies elements [off, off+m) of each of the n blocks of op's input into
 * the slot, packed (collie__stage()), but this rank's own block, which it
 * takes from the input itself.
 */
static inline void collie__stage_blocks(collie_comm *comm, const struct collie__op *op,
                                        unsigned parity, size_t off, size_t m)
{
    const unsigned char *src = op->sendbuf;
    const size_t es = op->elem_size;
    unsigned char *slot = collie__win_slot(comm, comm->local_rank, parity);
    for (int b = 0; b < comm->local_size; b++)
        if (b != comm->local_rank)
            collie__stage(op, slot + collie__block_at(comm->local_rank, b, comm->local_size, m, es),
                          src + ((size_t)b * op->count + off) * es, m * es);
    collie__count_sent(comm, COLLIE_LANE_COLL, (size_t)(comm->local_size - 1) * m * es);
}

#endif
