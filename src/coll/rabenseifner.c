/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rabenseifner.c - allreduce for the middle sizes: a reduce-scatter by
 * recursive halving, then an allgather by recursive doubling (Rabenseifner,
 * as in MPICH).  It moves the ring's 2 (n-1)/n of the data in 2 log2(n)
 * steps instead of 2 (n-1).
 *
 * Over the 2^k members that remain after folding (fold.c):
 * the data splits into 2^k blocks.  Halving: at distance d = 2^(k-1) .. 1,
 * each member keeps the half of its range on its side of the partner
 * (vme ^ d), sends the other half and reduces the partner's copy of its own
 * half into it, until it owns block vme.  Doubling runs the same exchanges
 * backwards, trading owned ranges.  Combined as (lower member's data) op
 * (upper's), so every block has the same bits wherever it is computed.
 */
#include "../reduce/reduce.h"
#include "../transport/xfer.h"
#include "algo.h"
#include "cost_terms.h"
#include "group.h"

/* The elements of blocks [lo, hi) of `blocks`: where they start and how many. */
struct span {
    size_t at, n;
};

static struct span blocks_span(size_t count, int lo, int hi, int blocks)
{
    size_t at = collie__seg(count, lo, blocks);
    return (struct span){at, collie__seg(count, hi, blocks) - at};
}

collie_status collie__rab_allreduce(collie_comm *comm, const struct collie__group *g,
                                    const void *in, void *data, size_t count, collie_dtype dtype,
                                    collie_op op, int divisor)
{
    const int n = g->n;
    const size_t es = collie__dtype_size(dtype);
    unsigned char *buf = data;
    if (n == 1)
        return collie__rd_allreduce(comm, g, in, data, count, dtype, op, divisor);
    const unsigned char *src = in; /* buf once this member has combined into it */
    collie_op step_op = op == COLLIE_AVG ? COLLIE_SUM : op;
    const struct collie__fold f = collie__fold_plan(g);
    const int pof2 = f.pof2, vme = f.vme;
    collie_status st = collie__fold_in(comm, g, &f, &src, buf, count, dtype, step_op);
    int lo = 0, hi = pof2; /* the blocks this member is responsible for */
    for (int d = pof2 / 2; st == COLLIE_OK && vme >= 0 && d >= 1; d /= 2) {
        int partner = collie__fold_member(&f, vme ^ d);
        int lower = !(vme & d), mid = lo + d;
        int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
        int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
        struct span keep = blocks_span(count, keep_lo, keep_hi, pof2);
        struct span give = blocks_span(count, give_lo, give_hi, pof2);
        st = collie__exchange_reduce(comm, g->rank[partner], src + give.at * es, give.n * es,
                                     g->rank[partner], buf + keep.at * es, src + keep.at * es,
                                     keep.n, dtype, step_op, !lower);
        lo = keep_lo, hi = keep_hi, src = buf;
    }
    if (st == COLLIE_OK && vme >= 0) {
        struct span own = blocks_span(count, lo, hi, pof2);
        st = collie__average(buf + own.at * es, own.n, dtype, op, divisor);
    }
    for (int d = 1; st == COLLIE_OK && vme >= 0 && d < pof2; d *= 2) {
        int partner = collie__fold_member(&f, vme ^ d);
        int other_lo = lo ^ d; /* the partner's range, beside ours */
        struct span mine = blocks_span(count, lo, hi, pof2);
        struct span other = blocks_span(count, other_lo, other_lo + d, pof2);
        st = collie__xfer_sendrecv(comm, g->rank[partner], buf + mine.at * es, mine.n * es,
                                   g->rank[partner], buf + other.at * es, other.n * es);
        lo = lo < other_lo ? lo : other_lo;
        hi = lo + 2 * d;
    }
    return st == COLLIE_OK ? collie__fold_out(comm, g, &f, buf, count * es) : st;
}

static collie_status allreduce_rabenseifner(collie_comm *comm, const struct collie__op *op)
{
    return collie__allreduce_all(comm, op, collie__rab_allreduce);
}

/*
 * Rabenseifner: 2 log2(n) steps; the halving and doubling at distances >= L
 * cross the link.  Its first exchanges move half the data at once, which a
 * link's queue absorbs worse than the ring's n-th parts: measured on 4 hosts
 * with 1 Gbit/s links at 16 MiB, 0.103 GB/s against the ring's 0.113.  The
 * 10% below makes it the middle sizes' algorithm, the ring the large ones'.
 */
#define RAB_LINK_PENALTY 1.1
static double allreduce_rabenseifner_cost(machine *m, double s, int degree)
{
    (void)degree;
    double h = m->hosts;
    double steps = 2 * collie__cost_log2_steps(m->ranks) + collie__cost_fold_steps(m->ranks);
    if (m->hosts == 1)
        h = m->ranks;
    double link = collie__cost_flows(m) * (2 * (h - 1) / h + collie__cost_fold_steps(m->ranks));
    return collie__cost_over_links(m, steps, RAB_LINK_PENALTY * link * s);
}

const struct collie__algo collie__algo_allreduce_rabenseifner = {
    .name = "rabenseifner",
    .wire = 5,
    .coll = COLLIE_COLL_ALLREDUCE,
    .scope = COLLIE_SCOPE_ANY,
    .run = allreduce_rabenseifner,
    .cost = allreduce_rabenseifner_cost,
};
