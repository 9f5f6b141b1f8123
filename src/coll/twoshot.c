/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * twoshot.c - allreduce and reduce for large messages: reduce-scatter then
 * gather, through the slots, one slot-sized chunk per round.
 *
 * Per round, rank r owns slice r of the chunk: it copies the other slices of
 * its input into its slot (sync); it reduces slice r of every peer's slot
 * with slice r of its own input, in rank order, into slice r of its slot and,
 * from the same block in L1, into its output (sync); every receiving rank
 * copies the other reduced slices out.  A rank's own slice never passes
 * through the window, nor is its sum read back: of the 5.5 chunk's worth of
 * reads and writes that staging the whole chunk and copying every slice out
 * costs a rank at 2 ranks, 4 remain.  All ranks reduce at once, each
 * reads every byte once, and the chunk is sized to stay in cache, so the
 * user's buffers are the only DRAM traffic: input read once, output
 * written once.
 *
 * In place, slice r of the input is read by rank r alone before it is
 * overwritten, and the others were staged before the first sync.
 */
#include <string.h>

#include "../reduce/reduce.h"
#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status twoshot(collie_comm *comm, const struct collie__op *op, int root)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size, chunk = collie__win_bytes(comm) / es;
    const unsigned char *send = op->sendbuf;
    unsigned char *recv = op->recvbuf;
    const void **srcs = comm->scratch_srcs;
    int receives = root < 0 || root == comm->rank;
    for (size_t off = 0; off < op->count; off += chunk) {
        size_t m = op->count - off < chunk ? op->count - off : chunk;
        size_t lo = collie__seg(m, me, n), hi = collie__seg(m, me + 1, n);
        /* not an exchange in a reduce: nobody reads the root's reduced slice */
        unsigned parity =
            root < 0 ? collie__win_exchange(comm, m * es) : collie__win_round(comm, m * es);
        unsigned char *mine = collie__win_slot(comm, me, parity);
        const unsigned char *in = send + off * es;
        collie__copy(mine, in, lo * es); /* the slices the peers own: all but [lo, hi) */
        collie__copy(mine + hi * es, in + hi * es, (m - hi) * es);
        collie__count_sent(comm, COLLIE_LANE_COLL, (m - (hi - lo)) * es);
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;

        for (int r = 0; r < n; r++)
            srcs[r] = r == me ? in + lo * es
                              : (const unsigned char *)collie__win_slot(comm, r, parity) + lo * es;
        if (receives)
            collie__reduce_twice(mine + lo * es, recv + (off + lo) * es, op->stream_out, srcs, n,
                                 hi - lo, op->dtype, op->op, comm->size);
        else
            collie__reduce(mine + lo * es, srcs, n, hi - lo, op->dtype, op->op, comm->size, 0);
        collie__count_sent(comm, COLLIE_LANE_COLL,
                           collie__other_receivers(comm, root) * (hi - lo) * es);
        st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;

        if (!receives)
            continue;
        for (int r = 0; r < n; r++) {
            if (r == me)
                continue;
            size_t a = collie__seg(m, r, n), b = collie__seg(m, r + 1, n);
            const unsigned char *slot = collie__win_slot(comm, r, parity);
            collie__copy_out(op, recv + (off + a) * es, slot + a * es, (b - a) * es);
        }
    }
    return COLLIE_OK;
}

static collie_status allreduce_twoshot(collie_comm *comm, const struct collie__op *op)
{
    return twoshot(comm, op, -1);
}

static collie_status reduce_twoshot(collie_comm *comm, const struct collie__op *op)
{
    return twoshot(comm, op, op->root);
}

/*
 * Copy the peers' slices in, reduce a 1/n slice of n sources into a slot,
 * two syncs, copy all slices out: every rank, or (reduce) the root alone.
 * Each slot's line is read once, so the host's buffers stay resident on a
 * crowded host too (measured at 4 and 8 ranks on 2 cores, 256 KiB: 84-94
 * and 183-238 us, where memory's rate said 140-202 and 285-409, when the
 * whole chunk was staged; not staging the own slice took 1 MiB at 2 ranks
 * from 154-161 to 116-117 us, a rank moving 4.5 chunks where it moved 5.5;
 * storing the sum into the output from the reduce's block, 4 chunks, took it
 * from 71-74 to 60-63 us).
 */
static double twoshot_cost(machine *m, double s, int rooted)
{
    double n = m->ranks_per_host, b = collie__cost_resident_beta(m, s);
    double r = collie__cost_rounds(m, s);
    /* two ranks: a round's two phases each read half a round from the peer (its copy, its sums) */
    if (!rooted && collie__cost_pair(m, s))
        return 2 * r * collie__cost_sync(m) +
               collie__cost_pair_move(m, (3 - 1 / n) * s, (2 - 1 / n) * s, 2 * (int)r, s / (2 * r));
    /*
     * A reduce's root near its one peer reads the peer's half and then its
     * sums, lines the peer's core has just written, as oneshot's root does:
     * measured at 2 ranks on the Xeon, 3.41-3.48 us at 16 KiB, 8.19-8.29 at
     * 64 and 31.8-32.0 at 256, where the rates below said 2.07, 6.61 and
     * 24.75; this says 3.2, 8.9 and 31.0.
     */
    double fresh = rooted ? collie__cost_pair_fresh(m, s) : -1;
    if (fresh >= 0)
        return 2 * r * collie__cost_sync(m) + fresh +
               collie__cost_pair_move(m, s / 2, 0, 2 * (int)r, s / (2 * r));
    /* the copy out: the peers' slices from the slots, the own one stored from the reduce's block */
    double peers = (1 - 1 / n) * s;
    double out = rooted ? collie__cost_alone(m, b, s, peers) : collie__cost_move(m, b, s, peers);
    return 2 * r * collie__cost_sync(m) + collie__cost_move(m, b, (2 - 1 / n) * s, s) + out;
}

static double allreduce_twoshot_cost(machine *m, double s, int degree)
{
    (void)degree;
    return twoshot_cost(m, s, 0);
}

static double reduce_twoshot_cost(machine *m, double s, int degree)
{
    (void)degree;
    return twoshot_cost(m, s, 1);
}

const struct collie__algo collie__algo_allreduce_twoshot = {
    .name = "twoshot",
    .wire = 2,
    .coll = COLLIE_COLL_ALLREDUCE,
    .scope = COLLIE_SCOPE_HOST,
    .run = allreduce_twoshot,
    .cost = allreduce_twoshot_cost,
};

const struct collie__algo collie__algo_reduce_twoshot = {
    .name = "twoshot",
    .wire = 2,
    .coll = COLLIE_COLL_REDUCE,
    .scope = COLLIE_SCOPE_HOST,
    .run = reduce_twoshot,
    .cost = reduce_twoshot_cost,
};
