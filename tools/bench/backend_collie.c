/* SPDX-License-Identifier: BSD-3-Clause */
/* backend_collie.c - the bench backend over libcollie. */
#include <stdlib.h>

#include "api/tools_api.h"
#include "bench.h"

_Static_assert(BENCH_HIER_NEIGHBOR == BENCH_NEIGHBOR + 1 &&
                   BENCH_NEIGHBOR_ALLGATHER == BENCH_NEIGHBOR + 2,
               "the neighbour operations index the backend's neighbor[]");

/* What the backend keeps: the communicator, and the neighbour operations' state. */
struct collie_backend {
    collie_comm *comm;
    struct bench_neighbor neighbor[3]; /* by c - BENCH_NEIGHBOR: flat, hierarchical, gather */
    const struct bench_neighbor *last; /* the one that ran last: the check's */
};

static collie_comm *comm_of(struct bench_backend *b)
{
    return ((struct collie_backend *)b->impl)->comm;
}

static double neighbor_expected(const struct bench_backend *b, const struct bench_opts *o, size_t i,
                                size_t count)
{
    const struct collie_backend *cb = b->impl;
    return bench_neighbor_expected(cb->last, o, b->rank, b->size, i, count);
}

static int neighbor_blocks(const struct bench_backend *b)
{
    const struct collie_backend *cb = b->impl;
    return bench_neighbor_blocks(cb->last, b->rank);
}

static int run(struct bench_backend *b, enum bench_coll c, const void *send, void *recv,
               size_t count, collie_dtype t, collie_op op, int root)
{
    collie_comm *comm = comm_of(b);
    collie_status st = COLLIE_ERR_INTERNAL;
    switch (c) {
    case BENCH_ALLREDUCE: st = collie_allreduce(comm, send, recv, count, t, op); break;
    case BENCH_BROADCAST: st = collie_broadcast(comm, recv, count, t, root); break;
    case BENCH_REDUCE: st = collie_reduce(comm, send, recv, count, t, op, root); break;
    case BENCH_ALLGATHER: st = collie_allgather(comm, send, recv, count, t); break;
    case BENCH_REDUCE_SCATTER: st = collie_reduce_scatter(comm, send, recv, count, t, op); break;
    case BENCH_ALLTOALL: st = collie_alltoall(comm, send, recv, count, t); break;
    case BENCH_PINGPONG: {
        int peer = bench_partner(b);
        if (peer < 0)
            st = COLLIE_OK;
        else if (b->rank % 2 == 0 && (st = collie_send(comm, send, count, t, peer)) == COLLIE_OK)
            st = collie_recv(comm, recv, count, t, peer);
        else if (b->rank % 2 && (st = collie_recv(comm, recv, count, t, peer)) == COLLIE_OK)
            st = collie_send(comm, send, count, t, peer);
        break;
    }
    case BENCH_OVERLAP: /* bench_overlap and bench_fusion call iallreduce and run(ALLREDUCE) */
    case BENCH_FUSION:
    case BENCH_NCOLLS: break;
    case BENCH_NEIGHBOR:
    case BENCH_HIER_NEIGHBOR:
    case BENCH_NEIGHBOR_ALLGATHER: {
        struct collie_backend *cb = b->impl;
        struct bench_neighbor *nb = &cb->neighbor[c - BENCH_NEIGHBOR];
        cb->last = nb;
        st = bench_neighbor_run(nb, comm, c, send, recv, count, t);
        break;
    }
    }
    return st == COLLIE_OK ? 0 : -1;
}

static int barrier(struct bench_backend *b) { return collie_barrier(comm_of(b)) ? -1 : 0; }

static int max_double(struct bench_backend *b, double *v)
{
    return collie_allreduce(comm_of(b), v, v, 1, COLLIE_FLOAT64, COLLIE_MAX) ? -1 : 0;
}

static int sum_ll(struct bench_backend *b, long long *v)
{
    return collie_allreduce(comm_of(b), v, v, 1, COLLIE_INT64, COLLIE_SUM) ? -1 : 0;
}

/* The algorithm the library picks for this size: the same selection the call makes. */
static const char *algo(struct bench_backend *b, enum bench_coll c, size_t bytes)
{
    if (c == BENCH_PINGPONG)
        return "send/recv";
    if (c == BENCH_NEIGHBOR || c == BENCH_HIER_NEIGHBOR || c == BENCH_NEIGHBOR_ALLGATHER)
        return ((struct collie_backend *)b->impl)->neighbor[0].topology;
    const char *name = collie__tools_algo(comm_of(b), bench_coll_name(c), bytes);
    return name ? name : "?";
}

static const char *error(struct bench_backend *b) { return collie_last_error(comm_of(b)); }

static int iallreduce(struct bench_backend *b, const void *send, void *recv, size_t count,
                      collie_dtype t, collie_op op, void **h)
{
    return collie_iallreduce(comm_of(b), send, recv, count, t, op, (collie_request **)h) ? -1 : 0;
}

static int wait(struct bench_backend *b, void *h)
{
    (void)b;
    return collie_wait(h) ? -1 : 0;
}

static int group(struct bench_backend *b, int start)
{
    return (start ? collie_group_start(comm_of(b)) : collie_group_end(comm_of(b))) ? -1 : 0;
}

static int supports(struct bench_backend *b, collie_dtype t, collie_op op)
{
    (void)b, (void)t, (void)op;
    return 1;
}

/* --libmem: memory the host's ranks map from each other. */
static void *mem_alloc(struct bench_backend *b, size_t bytes)
{
    (void)b;
    void *p = NULL;
    return collie_mem_alloc(&p, bytes) == COLLIE_OK ? p : NULL;
}

static void mem_free(struct bench_backend *b, void *p)
{
    (void)b;
    collie_mem_free(p);
}

int bench_backend_collie(struct bench_backend *b, const struct bench_opts *o)
{
    struct collie_backend *cb = calloc(1, sizeof *cb);
    if (!cb) {
        fprintf(stderr, "collie bench: no memory\n");
        return -1;
    }
    collie_status st = collie_init(&cb->comm);
    if (st != COLLIE_OK) {
        fprintf(stderr, "collie bench: collie_init: %s\n  %s\n", collie_strerror(st),
                collie_last_error(NULL));
        free(cb);
        return -1;
    }
    collie_comm *comm = cb->comm;
    for (int k = 0; k < 3; k++)
        cb->neighbor[k].topology = o->topology;
    *b = (struct bench_backend){.name = "collie",
                                .rank = collie_rank(comm),
                                .size = collie_size(comm),
                                .local_size = collie_local_size(comm),
                                .impl = cb,
                                .run = run,
                                .barrier = barrier,
                                .max_double = max_double,
                                .sum_ll = sum_ll,
                                .algo = algo,
                                .error = error,
                                .supports = supports,
                                .iallreduce = iallreduce,
                                .wait = wait,
                                .group = group,
                                .neighbor_expected = neighbor_expected,
                                .neighbor_blocks = neighbor_blocks,
                                .mem_alloc = mem_alloc,
                                .mem_free = mem_free};
    return 0;
}

void bench_backend_collie_close(struct bench_backend *b)
{
    struct collie_backend *cb = b->impl;
    collie_finalize(cb->comm);
    for (int k = 0; k < 3; k++)
        bench_neighbor_free(&cb->neighbor[k]);
    free(cb);
}
