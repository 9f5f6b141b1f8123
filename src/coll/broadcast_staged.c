/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * broadcast_staged.c - broadcast through the window: per round, the root
 * stages a slot-sized piece of its buffer, one sync, every other rank copies
 * it out.  Two slots alternate, so the root fills the next piece while the
 * others still copy the last.
 */
#include <string.h>

#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status broadcast_staged(collie_comm *comm, const struct collie__op *op)
{
    const size_t es = op->elem_size, chunk = collie__win_bytes(comm) / es;
    const int root = collie__local_index(comm, op->root), is_root = comm->rank == op->root;
    unsigned char *buf = op->recvbuf;
    for (size_t off = 0; off < op->count; off += chunk) {
        size_t m = op->count - off < chunk ? op->count - off : chunk;
        unsigned parity = collie__win_round(comm, m * es);
        if (is_root) {
            collie__stage(op, collie__win_slot(comm, root, parity), buf + off * es, m * es);
            collie__count_sent(comm, COLLIE_LANE_COLL, (size_t)(comm->local_size - 1) * m * es);
        }
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;
        if (!is_root)
            collie__copy_out(op, buf + off * es, collie__win_slot(comm, root, parity), m * es);
    }
    return COLLIE_OK;
}

/*
 * The root stages, one sync, the others copy out.  With two slots the root
 * runs one piece ahead: in a loop of calls that fit in the cache, all the
 * way, the root's copy of one call under the others' of the one before;
 * beyond, not all the way: measured at 2 ranks, 64 MiB takes what 1.5 s of
 * memory traffic takes.  In a call that starts with every
 * rank synced (adaptive's verdict), the root's copy of the first piece runs
 * alone (measured at 2 ranks, 256 KiB: 19 us, where `staged` took 11).
 */
static double broadcast_staged_cost(machine *m, double s, int synced)
{
    double beta = collie__cost_staged_beta(m, s), user = beta > m->host_beta ? s : 1.5 * s;
    double first = synced ? s / collie__cost_rounds(m, s) : 0,
           fresh = collie__cost_pair_fresh(m, s);
    double syncs = collie__cost_rounds(m, s) * collie__cost_sync(m);
    if (fresh >= 0) /* two ranks near: the other's reads of the slot set the pace */
        return syncs + fresh + collie__cost_move(m, beta, first, 0);
    return syncs + collie__cost_move(m, beta, user + first, s);
}

static double cost(machine *m, double s, int degree)
{
    (void)degree;
    return broadcast_staged_cost(m, s, 0);
}

static double synced_cost(machine *m, double s, int degree)
{
    (void)degree;
    return broadcast_staged_cost(m, s, 1);
}

const struct collie__algo collie__algo_broadcast_staged = {
    .name = "staged",
    .wire = 7,
    .coll = COLLIE_COLL_BROADCAST,
    .scope = COLLIE_SCOPE_HOST,
    .flags = COLLIE__ALGO_STAGES,
    .run = broadcast_staged,
    .cost = cost,
    .synced_cost = synced_cost,
};
