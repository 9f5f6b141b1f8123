/* SPDX-License-Identifier: BSD-3-Clause */
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
                              const struct collie__fold *f, const unsigned char **in,
                              unsigned char *buf, size_t count, collie_dtype dtype, collie_op op)
{
    const int me = g->me;
    size_t bytes = count * collie__dtype_size(dtype);
    if (me >= 2 * f->extra)
        return COLLIE_OK;
    if (me % 2 == 0) /* sent in the pieces its partner receives them in */
        return collie__exchange_reduce(comm, g->rank[me + 1], *in, bytes, -1, NULL, NULL, 0, dtype,
                                       op, 1);
    /* the lower member's data first */
    collie_status st =
        collie__exchange_reduce(comm, -1, NULL, 0, g->rank[me - 1], buf, *in, count, dtype, op, 1);
    *in = buf;
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
