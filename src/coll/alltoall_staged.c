/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall_staged.c - alltoall through the window: per round every rank
 * stages the same window of each of its peers' blocks and copies its own to
 * its output, one sync, and every rank copies its window out of every peer's
 * slot.
 */
#include <string.h>

#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"
#include "staged_blocks.h"

static collie_status alltoall_staged(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size, count = op->count, w = collie__block_window(comm, es);
    unsigned char *recv = op->recvbuf;
    for (size_t off = 0; off < count; off += w) {
        size_t m = count - off < w ? count - off : w;
        unsigned parity = collie__win_exchange(comm, (size_t)n * m * es);
        collie__stage_blocks(comm, op, parity, off, m);
        /* our own block while the peers stage theirs: it needs nobody */
        const unsigned char *own =
            (const unsigned char *)op->sendbuf + ((size_t)me * count + off) * es;
        if (recv + ((size_t)me * count + off) * es != own)
            collie__copy_out(op, recv + ((size_t)me * count + off) * es, own, m * es);
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;
        for (int r = 0; r < n; r++) {
            if (r == me)
                continue;
            const unsigned char *slot = collie__win_slot(comm, r, parity);
            collie__copy_out(op, recv + ((size_t)r * count + off) * es,
                             slot + collie__block_at(r, me, n, m, es), m * es);
        }
    }
    return COLLIE_OK;
}

/* Stage n blocks, one sync, copy n blocks out. */
static double alltoall_staged_cost(machine *m, double s, int degree)
{
    (void)degree;
    double n = m->ranks_per_host, held = 2 * n * s,
           syncs = collie__cost_rounds(m, n * s) * collie__cost_sync(m);
    /* two ranks: the peer's block staged, ours and its copied out */
    if (collie__cost_pair_copies(m, held))
        return syncs + collie__cost_pair_copy(m, 3 * s);
    return syncs + collie__cost_move(m, collie__cost_staged_beta(m, held), held, held);
}

const struct collie__algo collie__algo_alltoall_staged = {
    .name = "staged",
    .wire = 7,
    .coll = COLLIE_COLL_ALLTOALL,
    .scope = COLLIE_SCOPE_HOST,
    .flags = COLLIE__ALGO_STAGES,
    .run = alltoall_staged,
    .cost = alltoall_staged_cost,
};
