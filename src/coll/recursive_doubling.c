/*
 * recursive_doubling.c - allreduce for small messages: log2(n) steps, each
 * exchanging the whole buffer with the member whose number differs in one
 * bit, so the latency is log2(n) messages instead of the ring's 2 (n-1).
 *
 * A group that is not a power of two first folds (fold.c).
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
    collie_status st = collie__xfer_sendrecv(comm, partner, buf, bytes, partner, tmp, bytes);
    if (st != COLLIE_OK)
        return st;
    const void *srcs[2] = {lower ? buf : tmp, lower ? tmp : buf};
    collie__reduce(buf, srcs, 2, count, dtype, op, 1, 0);
    return COLLIE_OK;
}

collie_status collie__rd_allreduce(collie_comm *comm, const struct collie__group *g, void *data,
                                   size_t count, collie_dtype dtype, collie_op op, int divisor)
{
    const int n = g->n;
    if (n == 1)
        return collie__average(data, count, dtype, op, divisor);
    unsigned char *buf = data;
    size_t bytes = count * collie__dtype_size(dtype);
    unsigned char *tmp = collie__scratch(comm, COLLIE_SCRATCH_TMP, bytes);
    if (!tmp)
        return comm->failed;
    collie_op step_op = op == COLLIE_AVG ? COLLIE_SUM : op;
    const struct collie__fold f = collie__fold_plan(g);
    collie_status st = collie__fold_in(comm, g, &f, buf, tmp, count, dtype, step_op);
    for (int mask = 1; st == COLLIE_OK && f.vme >= 0 && mask < f.pof2; mask <<= 1) {
        int vpartner = f.vme ^ mask;
        st = combine(comm, g->rank[collie__fold_member(&f, vpartner)], f.vme < vpartner, buf, tmp,
                     count, dtype, step_op);
    }
    if (st == COLLIE_OK)
        st = collie__fold_out(comm, g, &f, buf, bytes);
    return st == COLLIE_OK ? collie__average(buf, count, dtype, op, divisor) : st;
}

collie_status collie__allreduce_rd(collie_comm *comm, const struct collie__op *op)
{
    return collie__allreduce_all(comm, op, collie__rd_allreduce);
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
