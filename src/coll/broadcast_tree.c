/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * broadcast_tree.c - broadcast as a binomial tree over every rank: in step k
 * each rank that has the data sends it 2^k ranks further (counted from the
 * root), so n ranks are reached in log2(n) steps and the root sends log2(n)
 * messages, not n-1.
 */
#include "../transport/shm.h"
#include "../transport/xfer.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status broadcast_tree(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->size, vme = (comm->rank - op->root + n) % n;
    const size_t bytes = op->count * op->elem_size;
    void *buf = op->recvbuf;
    int mask = 1;
    while (mask < n && !(vme & mask)) /* the lowest set bit of vme names the parent */
        mask <<= 1;
    if (vme) {
        collie_status st = collie__xfer_recv(comm, ((vme - mask) + op->root) % n, buf, bytes);
        if (st != COLLIE_OK)
            return st;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vme + mask < n) {
            collie_status st = collie__xfer_send(comm, (vme + mask + op->root) % n, buf, bytes);
            if (st != COLLIE_OK)
                return st;
        }
    return COLLIE_OK;
}

/*
 * A broadcast reads and writes its buffer once: 2 s at a reduction's rate
 * where it runs ahead (at 2 ranks, 1 MiB-64 MiB measured within 0-20% of it
 * but at 16 MiB, 1.4 ms against 2.3 predicted); crowded beyond, of memory.
 * Two ranks near each other whose call fits a core's own cache, where the
 * message is too large for the ring's head: the root's copy into the ring,
 * then the other's out of it at the rate of lines just written, one after
 * the other, as a message up to a quarter ring is posted whole (measured on
 * the EPYC near, 8-64 KiB: 1.37-1.80, 2.54-2.67, 4.3-5.4 and 7.6-9.9 us; so
 * priced 1.27, 2.39, 4.65 and 9.2).
 */
static double broadcast_tree_cost(machine *m, double s, int degree)
{
    (void)degree;
    double fresh = s > COLLIE__RING_HOT_BYTES / 4 ? collie__cost_pair_fresh(m, s) : -1;
    if (fresh >= 0)
        return collie__cost_tree(m, s, 0, 1) + s / collie__cost_resident_beta(m, s) + fresh;
    if (collie__cost_switched(m, s))
        return collie__cost_tree(m, s, 2 * s, m->host_beta);
    return collie__cost_tree(m, s, 2 * s, collie__cost_resident_beta(m, s));
}

/*
 * Offered on one host too, where its cost says.  A rank that sent moves on:
 * on a host whose ranks outnumber its cores it beats the window 5-8x for
 * small messages (ranks run calls ahead and are switched in once per many
 * calls, where every sync makes each of them run); with a core a rank, a
 * message is one line's trip where a sync is a round trip, about 2x.  What
 * that costs is the window's promise that every rank fails with MISMATCH
 * from the very call in which the ranks' calls differ: a rank that only
 * sent learns it at its next call (docs/DESIGN.md).
 */
const struct collie__algo collie__algo_broadcast_tree = {
    .name = "tree",
    .wire = 8,
    .coll = COLLIE_COLL_BROADCAST,
    .scope = COLLIE_SCOPE_ANY,
    .flags = COLLIE__ALGO_ON_HOST,
    .run = broadcast_tree,
    .cost = broadcast_tree_cost,
};
