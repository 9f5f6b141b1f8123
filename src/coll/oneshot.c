/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oneshot.c - allreduce and reduce for small messages: every rank copies its
 * input into its slot once, one sync, then each receiving rank reduces every
 * peer's slot and its own input, where it lies, in rank order.  One
 * synchronisation per round; each receiver reads n inputs, so it loses to
 * twoshot as messages grow.  A reduce's root alone receives, so nobody reads
 * its slot and it copies nothing in: its share of the call is one pass over n
 * inputs.  An allreduce's round is an exchange (collie__win_exchange()).
 */
#include <string.h>

#include "../reduce/reduce.h"
#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status oneshot(collie_comm *comm, const struct collie__op *op, int root)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size, chunk = collie__win_bytes(comm) / es;
    const unsigned char *send = op->sendbuf;
    unsigned char *recv = op->recvbuf;
    const void **srcs = comm->scratch_srcs;
    int receives = root < 0 || root == comm->rank;
    int stages = root < 0 || root != comm->rank; /* some peer reads this rank's input */
    if (op->count * es <= COLLIE__WIN_CARRY) {   /* the data rides with the sync */
        memcpy(collie__win_carry(comm), send, op->count * es);
        collie__count_sent(comm, COLLIE_LANE_COLL,
                           collie__other_receivers(comm, root) * op->count * es);
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK || !receives)
            return st;
        for (int r = 0; r < n; r++)
            srcs[r] = collie__win_carried(comm, r);
        collie__reduce(recv, srcs, n, op->count, op->dtype, op->op, comm->size, op->stream_out);
        return COLLIE_OK;
    }
    for (size_t off = 0; off < op->count; off += chunk) {
        size_t m = op->count - off < chunk ? op->count - off : chunk;
        unsigned parity =
            root < 0 ? collie__win_exchange(comm, m * es) : collie__win_round(comm, m * es);
        if (stages)
            collie__copy(collie__win_slot(comm, me, parity), send + off * es, m * es);
        collie__count_sent(comm, COLLIE_LANE_COLL, collie__other_receivers(comm, root) * m * es);
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;
        if (!receives)
            continue;
        for (int r = 0; r < n; r++)
            srcs[r] = r == me ? send + off * es : collie__win_slot(comm, r, parity);
        collie__reduce(recv + off * es, srcs, n, m, op->dtype, op->op, comm->size, op->stream_out);
    }
    return COLLIE_OK;
}

static collie_status allreduce_oneshot(collie_comm *comm, const struct collie__op *op)
{
    return oneshot(comm, op, -1);
}

static collie_status reduce_oneshot(collie_comm *comm, const struct collie__op *op)
{
    return oneshot(comm, op, op->root);
}

/*
 * The window algorithms, per rank (the busiest, for the rooted ones): the
 * bytes each moves of its buffers and of the slots, s the call's bytes.
 */

/* Who works while a oneshot reduces (oneshot_cost()). */
enum shot {
    EVERY_RANK,  /* allreduce: every rank reduces */
    ROOT_ALONE,  /* reduce: the others return after the sync and copy their next input in
                    (of the next round, and of the next call) while the root reduces */
    ROOT_SYNCED, /* the same in a call that starts with every rank synced (adaptive's sync):
                    its first round runs as an allreduce's, the root waiting on every copy
                    (measured: 20 us more than ROOT_ALONE at 2 ranks from 256 KiB) */
};

/*
 * Copy in (read s, write a slot), one sync, reduce n slots into the result.
 * Measured at 2 ranks, a loop of reduces takes half a loop of allreduces'
 * time: its root works alone.  A reduce's root no longer copies its input
 * in, but it is still charged the copy: its reads of the peers' slots, lines
 * another core has just written, cost more than the rates say; two ranks
 * near each other, whose exchange fits a core's cache, price those reads at
 * the fresh-line rate instead (below).
 */
static double oneshot_cost(machine *m, double s, enum shot shot)
{
    if (s <= COLLIE__WIN_CARRY) /* the data rides in the sync's lines: no slot, one round */
        return collie__cost_sync(m) - m->host_alpha + m->host_carry;
    double n = m->ranks_per_host, b = collie__cost_reduction_beta(m, s),
           r = collie__cost_rounds(m, s);
    /* two ranks: a round's one phase reads the peer's whole slot */
    if (shot == EVERY_RANK && collie__cost_pair(m, s))
        return r * collie__cost_sync(m) + collie__cost_pair_move(m, (2 + n) * s, s, (int)r, s / r);
    double together = shot == EVERY_RANK ? s : shot == ROOT_SYNCED ? s / r : 0, rest = s - together;
    /*
     * A reduce's root near its one peer reads the peer's slot a line at a
     * time just after the peer's core wrote it, as a broadcast's other rank
     * reads the root's: that sets the pace.  Measured at 2 ranks, 8-64 KiB,
     * on the EPYC 1.92-1.99 us at 16 KiB and 7.35-7.55 at 64, on the Xeon
     * 1.11-1.27, 1.77-2.25, 3.02-3.49 and 5.74-6.77 at 8, 16, 32 and 64:
     * a sync and each byte at the fresh rate within 15% of every median,
     * where the rates below said 0.93, 1.59, 2.89 and 5.51 and put the tree
     * second at 8 and 16 KiB, which took 0.75-0.83 and 1.59-1.69 there.
     */
    double fresh = shot == EVERY_RANK ? -1 : collie__cost_pair_fresh(m, s);
    if (fresh >= 0)
        return r * collie__cost_sync(m) + fresh + collie__cost_pair_copy(m, 2 * together);
    /*
     * On a crowded host the others' next copies in share the cores with the root's reduce of
     * every slot: measured at 8 ranks on 2 cores, 1-64 MiB, A/B against twoshot (12 rounds),
     * a oneshot reduce took 0.99-1.15x its time, where the root alone said 0.53.
     */
    double root = collie__cost_crowded(m) ? collie__cost_move(m, b, (2 + n) * rest, rest)
                                          : collie__cost_alone(m, b, (2 + n) * rest, rest);
    return r * collie__cost_sync(m) + collie__cost_move(m, b, (2 + n) * together, together) + root;
}

static double allreduce_oneshot_cost(machine *m, double s, int degree)
{
    (void)degree;
    return oneshot_cost(m, s, EVERY_RANK);
}

static double reduce_oneshot_cost(machine *m, double s, int degree)
{
    (void)degree;
    return oneshot_cost(m, s, ROOT_ALONE);
}

static double reduce_oneshot_synced_cost(machine *m, double s, int degree)
{
    (void)degree;
    return oneshot_cost(m, s, ROOT_SYNCED);
}

const struct collie__algo collie__algo_allreduce_oneshot = {
    .name = "oneshot",
    .wire = 1,
    .coll = COLLIE_COLL_ALLREDUCE,
    .scope = COLLIE_SCOPE_HOST,
    .run = allreduce_oneshot,
    .cost = allreduce_oneshot_cost,
};

const struct collie__algo collie__algo_reduce_oneshot = {
    .name = "oneshot",
    .wire = 1,
    .coll = COLLIE_COLL_REDUCE,
    .scope = COLLIE_SCOPE_HOST,
    .run = reduce_oneshot,
    .cost = reduce_oneshot_cost,
    .synced_cost = reduce_oneshot_synced_cost,
};
