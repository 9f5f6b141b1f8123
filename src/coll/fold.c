/*
 * fold.c - fitting a group that is not a power of two to the algorithms that
 * need one (recursive doubling, Rabenseifner), as MPICH does: of the first
 * 2r members (r = n - 2^k), each even one hands its data to the odd one above
 * it and sits out; the 2^k that remain run the algorithm under new numbers;
 * then the odd ones hand the result back.
 */
#include "../reduce/reduce.h"
#include "../transport/xfer.h"
#include "algo.h"
#include "group.h"

struct collie__fold collie__fold_plan(const struct collie__group *g)
{
    struct collie__fold f = {.pof2 = 1};
    while (f.pof2 * 2 <= g->n)
        f.pof2 *= 2;
    f.extra = g->n - f.pof2;
    f.vme = g->me < 2 * f.extra ? (g->me % 2 ? g->me / 2 : -1) : g->me - f.extra;
    return f;
}

int collie__fold_member(const struct collie__fold *f, int v)
{
    return v < f->extra ? 2 * v + 1 : v + f->extra;
}

collie_status collie__fold_in(collie_comm *comm, const struct collie__group *g,
                              const struct collie__fold *f, unsigned char *buf, unsigned char *tmp,
                              size_t count, collie_dtype dtype, collie_op op)
{
    const int me = g->me;
    size_t bytes = count * collie__dtype_size(dtype);
    if (me >= 2 * f->extra)
        return COLLIE_OK;
    if (me % 2 == 0)
        return collie__xfer_send(comm, g->rank[me + 1], buf, bytes);
    collie_status st = collie__xfer_recv(comm, g->rank[me - 1], tmp, bytes);
    const void *srcs[2] = {tmp, buf}; /* the lower member's data first */
    if (st == COLLIE_OK)
        collie__reduce(buf, srcs, 2, count, dtype, op, 1, 0);
    return st;
}

collie_status collie__fold_out(collie_comm *comm, const struct collie__group *g,
                               const struct collie__fold *f, unsigned char *buf, size_t bytes)
{
    const int me = g->me;
    if (me >= 2 * f->extra)
        return COLLIE_OK;
    return me % 2 ? collie__xfer_send(comm, g->rank[me - 1], buf, bytes)
                  : collie__xfer_recv(comm, g->rank[me + 1], buf, bytes);
}
