/*
 * recursive_doubling.c - allreduce for small messages: log2(n) steps, each
 * exchanging the whole buffer with the member whose number differs in one
 * bit, so the latency is log2(n) messages instead of the ring's 2 (n-1).
 *
 * A group that is not a power of two first folds: of the first 2r members
 * (r = n - 2^k), each even one hands its data to the odd one above it and
 * waits; the 2^k that remain double; the odd ones hand the result back.
 * Both partners of a step combine (lower member's data) op (upper's), so
 * every member computes the same bits.
 */
#include "../reduce/reduce.h"
#include "../transport/xfer.h"
#include "algo.h"
#include "group.h"

static collie_status combine(collie_comm *comm, int partner, int lower, unsigned char *buf,
                             unsigned char *tmp, size_t count, collie_dtype dtype, collie_op op)
{
    size_t bytes = count * collie__dtype_size(dtype);
    collie_status st = collie__sendrecv(comm, partner, buf, bytes, partner, tmp, bytes);
    if (st != COLLIE_OK)
        return st;
    const void *srcs[2] = {lower ? buf : tmp, lower ? tmp : buf};
    collie__reduce(buf, srcs, 2, count, dtype, op, 1, 0);
    return COLLIE_OK;
}

collie_status collie__rd_allreduce(collie_comm *comm, const struct collie__group *g, void *data,
                                   size_t count, collie_dtype dtype, collie_op op, int divisor)
{
    const int n = g->n, me = g->me;
    if (n == 1)
        return collie__average(data, count, dtype, op, divisor);
    unsigned char *buf = data;
    size_t bytes = count * collie__dtype_size(dtype);
    unsigned char *tmp = collie__scratch(comm, COLLIE_SCRATCH_TMP, bytes);
    if (!tmp)
        return comm->failed;
    collie_op step_op = op == COLLIE_AVG ? COLLIE_SUM : op;
    int pof2 = 1;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    const int extra = n - pof2;
    int vme; /* number among the pof2 that double, or -1 while folded away */
    collie_status st = COLLIE_OK;
    if (me < 2 * extra) {
        if (me % 2 == 0) {
            st = collie__xsend(comm, g->rank[me + 1], buf, bytes);
            vme = -1;
        } else {
            st = collie__xrecv(comm, g->rank[me - 1], tmp, bytes);
            const void *srcs[2] = {tmp, buf};
            if (st == COLLIE_OK)
                collie__reduce(buf, srcs, 2, count, dtype, step_op, 1, 0);
            vme = me / 2;
        }
    } else {
        vme = me - extra;
    }
    for (int mask = 1; st == COLLIE_OK && vme >= 0 && mask < pof2; mask <<= 1) {
        int vpartner = vme ^ mask;
        int partner = vpartner < extra ? 2 * vpartner + 1 : vpartner + extra;
        st = combine(comm, g->rank[partner], vme < vpartner, buf, tmp, count, dtype, step_op);
    }
    if (st == COLLIE_OK && me < 2 * extra)
        st = me % 2 ? collie__xsend(comm, g->rank[me - 1], buf, bytes)
                    : collie__xrecv(comm, g->rank[me + 1], buf, bytes);
    return st == COLLIE_OK ? collie__average(buf, count, dtype, op, divisor) : st;
}

collie_status collie__allreduce_rd(collie_comm *comm, const struct collie__op *op)
{
    struct collie__group g = collie__group_all(comm);
    if (op->sendbuf != op->recvbuf)
        memcpy(op->recvbuf, op->sendbuf, op->count * op->elem_size);
    return collie__rd_allreduce(comm, &g, op->recvbuf, op->count, op->dtype, op->op, comm->size);
}

/* Reduce for small messages: the allreduce, kept by the root only. */
collie_status collie__reduce_rd(collie_comm *comm, const struct collie__op *op)
{
    struct collie__group g = collie__group_all(comm);
    unsigned char *work = collie__reduce_work(comm, op);
    if (!work)
        return comm->failed;
    return collie__rd_allreduce(comm, &g, work, op->count, op->dtype, op->op, comm->size);
}
