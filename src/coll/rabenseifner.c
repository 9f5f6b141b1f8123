/*
 * rabenseifner.c - allreduce for the middle sizes: a reduce-scatter by
 * recursive halving, then an allgather by recursive doubling (Rabenseifner,
 * as in MPICH).  It moves the ring's 2 (n-1)/n of the data in 2 log2(n)
 * steps instead of 2 (n-1).
 *
 * Over the 2^k members that remain after folding (as recursive_doubling.c):
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
    const int n = g->n, me = g->me;
    const size_t es = collie__dtype_size(dtype);
    unsigned char *buf = data;
    if (n == 1)
        return collie__average(buf, count, dtype, op, divisor);
    unsigned char *tmp = collie__scratch(comm, COLLIE_SCRATCH_TMP, count * es);
    if (!tmp)
        return comm->failed;
    collie_op step_op = op == COLLIE_AVG ? COLLIE_SUM : op;
    int pof2 = 1;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    const int extra = n - pof2;
    int vme = me < 2 * extra ? (me % 2 ? me / 2 : -1) : me - extra;
    collie_status st = COLLIE_OK;
    if (me < 2 * extra) { /* fold: even members hand everything to the odd one above */
        if (me % 2 == 0) {
            st = collie__xsend(comm, g->rank[me + 1], buf, count * es);
        } else {
            st = collie__xrecv(comm, g->rank[me - 1], tmp, count * es);
            const void *srcs[2] = {tmp, buf};
            if (st == COLLIE_OK)
                collie__reduce(buf, srcs, 2, count, dtype, step_op, 1, 0);
        }
    }
    int lo = 0, hi = pof2; /* the blocks this member is responsible for */
    for (int d = pof2 / 2; st == COLLIE_OK && vme >= 0 && d >= 1; d /= 2) {
        int vpartner = vme ^ d, partner = vpartner < extra ? 2 * vpartner + 1 : vpartner + extra;
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
        int vpartner = vme ^ d, partner = vpartner < extra ? 2 * vpartner + 1 : vpartner + extra;
        int other_lo = lo ^ d, other_hi = other_lo + d; /* the partner's range, beside ours */
        size_t mine_at = at(count, lo, pof2), mine_n = at(count, hi, pof2) - mine_at;
        size_t other_at = at(count, other_lo, pof2), other_n = at(count, other_hi, pof2) - other_at;
        st = collie__sendrecv(comm, g->rank[partner], buf + mine_at * es, mine_n * es,
                              g->rank[partner], buf + other_at * es, other_n * es);
        lo = lo < other_lo ? lo : other_lo;
        hi = lo + 2 * d;
    }
    if (st == COLLIE_OK && me < 2 * extra) /* unfold: the result back to the even members */
        st = me % 2 ? collie__xsend(comm, g->rank[me - 1], buf, count * es)
                    : collie__xrecv(comm, g->rank[me + 1], buf, count * es);
    return st;
}

collie_status collie__allreduce_rab(collie_comm *comm, const struct collie__op *op)
{
    struct collie__group g = collie__group_all(comm);
    if (op->sendbuf != op->recvbuf)
        memcpy(op->recvbuf, op->sendbuf, op->count * op->elem_size);
    return collie__rab_allreduce(comm, &g, op->recvbuf, op->count, op->dtype, op->op, comm->size);
}
