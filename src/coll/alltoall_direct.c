/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall_direct.c - alltoall in one copy: every rank reads its block of
 * each peer's send buffer straight into its own output (transport/shm.h's
 * cross-memory attach), instead of staging all its blocks through its slot
 * for the others to copy theirs out.
 *
 * Every rank publishes its send buffer and syncs (the descriptors are
 * compared there); each copies block `me` of every other rank, one system
 * call each, starting from the next rank; a last sync.  In place (send and
 * receive buffer the same) a rank's output is the input its peers read, so
 * the blocks land in scratch and reach the output after the last sync, when
 * nobody reads it any more.
 */
#include <string.h>

#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status alltoall_direct(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t bytes = op->count * op->elem_size, all = (size_t)n * bytes;
    const size_t mine = (size_t)comm->rank * bytes; /* my block in everyone's send buffer */
    const unsigned char *send = op->sendbuf;
    unsigned char *out = op->recvbuf;
    if (op->sendbuf == op->recvbuf) {
        out = collie__scratch(comm, COLLIE_SCRATCH_WORK, all);
        if (!out)
            return comm->failed;
    }
    unsigned parity = collie__publish(comm, send, NULL);
    collie_status st = collie__win_sync(comm);
    for (int k = 0; st == COLLIE_OK && k < n; k++) {
        int r = (me + k) % n;
        unsigned char *dst = out + (size_t)comm->local_to_global[r] * bytes;
        if (r == me) {
            collie__copy_out(op, dst, send + mine, bytes);
            continue;
        }
        st = collie__attach_read(comm, r, dst, collie__published_input(comm, r, parity) + mine,
                                 bytes);
    }
    /* Every rank passes the last sync, a failed one too: its peers then learn at once. */
    collie_status last = collie__win_sync(comm);
    if (st == COLLIE_OK && last == COLLIE_OK) /* each peer read its block of our input */
        collie__count_sent(comm, COLLIE_LANE_COLL, (size_t)(n - 1) * bytes);
    if (st == COLLIE_OK && last == COLLIE_OK && out != op->recvbuf)
        collie__copy(op->recvbuf, out, all);
    return st != COLLIE_OK ? st : last;
}

/*
 * The host's buffers that must stay in cache: every rank's n blocks in and
 * out.  Offered on a crowded host too (cost_terms.h's
 * collie__cost_attach_offered_alltoall).
 */
static double alltoall_direct_cost(machine *m, double s, int degree)
{
    double L = m->ranks_per_host; /* in double: L * L overflows an int */
    (void)degree;
    return collie__cost_gather_direct(m, s, 2 * L * L * s, collie__cost_attach_offered_alltoall(m));
}

const struct collie__algo collie__algo_alltoall_direct = {
    .name = "direct",
    .wire = 13,
    .coll = COLLIE_COLL_ALLTOALL,
    .scope = COLLIE_SCOPE_HOST,
    .flags = COLLIE__ALGO_ATTACH,
    .run = alltoall_direct,
    .cost = alltoall_direct_cost,
};
