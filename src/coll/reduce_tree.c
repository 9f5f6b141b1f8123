/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce_tree.c - reduce as a binomial tree over messages, broadcast_tree's
 * mirror: in step k every rank whose number (counted from the root) has bit
 * k set sends what it holds 2^k ranks down and leaves; the others take that
 * from 2^k ranks up and combine it into theirs.  log2(n) steps; a rank waits
 * for its children only, and a leaf sends and moves on, so ranks that
 * outnumber the cores are not all made to meet on every call.
 *
 * A rank combines (its data) op (its child's), children in a fixed order:
 * the same inputs give the same bits.  What a rank holds is its input until
 * it first combines: a leaf sends straight from the user's buffer, and the
 * first combine reads the input where it lies, so no rank copies its input
 * first (at 2 ranks, 16-64 KiB: one copy of the call's bytes on each rank).
 */
#include "../reduce/reduce.h"
#include "../transport/xfer.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status reduce_tree(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->size, vme = (comm->rank - op->root + n) % n;
    const size_t bytes = op->count * op->elem_size;
    const collie_op step_op = op->op == COLLIE_AVG ? COLLIE_SUM : op->op;
    const unsigned char *held = op->sendbuf;
    unsigned char *work = NULL, *tmp = NULL;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vme & mask)
            return collie__xfer_send(comm, (vme - mask + op->root) % n, held, bytes);
        if (vme + mask >= n)
            continue;
        if (!tmp) { /* the first child: where this rank combines */
            work = vme ? collie__scratch(comm, COLLIE_SCRATCH_WORK, bytes) : op->recvbuf;
            tmp = work ? collie__scratch(comm, COLLIE_SCRATCH_TMP, bytes) : NULL;
            if (!tmp)
                return comm->failed;
        }
        collie_status st = collie__xfer_recv(comm, (vme + mask + op->root) % n, tmp, bytes);
        if (st != COLLIE_OK)
            return st;
        const void *srcs[2] = {held, tmp};
        collie__reduce(work, srcs, 2, op->count, op->dtype, step_op, 1, 0);
        held = work;
    }
    return collie__average(op->recvbuf, op->count, op->dtype, op->op, n); /* the root */
}

/*
 * A reduce also combines its children's messages with its input, in cache:
 * 3 s where it runs ahead (fitted at 2 ranks, 1-256 KiB; at 4 and 8 ranks
 * on 2 cores, 8-64 KiB, within 30% of it).  Crowded beyond, fitted as 3.5
 * s of memory (measured at 4 and 8 ranks on 2 cores, while the tree still
 * copied its input first: twoshot 1.5-2x faster from 128 KiB at 4 ranks
 * and 256 KiB at 8).  Beyond a slot's bytes, the root takes the whole
 * message into a buffer of memory before it combines: 7 s of memory
 * (measured at 2 ranks: 168 us at 1 MiB, 5.96 ms at 16 MiB, 31.6 ms at 64
 * MiB, where 3 s at a reduction's rate said 112 us, 2.1 ms and 8.6 ms with
 * a tuned description, and chose it over `direct`'s 3.9 and 22.7 ms).  So
 * on a crowded host too (measured at 4 and 8 ranks on 2 cores: 0.54-0.77
 * and 1.45 ms at 1 MiB, 70 and 165 ms at 64 MiB, where 3.5 s said 0.58
 * and 1.15, 36.9 and 73.7 ms with the default rates, near `twoshot`, and
 * a tuned description chose the tree over `twoshot`'s 1.8 and 4.1 ms at 4
 * MiB).
 */
static double reduce_tree_cost(machine *m, double s, int degree)
{
    (void)degree;
    if (s > (double)m->slot_bytes)
        return collie__cost_tree(m, s, 7 * s, m->host_beta);
    if (collie__cost_switched(m, s))
        return collie__cost_tree(m, s, 3.5 * s, m->host_beta);
    return collie__cost_tree(m, s, 3 * s, collie__cost_resident_beta(m, s));
}

/*
 * On one host as broadcast_tree.c's.  Across hosts too: a leaf sends and moves on there as well,
 * so in a loop of calls the links' latency overlaps the next calls (measured over 1 Gbit/s
 * links between emulated hosts, 8-512 B: 1.5-5.8 us a call where recursive doubling, every
 * rank waiting for every exchange, took 10.7-15.8 at 2 hosts of 2 and 15-28 at 4 of 1; 4 KiB:
 * 34.6 against 41-46; 32 KiB-2 MiB: 1.25x faster than the ring at 2 hosts of 2, level at 4
 * of 1).
 */
const struct collie__algo collie__algo_reduce_tree = {
    .name = "tree",
    .wire = 8,
    .coll = COLLIE_COLL_REDUCE,
    .scope = COLLIE_SCOPE_ANY,
    .flags = COLLIE__ALGO_ON_HOST,
    .run = reduce_tree,
    .cost = reduce_tree_cost,
};
