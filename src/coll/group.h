/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * group.h - the ranks a point-to-point algorithm runs among: every rank
 * (flat algorithms), or one rank per host (the cross-host step of
 * hierarchical).  Members are numbered 0..n-1; member i is global rank
 * rank[i].
 */
#ifndef COLLIE_GROUP_H
#define COLLIE_GROUP_H

#include <string.h>

#include "../core/comm.h"

struct collie__group {
    int n, me;
    const int *rank;
};

/* Every rank of the communicator, in rank order. */
static inline struct collie__group collie__group_all(const collie_comm *comm)
{
    return (struct collie__group){comm->size, comm->rank, comm->hosts.identity};
}

/* An allreduce among a group, of in into buf (ring, recursive doubling, Rabenseifner). */
typedef collie_status (*collie__group_allreduce_fn)(collie_comm *comm,
                                                    const struct collie__group *g, const void *in,
                                                    void *buf, size_t count, collie_dtype dtype,
                                                    collie_op op, int divisor);

/* The allreduce collective over every rank with a group algorithm, in recvbuf. */
static inline collie_status collie__allreduce_all(collie_comm *comm, const struct collie__op *op,
                                                  collie__group_allreduce_fn fn)
{
    struct collie__group g = collie__group_all(comm);
    return fn(comm, &g, op->sendbuf, op->recvbuf, op->count, op->dtype, op->op, comm->size);
}

/* A group folded to a power of two (fold.c). */
struct collie__fold {
    int pof2, extra; /* 2^k members remain; the first 2 * extra fold pairwise */
    int vme;         /* this member's number among the 2^k, or -1 while folded away */
};

struct collie__fold collie__fold_plan(const struct collie__group *g);
/* The group member that is number v among the 2^k. */
int collie__fold_member(const struct collie__fold *f, int v);
/*
 * Before: even members of the folded pairs hand in to the odd ones, which
 * combine it with their in into buf (in may be buf).  Returns in the source
 * of this member's next step: buf where it combined, else in.
 */
collie_status collie__fold_in(collie_comm *comm, const struct collie__group *g,
                              const struct collie__fold *f, const unsigned char **in,
                              unsigned char *buf, size_t count, collie_dtype dtype, collie_op op);
/* After: the odd members hand the result back. */
collie_status collie__fold_out(collie_comm *comm, const struct collie__group *g,
                               const struct collie__fold *f, unsigned char *buf, size_t bytes);

#endif
