/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce_scatter_direct.c - reduce_scatter in one copy: rank r reads block
 * r of every peer's send buffer (transport/shm.h's cross-memory attach) a
 * cache-sized piece at a time and reduces it with its own into its output,
 * instead of every rank staging all its blocks through its slot.
 *
 * Every rank publishes its send buffer and syncs (the descriptors are
 * compared there); each reduces its block (direct.c's pieces); a last sync.
 * In place with the result in the first block (recvbuf == sendbuf, as
 * MPI_IN_PLACE), a rank other than 0 would overwrite block 0 of its input,
 * which rank 0 reads: there the result lands in scratch and reaches the
 * output after the last sync.  The NCCL form (recvbuf the rank's own
 * block) writes only what this rank alone reads.
 */
#include <string.h>

#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status reduce_scatter_direct(collie_comm *comm, const struct collie__op *op)
{
    const size_t es = op->elem_size, count = op->count, base = (size_t)comm->rank * count;
    size_t piece;
    unsigned char *tmp = collie__direct_pieces(comm, es, &piece);
    unsigned char *out = op->recvbuf;
    if (tmp && op->recvbuf == op->sendbuf && comm->rank != 0)
        out = collie__scratch(comm, COLLIE_SCRATCH_WORK, count * es);
    if (!tmp || !out)
        return comm->failed;

    unsigned parity = collie__publish(comm, op->sendbuf, NULL);
    collie_status st = collie__win_sync(comm);
    for (size_t off = 0; st == COLLIE_OK && off < count; off += piece) {
        size_t m = count - off < piece ? count - off : piece;
        st = collie__direct_reduce_piece(comm, op, parity, base + off, m, tmp, out + off * es);
    }
    /* Every rank passes the last sync, a failed one too: its peers then learn at once. */
    collie_status last = collie__win_sync(comm);
    if (st == COLLIE_OK && last == COLLIE_OK) /* each peer read its block of our input */
        collie__count_sent(comm, COLLIE_LANE_COLL, (size_t)(comm->local_size - 1) * count * es);
    if (st == COLLIE_OK && last == COLLIE_OK && out != op->recvbuf)
        collie__copy(op->recvbuf, out, count * es);
    return st != COLLIE_OK ? st : last;
}

static double reduce_scatter_direct_cost(machine *m, double s, int degree)
{
    (void)degree;
    double n = m->ranks_per_host;
    if (!collie__cost_attach_offered(m))
        return HUGE_VAL;
    double piece = COLLIE__DIRECT_PIECE_SLOTS * (double)m->slot_bytes / n;
    return 2 * collie__cost_sync(m) +
           collie__cost_attach(m, (n - 1) * ceil(s / piece), (n - 1) * s, n * (n + 1) * s) +
           collie__cost_move(m, m->host_beta, 2 * s, (n - 1) * s);
}

const struct collie__algo collie__algo_reduce_scatter_direct = {
    .name = "direct",
    .wire = 13,
    .coll = COLLIE_COLL_REDUCE_SCATTER,
    .scope = COLLIE_SCOPE_HOST,
    .flags = COLLIE__ALGO_ATTACH,
    .run = reduce_scatter_direct,
    .cost = reduce_scatter_direct_cost,
};
