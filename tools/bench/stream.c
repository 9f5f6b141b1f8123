/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stream.c - this host's memory bandwidth, the way STREAM measures it: copy
 * (a = b: 16 bytes per element) and triad (a = b + s*c: 24 bytes), arrays
 * far larger than the caches, best of several passes, on one thread and on
 * one thread per core.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

#define N ((size_t)32 << 20) /* doubles per array: 256 MiB each */
#define PASSES 6

struct part {
    double *a, *b, *c;
    size_t lo, hi;
    int triad;
};

static void *kernel(void *arg)
{
    struct part *p = arg;
    double *restrict a = p->a, *restrict b = p->b, *restrict c = p->c;
    if (p->triad)
        for (size_t i = p->lo; i < p->hi; i++)
            a[i] = b[i] + 3.0 * c[i];
    else
        for (size_t i = p->lo; i < p->hi; i++)
            a[i] = b[i];
    return NULL;
}

/* Best GB/s of PASSES passes with `threads` threads. */
static double run(double *a, double *b, double *c, int threads, int triad)
{
    pthread_t tid[256];
    struct part parts[256];
    double best = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        double t0 = bench_now_s();
        for (int t = 0; t < threads; t++) {
            parts[t] = (struct part){
                a,    b, c, N * (size_t)t / (size_t)threads, N * (size_t)(t + 1) / (size_t)threads,
                triad};
            if (t)
                pthread_create(&tid[t], NULL, kernel, &parts[t]);
        }
        kernel(&parts[0]);
        for (int t = 1; t < threads; t++)
            pthread_join(tid[t], NULL);
        double gbps = (double)N * (triad ? 24 : 16) / (bench_now_s() - t0) / 1e9;
        best = gbps > best ? gbps : best;
    }
    return best;
}

void bench_stream_measure(struct bench_stream *s)
{
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
    *s = (struct bench_stream){0};
    if (!a || !b || !c)
        goto out;
    for (size_t i = 0; i < N; i++)
        a[i] = 0, b[i] = 1, c[i] = 2;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int all = cores < 1 ? 1 : cores > 256 ? 256 : (int)cores;
    s->copy1 = run(a, b, c, 1, 0);
    s->triad1 = run(a, b, c, 1, 1);
    s->copy_all = run(a, b, c, all, 0);
    s->triad_all = run(a, b, c, all, 1);
out:
    free(a);
    free(b);
    free(c);
}

double bench_floor_us(const struct bench_stream *s, const struct bench_row *r)
{
    if (r->coll != BENCH_ALLREDUCE || r->bytes < ((size_t)16 << 20) || s->copy_all <= 0)
        return 0;
    return 2.0 * r->ranks * (double)r->bytes / (s->copy_all * 1e9) * 1e6;
}
