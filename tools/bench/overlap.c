/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * overlap.c - `collie bench overlap`: how much of an allreduce hides behind
 * computation.  For each size, on every rank: T_comm, the non-blocking
 * allreduce issued and waited at once; T_comp, a computation sized to take
 * about T_comm; T_both, the allreduce issued, the computation run, then the
 * wait.  overlap = (T_comm + T_comp - T_both) / min(T_comm, T_comp): 1 when
 * the shorter one hides entirely, 0 when they run one after the other.
 *
 * comm_cpu: the CPU time the process spent per allreduce alone (all its
 * threads, system calls included): what the allreduce takes from a
 * computation sharing its CPUs, the floor of T_both - T_comp where there is
 * no spare core (as on a host that emulates several).
 *
 * The computation is a GEMM's inner loop without its memory traffic: chains
 * of multiply-adds on registers.  It needs the CPU and nothing else, so what
 * it measures is whether the library moves data while the caller computes,
 * not how the two share memory bandwidth.  The bench ranks link no BLAS.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define CALIBRATE_ROUNDS (1L << 22)

static volatile double sink;

/* n rounds of 8 independent multiply-add chains. */
static void compute(long n)
{
    double a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (long i = 0; i < n; i++)
        for (int k = 0; k < 8; k++)
            a[k] = a[k] * 0.999999 + 1e-6;
    sink = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

static double seconds_per_round(void)
{
    compute(CALIBRATE_ROUNDS / 8); /* wakes the core's clock up */
    double t0 = bench_now_s();
    compute(CALIBRATE_ROUNDS);
    return (bench_now_s() - t0) / CALIBRATE_ROUNDS;
}

enum phase { COMM, COMP, BOTH };

static double cpu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Mean seconds of one phase over iters, the slowest rank's; -1 on failure.
 * *cpu (if given): the CPU time the process spent per iteration, every
 * thread and system call included, the busiest rank's.
 */
static double timed(struct bench_backend *b, enum phase p, const void *send, void *recv,
                    size_t count, const struct bench_opts *o, long rounds, int iters, double *cpu)
{
    if (b->barrier(b))
        return -1;
    double c0 = cpu_now_s(), t0 = bench_now_s();
    for (int i = 0; i < iters; i++) {
        void *h = NULL;
        if (p != COMP && b->iallreduce(b, send, recv, count, o->dtype, o->op, &h))
            return -1;
        if (p != COMM)
            compute(rounds);
        if (p != COMP && b->wait(b, h))
            return -1;
    }
    double mean = (bench_now_s() - t0) / iters;
    if (cpu) {
        *cpu = (cpu_now_s() - c0) / iters;
        if (b->max_double(b, cpu))
            return -1;
    }
    return b->max_double(b, &mean) ? -1 : mean;
}

static long long count_wrong(struct bench_backend *b, const struct bench_opts *o,
                             const unsigned char *recv, size_t count)
{
    size_t es = bench_dtype_size(o->dtype);
    unsigned char want[8];
    long long wrong = 0;
    for (size_t i = 0; i < count; i++) {
        bench_encode(o->dtype, want, 0, bench_reduced(o->dtype, o->op, b->size, i));
        wrong += memcmp(recv + i * es, want, es) != 0;
    }
    return b->sum_ll(b, &wrong) ? -1 : wrong;
}

int bench_overlap(struct bench_backend *b, const struct bench_opts *o, int round,
                  struct bench_rows *rows)
{
    size_t *sizes, n = bench_sizes(o, BENCH_ALLREDUCE, b->size, &sizes);
    size_t es = bench_dtype_size(o->dtype), max = n ? sizes[n - 1] : 0;
    unsigned char *send = malloc(max + 64), *recv = malloc(max + 64);
    if (!send || !recv) {
        fprintf(stderr, "bench overlap: no memory for %zu bytes\n", max);
        return -1;
    }
    memset(recv, 0, max + 64);
    double per_round = seconds_per_round();
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        size_t count = sizes[k] / es;
        for (size_t i = 0; i < count; i++)
            bench_encode(o->dtype, send, i,
                         bench_input(BENCH_ALLREDUCE, o->op, b->rank, b->size, i));
        /* One untimed operation, then as many as fill --min-time (3 to --iters). */
        double est = timed(b, COMM, send, recv, count, o, 0, 1, NULL), cpu = 0;
        int iters = bench_iters_for(o, est);
        double comm = timed(b, COMM, send, recv, count, o, 0, iters, &cpu);
        long rounds = comm > 0 ? (long)(comm / per_round) : 0;
        double comp = comm > 0 ? timed(b, COMP, send, recv, count, o, rounds, iters, NULL) : -1;
        double both = comp > 0 ? timed(b, BOTH, send, recv, count, o, rounds, iters, NULL) : -1;
        if (comm < 0 || comp < 0 || both < 0) {
            fprintf(stderr, "%s bench overlap, rank %d: %s\n", b->name, b->rank, b->error(b));
            rc = -1;
            break;
        }
        long long wrong = o->check ? count_wrong(b, o, recv, count) : -1;
        if (b->rank != 0)
            continue;
        struct bench_row row = {.coll = BENCH_OVERLAP,
                                .round = round,
                                .ranks = b->size,
                                .local_size = b->local_size,
                                .bytes = sizes[k],
                                .count = count,
                                .dtype = o->dtype,
                                .op = o->op,
                                .mean_us = both * 1e6,
                                .median_us = both * 1e6,
                                .comm_us = comm * 1e6,
                                .comp_us = comp * 1e6,
                                .comm_cpu_us = cpu * 1e6,
                                .wrong = wrong};
        snprintf(row.backend, sizeof row.backend, "%s", b->name);
        snprintf(row.algo, sizeof row.algo, "%s", b->algo(b, BENCH_ALLREDUCE, sizes[k]));
        bench_rows_add(rows, &row);
    }
    free(send), free(recv), free(sizes);
    return rc;
}
