/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allreduce_loop.c - time per float32 sum allreduce, from a plain loop over
 * the public API (the full benchmark is `collie bench`, when it exists).
 *
 *     collie run -n 8 ./build/examples/allreduce_loop [BYTES...]
 *
 * For each size: a warm-up, then 11 timed batches; a batch's time is the
 * slowest rank's (an allreduce of MAX over the ranks), and the line shows
 * the median batch and the spread (min..max) in microseconds per operation.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "collie.h"

#define BATCHES 11

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void check(collie_comm *comm, collie_status st)
{
    if (st != COLLIE_OK) {
        fprintf(stderr, "allreduce_loop: %s\n  %s\n", collie_strerror(st), collie_last_error(comm));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    static const size_t defaults[] = {8, 65536, 1 << 20, 64 << 20};
    collie_comm *comm;
    check(NULL, collie_init(&comm));
    int rank = collie_rank(comm), nsizes = argc > 1 ? argc - 1 : 4;
    if (rank == 0)
        printf("%12s %10s %12s %12s %12s\n", "bytes", "iters", "median_us", "min_us", "max_us");
    for (int s = 0; s < nsizes; s++) {
        size_t bytes = argc > 1 ? strtoull(argv[s + 1], NULL, 10) : defaults[s];
        size_t count = bytes / sizeof(float);
        float *buf = calloc(count ? count : 1, sizeof *buf);
        int iters = (int)(((size_t)32 << 20) / (bytes ? bytes : 1));
        iters = iters < 3 ? 3 : iters > 2000 ? 2000 : iters;
        double t[BATCHES];
        for (int i = 0; i < iters; i++) /* warm-up: page faults, caches */
            check(comm, collie_allreduce(comm, buf, buf, count, COLLIE_FLOAT32, COLLIE_SUM));
        for (int b = 0; b < BATCHES; b++) {
            check(comm, collie_barrier(comm));
            double t0 = seconds();
            for (int i = 0; i < iters; i++)
                check(comm, collie_allreduce(comm, buf, buf, count, COLLIE_FLOAT32, COLLIE_SUM));
            double mine = (seconds() - t0) / iters;
            check(comm, collie_allreduce(comm, &mine, &t[b], 1, COLLIE_FLOAT64, COLLIE_MAX));
        }
        qsort(t, BATCHES, sizeof t[0], by_value);
        if (rank == 0)
            printf("%12zu %10d %12.2f %12.2f %12.2f\n", bytes, iters, t[BATCHES / 2] * 1e6,
                   t[0] * 1e6, t[BATCHES - 1] * 1e6);
        free(buf);
    }
    collie_finalize(comm);
    return 0;
}
