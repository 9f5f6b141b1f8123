/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * broadcast_direct.c - broadcast in one copy: the ranks copy between their
 * own buffers where the user keeps them (transport/shm.h's cross-memory
 * attach) instead of the root staging the message through its slot and
 * each rank copying it out.
 *
 * Every rank publishes its buffer and syncs (the descriptors are compared
 * there, before anybody touches a peer).  A receiver alone would leave the
 * root idle, so the two share the copy: each receiver reads the first n-1
 * parts of the message out of the root's buffer, and the root writes the
 * last part into every receiver's, each a system call, all at once.  Every
 * one then copies (n-1)/n of the message: at 2 ranks half of it each,
 * where Open MPI's single copy has the receiver copy it all.  A last sync,
 * and every buffer may be touched again.
 */
#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status broadcast_direct(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->local_size, root = collie__local_index(comm, op->root);
    const size_t es = op->elem_size, bytes = op->count * es;
    const size_t pulled = collie__seg(op->count, n - 1, n) * es; /* the root pushes the rest */
    const int is_root = comm->rank == op->root;
    unsigned char *buf = op->recvbuf;
    unsigned parity = collie__publish(comm, buf, is_root ? NULL : buf);
    collie_status st = collie__win_sync(comm);
    if (st == COLLIE_OK && !is_root) {
        st = collie__attach_read(comm, root, buf, collie__published_input(comm, root, parity),
                                 pulled);
    } else if (st == COLLIE_OK && bytes > pulled) {
        for (int k = 1; st == COLLIE_OK && k < n; k++) {
            int r = (root + k) % n;
            st = collie__attach_write(comm, r, collie__published_output(comm, r, parity) + pulled,
                                      buf + pulled, bytes - pulled);
        }
    }
    if (st == COLLIE_OK && is_root) /* pulled by each peer, the rest pushed to each */
        collie__count_sent(comm, COLLIE_LANE_COLL, (size_t)(n - 1) * bytes);
    /* Every rank passes the last sync, a failed one too: its peers then learn at once. */
    collie_status last = collie__win_sync(comm);
    return st != COLLIE_OK ? st : last;
}

/*
 * The other collectives' single copies (broadcast_direct.c, ...): two
 * syncs; each rank copies what it receives from the peers' buffers, a
 * system call per peer's block (per piece, for reduce_scatter's reduction),
 * all ranks at once; allgather and alltoall copy their own block too.  In
 * a broadcast the root writes the last 1/n of the message into every
 * receiver while each reads the rest: (n-1)/n of it each, the root's n-1
 * calls the longest.
 */
static double broadcast_direct_cost(machine *m, double s, int degree)
{
    (void)degree;
    double n = m->ranks_per_host, share = (n - 1) / n * s; /* what each copies */
    if (!collie__cost_attach_offered(m))
        return HUGE_VAL;
    return 2 * collie__cost_sync(m) + collie__cost_attach(m, n - 1, share, n * s) +
           collie__cost_written(m, share, n * s);
}

const struct collie__algo collie__algo_broadcast_direct = {
    .name = "direct",
    .wire = 13,
    .coll = COLLIE_COLL_BROADCAST,
    .scope = COLLIE_SCOPE_HOST,
    .flags = COLLIE__ALGO_ATTACH,
    .run = broadcast_direct,
    .cost = broadcast_direct_cost,
};
