/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allreduce_demo.c - the first thing to run: every rank contributes its rank
 * number, allreduce sums them, and each rank prints what it got.
 *
 *     collie run -n 4 ./build/examples/allreduce_demo
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "collie.h"

#define COUNT (1 << 20)

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    collie_comm *comm;
    collie_status st = collie_init(&comm);
    if (st != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n  %s\n", collie_strerror(st), collie_last_error(NULL));
        return 1;
    }
    int rank = collie_rank(comm), size = collie_size(comm);
    float *data = malloc(COUNT * sizeof *data);
    for (int i = 0; i < COUNT; i++)
        data[i] = (float)rank;

    double t0 = seconds();
    st = collie_allreduce(comm, data, data, COUNT, COLLIE_FLOAT32, COLLIE_SUM);
    double t1 = seconds();
    if (st != COLLIE_OK) {
        fprintf(stderr, "rank %d: allreduce failed: %s\n  %s\n", rank, collie_strerror(st),
                collie_last_error(comm));
        return 1;
    }
    float expect = (float)size * (float)(size - 1) / 2;
    int wrong = 0;
    for (int i = 0; i < COUNT; i++)
        wrong += data[i] != expect;
    printf("rank %d of %d (local %d of %d): allreduce(sum) of %d floats -> %g in every element "
           "(expected %g, %d wrong), %.1f ms\n",
           rank, size, collie_local_rank(comm), collie_local_size(comm), COUNT, data[0], expect,
           wrong, (t1 - t0) * 1e3);
    free(data);
    collie_finalize(comm);
    return wrong != 0;
}
