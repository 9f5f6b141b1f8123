/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fusion.c - `collie bench fusion`: a training step's gradient allreduces,
 * one call per tensor, against the same calls fused (collie_group_start/end,
 * COLLIE_FUSION_BYTES).  The tensors: the 62 of a ResNet-18 (11.7 M floats,
 * 44.6 MB in float32), or --fusion K tensors of -b bytes each.  Each row is
 * one step: every tensor allreduced, the results checked; MPI's row calls
 * MPI_Allreduce once per tensor (it cannot fuse).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "resnet18.h"

struct tensors {
    int n;
    size_t *count, *off, total; /* elements */
};

static int tensors_of(const struct bench_opts *o, struct tensors *t)
{
    t->n = o->fusion ? o->fusion : RESNET18_TENSORS;
    t->count = malloc(sizeof(size_t) * (unsigned)t->n);
    t->off = malloc(sizeof(size_t) * (unsigned)t->n);
    if (!t->count || !t->off)
        return -1;
    size_t each = o->min_bytes / bench_dtype_size(o->dtype);
    t->total = 0;
    for (int i = 0; i < t->n; i++) {
        t->count[i] = o->fusion ? (each ? each : 1) : resnet18_tensors[i];
        t->off[i] = t->total;
        t->total += t->count[i];
    }
    return 0;
}

/* One step: every tensor allreduced, one call each or fused. */
static int step(struct bench_backend *b, const struct bench_opts *o, const struct tensors *t,
                const unsigned char *send, unsigned char *recv, int fused, void **h)
{
    size_t es = bench_dtype_size(o->dtype);
    if (!fused) {
        for (int i = 0; i < t->n; i++)
            if (b->run(b, BENCH_ALLREDUCE, send + t->off[i] * es, recv + t->off[i] * es,
                       t->count[i], o->dtype, o->op, 0))
                return -1;
        return 0;
    }
    if (b->group(b, 1))
        return -1;
    for (int i = 0; i < t->n; i++)
        if (b->iallreduce(b, send + t->off[i] * es, recv + t->off[i] * es, t->count[i], o->dtype,
                          o->op, &h[i]))
            return -1;
    if (b->group(b, 0))
        return -1;
    for (int i = 0; i < t->n; i++)
        if (b->wait(b, h[i]))
            return -1;
    return 0;
}

static int measure(struct bench_backend *b, const struct bench_opts *o, const struct tensors *t,
                   const unsigned char *send, unsigned char *recv, int fused, void **h,
                   struct bench_row *row)
{
    size_t es = bench_dtype_size(o->dtype);
    memset(recv, 0, t->total * es);
    double t0 = bench_now_s(); /* the first step also faults pages in: it sets the count only */
    if (step(b, o, t, send, recv, fused, h))
        return -1;
    double est = bench_now_s() - t0;
    if (b->max_double(b, &est))
        return -1;
    int iters = bench_iters_for(o, est);
    double *times = malloc(sizeof(double) * (size_t)iters), mean = 0;
    if (!times || b->barrier(b))
        return -1;
    double prev = bench_now_s();
    for (int i = 0; i < iters; i++) {
        if (step(b, o, t, send, recv, fused, h))
            return -1;
        double now = bench_now_s();
        times[i] = now - prev;
        mean += times[i] / iters;
        prev = now;
    }
    double median = bench_median(times, iters);
    free(times);
    long long wrong = 0;
    unsigned char want[8];
    for (size_t i = 0; o->check && i < t->total; i++) {
        bench_encode(o->dtype, want, 0, bench_reduced(o->dtype, o->op, b->size, i));
        wrong += memcmp(recv + i * es, want, es) != 0;
    }
    if (!o->check)
        wrong = -1;
    else if (b->sum_ll(b, &wrong))
        return -1;
    if (b->max_double(b, &mean) || b->max_double(b, &median))
        return -1;
    row->mean_us = mean * 1e6;
    row->median_us = median * 1e6;
    row->wrong = wrong;
    snprintf(row->backend, sizeof row->backend, "%s", fused ? "fused" : b->name);
    snprintf(row->algo, sizeof row->algo, fused ? "fused" : "one call each");
    return 0;
}

int bench_fusion(struct bench_backend *b, const struct bench_opts *o, int round,
                 struct bench_rows *rows)
{
    struct tensors t;
    size_t es = bench_dtype_size(o->dtype);
    if (tensors_of(o, &t))
        return -1;
    unsigned char *send = malloc(t.total * es + 64), *recv = malloc(t.total * es + 64);
    void **h = calloc((unsigned)t.n, sizeof *h); /* 1 .. 100000 tensors */
    if (!send || !recv || !h) {
        fprintf(stderr, "bench fusion: no memory for %zu elements\n", t.total);
        return -1;
    }
    for (size_t i = 0; i < t.total; i++)
        bench_encode(o->dtype, send, i, bench_input(BENCH_ALLREDUCE, o->op, b->rank, b->size, i));
    int rc = 0;
    for (int fused = 0; fused <= (b->group != NULL) && rc == 0; fused++) {
        struct bench_row row = {.coll = BENCH_FUSION,
                                .round = round,
                                .ranks = b->size,
                                .local_size = b->local_size,
                                .bytes = t.total * es,
                                .count = (size_t)t.n,
                                .dtype = o->dtype,
                                .op = o->op};
        rc = measure(b, o, &t, send, recv, fused, h, &row);
        if (rc)
            fprintf(stderr, "%s bench fusion, rank %d: %s\n", b->name, b->rank, b->error(b));
        else if (b->rank == 0)
            bench_rows_add(rows, &row);
    }
    free(send), free(recv), free(h), free(t.count), free(t.off);
    return rc;
}
