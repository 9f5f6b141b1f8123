/* SPDX-License-Identifier: BSD-3-Clause */
/* op.c - names of collectives, dtypes and ops, and descriptor formatting. */
#include "op.h"

#include <stdio.h>

static const char *const coll_names[COLLIE_COLL_COUNT] = {
    [COLLIE_COLL_ALLREDUCE] = "allreduce",
    [COLLIE_COLL_BROADCAST] = "broadcast",
    [COLLIE_COLL_REDUCE] = "reduce",
    [COLLIE_COLL_ALLGATHER] = "allgather",
    [COLLIE_COLL_REDUCE_SCATTER] = "reduce_scatter",
    [COLLIE_COLL_ALLTOALL] = "alltoall",
    [COLLIE_COLL_BARRIER] = "barrier",
    [COLLIE_COLL_SEND] = "send",
    [COLLIE_COLL_RECV] = "recv",
    [COLLIE_COLL_NEIGHBOR_ALLREDUCE] = "neighbor_allreduce",
    [COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE] = "hierarchical_neighbor_allreduce",
    [COLLIE_COLL_NEIGHBOR_ALLGATHER] = "neighbor_allgather",
    [COLLIE_COLL_WIN_GET] = "win_get",
};

static const struct {
    const char *name;
    size_t size;
} dtypes[] = {
    [COLLIE_FLOAT32] = {"float32", 4}, [COLLIE_FLOAT64] = {"float64", 8},
    [COLLIE_FLOAT16] = {"float16", 2}, [COLLIE_BFLOAT16] = {"bfloat16", 2},
    [COLLIE_INT8] = {"int8", 1},       [COLLIE_UINT8] = {"uint8", 1},
    [COLLIE_INT32] = {"int32", 4},     [COLLIE_INT64] = {"int64", 8},
};
#define N_DTYPES (int)(sizeof dtypes / sizeof dtypes[0])
_Static_assert(N_DTYPES == COLLIE__DTYPE_COUNT,
               "a collie_dtype without a row, or op.h's count stale");

static const char *const op_names[] = {
    [COLLIE_SUM] = "sum", [COLLIE_PROD] = "prod", [COLLIE_MIN] = "min",
    [COLLIE_MAX] = "max", [COLLIE_AVG] = "avg",
};
#define N_OPS (int)(sizeof op_names / sizeof op_names[0])

static const char *(*_Atomic algo_namer)(int algo);

void collie__algo_set_namer(const char *(*namer)(int algo)) { algo_namer = namer; }

const char *collie__algo_name(int algo)
{
    static _Thread_local char buf[32];
    const char *(*namer)(int) = algo_namer;
    const char *name = algo == COLLIE__ALGO_NONE ? "none" : namer ? namer(algo) : NULL;
    if (name)
        return name;
    snprintf(buf, sizeof buf, "algo(%d)", algo);
    return buf;
}

int collie__desc_equal(const struct collie__op_desc *a, const struct collie__op_desc *b)
{
    return a->seq == b->seq && a->coll == b->coll && a->dtype == b->dtype && a->op == b->op &&
           a->algo == b->algo && a->root == b->root && a->count == b->count;
}

const char *collie__coll_name(enum collie__coll coll)
{
    return (unsigned)coll < COLLIE_COLL_COUNT ? coll_names[coll] : "collective(?)";
}

const char *collie__dtype_name(int dtype)
{
    static _Thread_local char buf[32];
    if (dtype >= 0 && dtype < N_DTYPES)
        return dtypes[dtype].name;
    snprintf(buf, sizeof buf, "dtype(%d)", dtype);
    return buf;
}

const char *collie__op_name(int op)
{
    static _Thread_local char buf[32];
    if (op >= 0 && op < N_OPS)
        return op_names[op];
    snprintf(buf, sizeof buf, "op(%d)", op);
    return buf;
}

size_t collie__dtype_size(int dtype)
{
    return dtype >= 0 && dtype < N_DTYPES ? dtypes[dtype].size : 0;
}

void collie__op_describe(const struct collie__op_desc *d, char *buf, size_t len)
{
    const char *coll = collie__coll_name((enum collie__coll)d->coll);
    const char *dt = collie__dtype_name(d->dtype);
    switch (d->coll) {
    case COLLIE_COLL_BARRIER: snprintf(buf, len, "%s()", coll); break;
    case COLLIE_COLL_ALLREDUCE:
    case COLLIE_COLL_REDUCE_SCATTER:
        snprintf(buf, len, "%s(count=%llu, %s, %s)", coll, (unsigned long long)d->count, dt,
                 collie__op_name(d->op));
        break;
    case COLLIE_COLL_REDUCE:
        snprintf(buf, len, "%s(count=%llu, %s, %s, root=%d)", coll, (unsigned long long)d->count,
                 dt, collie__op_name(d->op), (int)d->root);
        break;
    case COLLIE_COLL_BROADCAST:
        snprintf(buf, len, "%s(count=%llu, %s, root=%d)", coll, (unsigned long long)d->count, dt,
                 (int)d->root);
        break;
    case COLLIE_COLL_NEIGHBOR_ALLREDUCE:
    case COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE:
    case COLLIE_COLL_NEIGHBOR_ALLGATHER:
        /* root: the graph's fingerprint (0: lists given per call); op: the wire dtype */
        snprintf(buf, len, "%s(count=%llu, %s, wire %s, graph %08x)", coll,
                 (unsigned long long)d->count, dt, collie__dtype_name(d->op), (unsigned)d->root);
        break;
    case COLLIE_COLL_SEND:
    case COLLIE_COLL_RECV:
        snprintf(buf, len, "%s(count=%llu, %s, peer=%d)", coll, (unsigned long long)d->count, dt,
                 (int)d->root);
        break;
    default: snprintf(buf, len, "%s(count=%llu, %s)", coll, (unsigned long long)d->count, dt);
    }
}
