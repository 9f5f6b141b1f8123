/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring.c - the ring: reduce-scatter then allgather around the members of a
 * group, each step sending one block to the next member while receiving one
 * from the previous.  Every member sends 2 (n-1)/n of the data, which no
 * algorithm beats for large messages, in 2 (n-1) latencies, which is why
 * small messages go elsewhere.
 *
 * Blocks: the data splits into n blocks (block i: collie__seg(count, i, n) for
 * allreduce; count elements each for reduce_scatter/allgather).  In the
 * reduce-scatter, member me sends block me-s-1 and receives block me-s-2 at
 * step s, so that it ends holding block me fully reduced; in the allgather it
 * sends block me-s and receives block me-s-1.  Each block is reduced by
 * exactly one member, in ring order, and then copied: every member ends with
 * the same bits.
 */
#include "../reduce/reduce.h"
#include "../transport/xfer.h"
#include "algo.h"
#include "cost_terms.h"
#include "group.h"

struct blocks {
    size_t count; /* allreduce: total elements split by collie__seg; else: elements per block */
    int even;     /* blocks of `count` elements each */
    size_t es;
};

static size_t block_lo(const struct blocks *b, int i, int n)
{
    return b->even ? b->count * (size_t)i : collie__seg(b->count, i, n);
}

