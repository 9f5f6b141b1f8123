/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall_pairwise.c - alltoall in n-1 exchanges: at step k every rank
 * sends its block for rank me+k while receiving rank me-k's block for it, so
 * each step is a permutation and no rank is ever the target of two.
 */
#include "../transport/xfer.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status alltoall_pairwise(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->size, me = comm->rank;
    const size_t block = op->count * op->elem_size;
    const unsigned char *send = op->sendbuf;
    unsigned char *recv = op->recvbuf;
    if (send == recv) { /* in place: the blocks still to send must survive the receives */
        unsigned char *copy = collie__scratch(comm, COLLIE_SCRATCH_WORK, block * (size_t)n);
        if (!copy)
            return comm->failed;
        collie__copy(copy, send, block * (size_t)n);
        send = copy;
    }
    collie__copy(recv + (size_t)me * block, send + (size_t)me * block, block);
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        collie_status st = collie__xfer_sendrecv(comm, to, send + (size_t)to * block, block, from,
                                                 recv + (size_t)from * block, block);
        if (st != COLLIE_OK)
            return st;
    }
    return COLLIE_OK;
}

/*
 * Pairwise exchange: n-1 steps; each of a host's L ranks sends n-L blocks
 * through its link.  On one host the "link" is a pair's ring, and each rank
 * also copies its own block: every block read and written once, the n-1
 * it exchanges through a ring.  Those go at the cache's rates while the
 * host's buffers fit in half of it (measured at 2 ranks, 16 KiB-4 MiB:
 * 1.2-1.5x faster than `staged` and `direct`).  Beyond, the rings' copies
 * stall on memory as a copy between two ranks' buffers in memory does
 * (host_attach_mem_beta: measured at 2 ranks, 64 MiB, 19 ms where
 * memory's own rate said 11.6 and `staged` took 17).  A step is a sync's
 * round trip, each rank's message and its peer's, and the ring's credit
 * coming back, a line's trip more: measured at 2 ranks, 256 B-4 KiB, it
 * ran 0.03-0.08 us behind `staged`'s one sync, and level at 16 KiB.
 */
static double alltoall_pairwise_cost(machine *m, double s, int degree)
{
    (void)degree;
    double n = m->ranks, L = collie__cost_flows(m);
    if (m->hosts > 1)
        return collie__cost_over_links(m, n - 1, L * (n - L) * s);
    double beta = collie__cost_staged_beta(m, 2 * n * s), ring = 2 * (n - 1) * s;
    double exchange = beta > m->host_beta
                          ? collie__cost_move(m, beta, ring, ring)
                          : collie__cost_move(m, m->host_attach_mem_beta, ring, ring);
    return (n - 1) * (collie__cost_sync(m) + m->host_alpha / 2) + exchange +
           collie__cost_move(m, beta, 2 * s, 0);
}

/* Not ON_HOST: its ring crosses between CPUs that share no cache (adaptive hedges that). */
const struct collie__algo collie__algo_alltoall_pairwise = {
    .name = "pairwise",
    .wire = 9,
    .coll = COLLIE_COLL_ALLTOALL,
    .scope = COLLIE_SCOPE_ANY,
    .run = alltoall_pairwise,
    .cost = alltoall_pairwise_cost,
};
