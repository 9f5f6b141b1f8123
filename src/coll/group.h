/*
 * group.h - the ranks a point-to-point algorithm runs among: every rank
 * (flat algorithms), or one rank per host (the cross-host step of
 * hierarchical).  Members are numbered 0..n-1; member i is global rank
 * rank[i].
 */
#ifndef COLLIE_GROUP_H
#define COLLIE_GROUP_H

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

/* Slice i of m elements split n ways starts here. */
static inline size_t collie__seg(size_t m, int i, int n)
{
    return (size_t)((unsigned __int128)m * (unsigned)i / (unsigned)n);
}

#endif