static size_t block_len(const struct blocks *b, int i, int n)
{
    return b->even ? b->count : collie__seg(b->count, i + 1, n) - collie__seg(b->count, i, n);
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

/*
 * Member g->me ends with block me of in reduced over the group in its buf
 * (op; COLLIE_AVG divided by `divisor`); in may be buf.
 */
static collie_status reduce_scatter(collie_comm *comm, const struct collie__group *g,
                                    const unsigned char *in, unsigned char *buf,
                                    const struct blocks *b, collie_dtype dtype, collie_op op,
                                    int divisor)
{
    const int n = g->n, me = g->me;
    const int next = g->rank[mod(me + 1, n)], prev = g->rank[mod(me - 1, n)];
    collie_op step_op = op == COLLIE_AVG ? COLLIE_SUM : op;
    for (int s = 0; s < n - 1; s++) {
        /* the block sent was combined in the step before; the first comes from in */
        int out = mod(me - s - 1, n), got = mod(me - s - 2, n);
        const unsigned char *from = s ? buf : in;
        size_t got_at = block_lo(b, got, n) * b->es;
        collie_status st = collie__exchange_reduce(
            comm, next, from + block_lo(b, out, n) * b->es, block_len(b, out, n) * b->es, prev,
            buf + got_at, in + got_at, block_len(b, got, n), dtype, step_op, 0);
        if (st != COLLIE_OK)
            return st;
    }
    return collie__average(buf + block_lo(b, me, n) * b->es, block_len(b, me, n), dtype, op,
                           divisor);
}

/* In place on buf: every member ends with every member's block. */
static collie_status allgather(collie_comm *comm, const struct collie__group *g, unsigned char *buf,
                               const struct blocks *b)
{
    const int n = g->n, me = g->me;
    const int next = g->rank[mod(me + 1, n)], prev = g->rank[mod(me - 1, n)];
    for (int s = 0; s < n - 1; s++) {
        int out = mod(me - s, n), in = mod(me - s - 1, n);
        collie_status st = collie__xfer_sendrecv(
            comm, next, buf + block_lo(b, out, n) * b->es, block_len(b, out, n) * b->es, prev,
            buf + block_lo(b, in, n) * b->es, block_len(b, in, n) * b->es);
        if (st != COLLIE_OK)
            return st;
    }
    return COLLIE_OK;
}

collie_status collie__ring_allreduce(collie_comm *comm, const struct collie__group *g,
                                     const void *in, void *buf, size_t count, collie_dtype dtype,
                                     collie_op op, int divisor)
{
    if (g->n == 1)
        return collie__rd_allreduce(comm, g, in, buf, count, dtype, op, divisor);
    const struct blocks b = {count, 0, collie__dtype_size(dtype)};
    collie_status st = reduce_scatter(comm, g, in, buf, &b, dtype, op, divisor);
    return st == COLLIE_OK ? allgather(comm, g, buf, &b) : st;
}

static collie_status allreduce_ring(collie_comm *comm, const struct collie__op *op)
{
    return collie__allreduce_all(comm, op, collie__ring_allreduce);
}

/* Reduce: the ring's reduce-scatter, then every block to the root. */
static collie_status reduce_ring(collie_comm *comm, const struct collie__op *op)
{
    struct collie__group g = collie__group_all(comm);
    const int n = comm->size, me = comm->rank;
    const struct blocks b = {op->count, 0, op->elem_size};
    unsigned char *work = collie__reduce_work(comm, op);
    if (!work)
        return comm->failed;
    collie_status st = reduce_scatter(comm, &g, work, work, &b, op->dtype, op->op, n);
    if (st != COLLIE_OK)
        return st;
    if (me != op->root)
        return collie__xfer_send(comm, op->root, work + block_lo(&b, me, n) * b.es,
                                 block_len(&b, me, n) * b.es);
    for (int r = 0; r < n && st == COLLIE_OK; r++)
        if (r != me)
            st = collie__xfer_recv(comm, r, work + block_lo(&b, r, n) * b.es,
                                   block_len(&b, r, n) * b.es);
    return st;
}

static collie_status reduce_scatter_ring(collie_comm *comm, const struct collie__op *op)
{
    struct collie__group g = collie__group_all(comm);
    const size_t block = op->count * op->elem_size, n = (size_t)comm->size;
    const struct blocks b = {op->count, 1, op->elem_size};
    unsigned char *work = collie__scratch(comm, COLLIE_SCRATCH_WORK, block * n);
    if (!work)
        return comm->failed;
    collie_status st =
        reduce_scatter(comm, &g, op->sendbuf, work, &b, op->dtype, op->op, comm->size);
    if (st == COLLIE_OK)
        collie__copy(op->recvbuf, work + (size_t)comm->rank * block, block);
    return st;
}

static collie_status allgather_ring(collie_comm *comm, const struct collie__op *op)
{
    struct collie__group g = collie__group_all(comm);
    const size_t block = op->count * op->elem_size;
    unsigned char *mine = (unsigned char *)op->recvbuf + (size_t)comm->rank * block;
    if (op->sendbuf != mine)
        collie__copy(mine, op->sendbuf, block);
    const struct blocks b = {op->count, 1, op->elem_size};
    return allgather(comm, &g, op->recvbuf, &b);
}

/* Flat ring: 2 (n-1) steps; one flow per host boundary carries 2 (n-1)/n of the data. */
static double allreduce_ring_cost(machine *m, double s, int degree)
{
    (void)degree;
    double n = m->ranks;
    return collie__cost_over_links(m, 2 * (n - 1), 2 * (n - 1) / n * s);
}

/* The ring's reduce-scatter, then every block to the root: its link takes (n-L)/n of the data. */
static double reduce_ring_cost(machine *m, double s, int degree)
{
    (void)degree;
    double n = m->ranks;
    return collie__cost_over_links(m, n, ((n - 1) + (n - collie__cost_flows(m))) / n * s);
}

/* Allgather and reduce_scatter rings: n-1 steps; a host boundary carries n-1 blocks. */
static double block_ring_cost(machine *m, double s, int degree)
{
    (void)degree;
    double n = m->ranks;
    return collie__cost_over_links(m, n - 1, (n - 1) * s);
}

const struct collie__algo collie__algo_allreduce_ring = {
    .name = "ring",
    .wire = 3,
    .coll = COLLIE_COLL_ALLREDUCE,
    .scope = COLLIE_SCOPE_ANY,
    .run = allreduce_ring,
    .cost = allreduce_ring_cost,
};

const struct collie__algo collie__algo_reduce_ring = {
    .name = "ring",
    .wire = 3,
    .coll = COLLIE_COLL_REDUCE,
    .scope = COLLIE_SCOPE_ANY,
    .run = reduce_ring,
    .cost = reduce_ring_cost,
};

const struct collie__algo collie__algo_allgather_ring = {
    .name = "ring",
    .wire = 3,
    .coll = COLLIE_COLL_ALLGATHER,
    .scope = COLLIE_SCOPE_ANY,
    .run = allgather_ring,
    .cost = block_ring_cost,
};

const struct collie__algo collie__algo_reduce_scatter_ring = {
    .name = "ring",
    .wire = 3,
    .coll = COLLIE_COLL_REDUCE_SCATTER,
    .scope = COLLIE_SCOPE_ANY,
    .run = reduce_scatter_ring,
    .cost = block_ring_cost,
};
