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
#include "group.h"

/* Blocks [lo, hi) of `blocks`: their first element, and how many elements. */
static size_t at(size_t count, int blk, int blocks) { return collie__seg(count, blk, blocks); }

collie_status collie__rab_allreduce(collie_comm *comm, const struct collie__group *g, void *data,
                                    size_t count, collie_dtype dtype, collie_op op, int divisor)
{
    const int n = g->n;
    const size_t es = collie__dtype_size(dtype);
    unsigned char *buf = data;
    if (n == 1)
        return collie__average(buf, count, dtype, op, divisor);
    unsigned char *tmp = collie__scratch(comm, COLLIE_SCRATCH_TMP, count * es);
    if (!tmp)
        return comm->failed;
    collie_op step_op = op == COLLIE_AVG ? COLLIE_SUM : op;
    const struct collie__fold f = collie__fold_plan(g);
    const int pof2 = f.pof2, vme = f.vme;
    collie_status st = collie__fold_in(comm, g, &f, buf, tmp, count, dtype, step_op);
    int lo = 0, hi = pof2; /* the blocks this member is responsible for */
    for (int d = pof2 / 2; st == COLLIE_OK && vme >= 0 && d >= 1; d /= 2) {
        int partner = collie__fold_member(&f, vme ^ d);
        int lower = !(vme & d), mid = lo + d;
        int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
        int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
        size_t keep_at = at(count, keep_lo, pof2), keep_n = at(count, keep_hi, pof2) - keep_at;
        size_t give_at = at(count, give_lo, pof2), give_n = at(count, give_hi, pof2) - give_at;
        st = collie__sendrecv(comm, g->rank[partner], buf + give_at * es, give_n * es,
                              g->rank[partner], tmp, keep_n * es);
        if (st != COLLIE_OK)
            break;
        unsigned char *mine = buf + keep_at * es;
        const void *srcs[2] = {lower ? mine : tmp, lower ? tmp : mine};
        collie__reduce(mine, srcs, 2, keep_n, dtype, step_op, 1, 0);
        lo = keep_lo, hi = keep_hi;
    }
    if (st == COLLIE_OK && vme >= 0) {
        size_t own_at = at(count, lo, pof2);
        st = collie__average(buf + own_at * es, at(count, hi, pof2) - own_at, dtype, op, divisor);
    }
    for (int d = 1; st == COLLIE_OK && vme >= 0 && d < pof2; d *= 2) {
        int partner = collie__fold_member(&f, vme ^ d);
        int other_lo = lo ^ d, other_hi = other_lo + d; /* the partner's range, beside ours */
        size_t mine_at = at(count, lo, pof2), mine_n = at(count, hi, pof2) - mine_at;
        size_t other_at = at(count, other_lo, pof2), other_n = at(count, other_hi, pof2) - other_at;
        st = collie__sendrecv(comm, g->rank[partner], buf + mine_at * es, mine_n * es,
                              g->rank[partner], buf + other_at * es, other_n * es);
        lo = lo < other_lo ? lo : other_lo;
        hi = lo + 2 * d;
    }
    return st == COLLIE_OK ? collie__fold_out(comm, g, &f, buf, count * es) : st;
}

collie_status collie__allreduce_rab(collie_comm *comm, const struct collie__op *op)
{
    struct collie__group g = collie__group_all(comm);
    if (op->sendbuf != op->recvbuf)
        memcpy(op->recvbuf, op->sendbuf, op->count * op->elem_size);
    return collie__rab_allreduce(comm, &g, op->recvbuf, op->count, op->dtype, op->op, comm->size);
}
