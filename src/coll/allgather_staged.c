/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_staged.c - allgather through the window: per round every rank
 * stages a piece of its block and copies it to its own output, one sync,
 * every rank copies the peers' pieces out.
 */
#include <string.h>

#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

/* op->sendbuf is this rank's block (coll.c resolved the in-place forms). */
static collie_status allgather_staged(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size, chunk = collie__win_bytes(comm) / es, count = op->count;
    const unsigned char *send = op->sendbuf;
    unsigned char *recv = op->recvbuf;
    for (size_t off = 0; off < count; off += chunk) {
        size_t m = count - off < chunk ? count - off : chunk;
        unsigned parity = collie__win_exchange(comm, m * es);
        collie__stage(op, collie__win_slot(comm, me, parity), send + off * es, m * es);
        collie__count_sent(comm, COLLIE_LANE_COLL, (size_t)(n - 1) * m * es);
        /* our own piece while the peers stage theirs: it needs nobody */
        unsigned char *own = recv + ((size_t)comm->local_to_global[me] * count + off) * es;
        if (own != send + off * es)
            collie__copy_out(op, own, send + off * es, m * es);
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;
        for (int r = 0; r < n; r++)
            if (r != me)
                collie__copy_out(op, recv + ((size_t)comm->local_to_global[r] * count + off) * es,
                                 collie__win_slot(comm, r, parity), m * es);
    }
    return COLLIE_OK;
}

/* Stage the block, one sync, copy n blocks out. */
static double allgather_staged_cost(machine *m, double s, int degree)
{
    (void)degree;
    double n = m->ranks_per_host, held = (1 + n) * s,
           syncs = collie__cost_rounds(m, s) * collie__cost_sync(m);
    /* two ranks: our block staged, it and the peer's copied out */
    if (collie__cost_pair_copies(m, held))
        return syncs + collie__cost_pair_copy(m, 3 * s);
    return syncs + collie__cost_move(m, collie__cost_blocks_beta(m, held), held, held);
}

const struct collie__algo collie__algo_allgather_staged = {
    .name = "staged",
    .wire = 7,
    .coll = COLLIE_COLL_ALLGATHER,
    .scope = COLLIE_SCOPE_HOST,
    .flags = COLLIE__ALGO_STAGES,
    .run = allgather_staged,
    .cost = allgather_staged_cost,
};
