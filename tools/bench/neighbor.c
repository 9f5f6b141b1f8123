/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neighbor.c - collie bench's neighbour operations: one step of --topology's
 * schedule per call, and the formula the last step must have given.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define MAX_DEGREE 64 /* the check's in-neighbours; the builders' graphs stay far below */

int bench_neighbor_run(struct bench_neighbor *nb, collie_comm *comm, enum bench_coll c,
                       const void *send, void *recv, size_t count, collie_dtype t)
{
    int hierarchical = c == BENCH_HIER_NEIGHBOR;
    if (!nb->sched) {
        int n = collie_size(comm), nodes = hierarchical ? collie_host_count(comm) : n;
        nb->host_of = malloc((size_t)n * sizeof *nb->host_of); /* the check's, and the schedule's */
        if (!nb->host_of)
            return COLLIE_ERR_NOMEM;
        for (int r = 0; r < n; r++)
            nb->host_of[r] = collie_host_of(comm, r);
        nb->coll = c;
        if (collie_schedule_from_name_hosts(nb->topology, nodes, hierarchical ? NULL : nb->host_of,
                                            &nb->sched) != COLLIE_OK) {
            fprintf(stderr, "collie bench: --topology %s: %s\n", nb->topology,
                    collie_last_error(NULL));
            return COLLIE_ERR_INVALID_ARG;
        }
    }
    nb->last = collie_schedule_step(nb->sched, nb->step++);
    if (c == BENCH_NEIGHBOR_ALLGATHER)
        return collie_neighbor_allgather(comm, nb->last, send, recv, count, t);
    return hierarchical
               ? collie_hierarchical_neighbor_allreduce(comm, nb->last, send, recv, count, t)
               : collie_neighbor_allreduce(comm, nb->last, send, recv, count, t);
}

/* Node j's value of element i: rank j's input, or host j's mean (summed in rank order). */
static double node_value(const struct bench_neighbor *nb, const struct bench_opts *o, int j,
                         int size, size_t i)
{
    if (nb->coll != BENCH_HIER_NEIGHBOR)
        return bench_input(BENCH_NEIGHBOR, o->op, j, size, i);
    int n = 0;
    double sum64 = 0;
    float sum32 = 0;
    for (int r = 0; r < size; r++) {
        if (nb->host_of[r] != j)
            continue;
        double x = bench_input(BENCH_NEIGHBOR, o->op, r, size, i);
        sum64 = n ? sum64 + x : x;
        sum32 = n ? sum32 + (float)x : (float)x;
        n++;
    }
    if (o->dtype == COLLIE_FLOAT64)
        return sum64 / n;
    unsigned char held[8]; /* the mean as the host's dtype holds it */
    bench_encode(o->dtype, held, 0, sum32 / (float)n);
    return bench_decode(o->dtype, held, 0);
}

int bench_neighbor_blocks(const struct bench_neighbor *nb, int rank)
{
    int me = nb->coll == BENCH_HIER_NEIGHBOR ? nb->host_of[rank] : rank;
    int n = collie_topology_in(nb->last, me, NULL, NULL, 0);
    return n < MAX_DEGREE ? n : MAX_DEGREE;
}

double bench_neighbor_expected(const struct bench_neighbor *nb, const struct bench_opts *o,
                               int rank, int size, size_t i, size_t count)
{
    int me = nb->coll == BENCH_HIER_NEIGHBOR ? nb->host_of[rank] : rank, from[MAX_DEGREE];
    double w[MAX_DEGREE];
    int n = collie_topology_in(nb->last, me, from, w, MAX_DEGREE);
    n = n < MAX_DEGREE ? n : MAX_DEGREE;
    if (nb->coll == BENCH_NEIGHBOR_ALLGATHER) /* block i / count: from[i / count]'s data */
        return node_value(nb, o, from[i / count], size, i % count);
    double self = collie_topology_self_weight(nb->last, me);
    if (o->dtype == COLLIE_FLOAT64) {
        double acc = self * node_value(nb, o, me, size, i);
        for (int k = 0; k < n; k++)
            acc += w[k] * node_value(nb, o, from[k], size, i);
        return acc;
    }
    float acc = (float)self * (float)node_value(nb, o, me, size, i);
    for (int k = 0; k < n; k++)
        acc += (float)w[k] * (float)node_value(nb, o, from[k], size, i);
    return acc;
}

void bench_neighbor_free(struct bench_neighbor *nb)
{
    collie_schedule_free(nb->sched);
    free(nb->host_of);
}
