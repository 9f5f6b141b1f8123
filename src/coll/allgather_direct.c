/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_direct.c - allgather in one copy: every rank reads each peer's
 * block straight from the peer's send buffer into its own output
 * (transport/shm.h's cross-memory attach), instead of staging its block
 * through its slot for the others to copy out.
 *
 * Every rank publishes its block and syncs (the descriptors are compared
 * there); each copies the n-1 other blocks, one system call each, starting
 * from the next rank so that no rank's block is read by all at once; a last
 * sync, and every block may be touched again.  In place (the block already
 * in the output) the own block stays where it is; no rank writes anything
 * but its own output, so the reads never race with a write.
 */
#include <string.h>

#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

/* op->sendbuf is this rank's block (coll.c resolved the in-place forms). */
static collie_status allgather_direct(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t bytes = op->count * op->elem_size;
    unsigned char *recv = op->recvbuf;
    unsigned parity = collie__publish(comm, op->sendbuf, NULL);
    collie_status st = collie__win_sync(comm);
    for (int k = 1; st == COLLIE_OK && k < n; k++) {
        int r = (me + k) % n;
        unsigned char *dst = recv + (size_t)comm->local_to_global[r] * bytes;
        st = collie__attach_read(comm, r, dst, collie__published_input(comm, r, parity), bytes);
    }
    unsigned char *own = recv + (size_t)comm->rank * bytes;
    if (st == COLLIE_OK && own != (const unsigned char *)op->sendbuf)
        collie__copy_out(op, own, op->sendbuf, bytes);
    /* Every rank passes the last sync, a failed one too: its peers then learn at once. */
    collie_status last = collie__win_sync(comm);
    if (st == COLLIE_OK && last == COLLIE_OK) /* each peer read our block */
        collie__count_sent(comm, COLLIE_LANE_COLL, (size_t)(n - 1) * bytes);
    return st != COLLIE_OK ? st : last;
}

/* The host's buffers that must stay in cache: every rank's block in, and n blocks out. */
static double allgather_direct_cost(machine *m, double s, int degree)
{
    double L = m->ranks_per_host; /* in double: L * L overflows an int */
    (void)degree;
    return collie__cost_gather_direct(m, s, L * (L + 1) * s, collie__cost_attach_offered(m));
}

const struct collie__algo collie__algo_allgather_direct = {
    .name = "direct",
    .wire = 13,
    .coll = COLLIE_COLL_ALLGATHER,
    .scope = COLLIE_SCOPE_HOST,
    .flags = COLLIE__ALGO_ATTACH,
    .run = allgather_direct,
    .cost = allgather_direct_cost,
};
