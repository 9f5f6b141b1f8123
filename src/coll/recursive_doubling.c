/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recursive_doubling.c - allreduce for small messages: log2(n) steps, each
 * exchanging the whole buffer with the member whose number differs in one
 * bit, so the latency is log2(n) messages instead of the ring's 2 (n-1).
 *
 * A group that is not a power of two first folds (fold.c).
 * Both partners of a step combine (lower member's data) op (upper's), so
 * every member computes the same bits; each exchange is pipelined
 * (exchange.c), so large messages stream through the cache.
 */
#include "../reduce/reduce.h"
#include "../transport/xfer.h"
#include "algo.h"
#include "cost_terms.h"
#include "group.h"

collie_status collie__rd_allreduce(collie_comm *comm, const struct collie__group *g, const void *in,
                                   void *data, size_t count, collie_dtype dtype, collie_op op,
                                   int divisor)
{
    const int n = g->n;
    unsigned char *buf = data;
    size_t bytes = count * collie__dtype_size(dtype);
    if (n == 1) {
        if (in != data)
            collie__copy(data, in, bytes);
        return collie__average(data, count, dtype, op, divisor);
    }
    const unsigned char *src = in; /* buf once this member has combined into it */
    collie_op step_op = op == COLLIE_AVG ? COLLIE_SUM : op;
    const struct collie__fold f = collie__fold_plan(g);
    collie_status st = collie__fold_in(comm, g, &f, &src, buf, count, dtype, step_op);
    for (int mask = 1; st == COLLIE_OK && f.vme >= 0 && mask < f.pof2; mask <<= 1) {
        int vpartner = f.vme ^ mask, partner = g->rank[collie__fold_member(&f, vpartner)];
        st = collie__exchange_reduce(comm, partner, src, bytes, partner, buf, src, count, dtype,
                                     step_op, vpartner < f.vme);
        src = buf;
    }
    if (st == COLLIE_OK)
        st = collie__fold_out(comm, g, &f, buf, bytes);
    return st == COLLIE_OK ? collie__average(buf, count, dtype, op, divisor) : st;
}

static collie_status allreduce_rd(collie_comm *comm, const struct collie__op *op)
{
    return collie__allreduce_all(comm, op, collie__rd_allreduce);
}

/* Reduce for small messages: the allreduce, kept by the root only. */
static collie_status reduce_rd(collie_comm *comm, const struct collie__op *op)
{
    struct collie__group g = collie__group_all(comm);
    unsigned char *work = collie__reduce_work(comm, op);
    if (!work)
        return comm->failed;
    return collie__rd_allreduce(comm, &g, work, work, op->count, op->dtype, op->op, comm->size);
}

/*
 * Recursive doubling: log2(n) exchanges of everything; the log2(H) at
 * distances >= L cross the link, L flows at once (and the folds).
 */
static double allreduce_rd_cost(machine *m, double s, int degree)
{
    (void)degree;
    double steps = collie__cost_log2_steps(m->ranks) + collie__cost_fold_steps(m->ranks);
    double link = collie__cost_flows(m) *
                  (collie__cost_log2_steps(m->hosts) + collie__cost_fold_steps(m->ranks));
    return collie__cost_over_links(m, steps, (m->hosts > 1 ? link : steps) * s);
}

const struct collie__algo collie__algo_allreduce_rd = {
    .name = "rd",
    .wire = 4,
    .coll = COLLIE_COLL_ALLREDUCE,
    .scope = COLLIE_SCOPE_ANY,
    .run = allreduce_rd,
    .cost = allreduce_rd_cost,
};

/* Only where forced across hosts: the tree, whose leaves do not wait, beat it at every size
 * measured there (reduce_tree.c). */
const struct collie__algo collie__algo_reduce_rd = {
    .name = "rd",
    .wire = 4,
    .coll = COLLIE_COLL_REDUCE,
    .scope = COLLIE_SCOPE_ANY,
    .flags = COLLIE__ALGO_FORCED_ACROSS,
    .run = reduce_rd,
    .cost = allreduce_rd_cost,
};
