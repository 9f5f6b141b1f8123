/* decentral.c - decentralized training's averaging steps (decentral.h). */
#include "decentral.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int decentral_init(struct decentral *d, collie_comm *comm, enum train_sync sync,
                   const char *topology, int awc, int global_every, size_t nparams)
{
    *d = (struct decentral){.comm = comm,
                            .hierarchical = sync == TRAIN_SYNC_HIER_NEIGHBOR,
                            .awc = awc,
                            .global_every = global_every};
    int nodes = d->hierarchical ? collie_host_count(comm) : collie_size(comm);
    if (collie_schedule_from_name(topology, nodes, &d->sched) != COLLIE_OK) {
        if (collie_rank(comm) == 0)
            fprintf(stderr, "collie train: --topology %s: %s\n", topology, collie_last_error(NULL));
        return -1;
    }
    d->mix = awc ? malloc(nparams * sizeof *d->mix) : NULL;
    d->mean = malloc(nparams * sizeof *d->mean);
    d->keep = malloc(nparams * sizeof *d->keep);
    if ((awc && !d->mix) || !d->mean || !d->keep) {
        fprintf(stderr, "collie train: out of memory\n");
        decentral_free(d);
        return -1;
    }
    return 0;
}

void decentral_free(struct decentral *d)
{
    collie_schedule_free(d->sched);
    free(d->mix);
    free(d->mean);
    free(d->keep);
    d->sched = NULL, d->mix = d->mean = d->keep = NULL;
}

/* One averaging step of the schedule on x, blocking or not (*req). */
static collie_status average(struct decentral *d, float *x, size_t n, collie_request **req)
{
    const collie_topology *t = collie_schedule_step(d->sched, d->step++);
    if (d->hierarchical)
        return req ? collie_ihierarchical_neighbor_allreduce(d->comm, t, x, x, n, COLLIE_FLOAT32,
                                                             req)
                   : collie_hierarchical_neighbor_allreduce(d->comm, t, x, x, n, COLLIE_FLOAT32);
    return req ? collie_ineighbor_allreduce(d->comm, t, x, x, n, COLLIE_FLOAT32, req)
               : collie_neighbor_allreduce(d->comm, t, x, x, n, COLLIE_FLOAT32);
}

int decentral_before(struct decentral *d, const float *x, size_t n)
{
    if (!d->awc)
        return 0;
    memcpy(d->mix, x, n * sizeof *x);
    return train_check(d->comm, average(d, d->mix, n, &d->req), "neighbour averaging");
}

int decentral_combine(struct decentral *d, float *x, size_t n)
{
    if (!d->awc)
        return 0;
    collie_status st = collie_wait(d->req);
    d->req = NULL;
    if (train_check(d->comm, st, "neighbour averaging"))
        return -1;
    memcpy(x, d->mix, n * sizeof *x);
    return 0;
}

int decentral_after(struct decentral *d, float *x, size_t n)
{
    if (!d->awc && train_check(d->comm, average(d, x, n, NULL), "neighbour averaging"))
        return -1;
    if (d->global_every > 0 && d->step % d->global_every == 0)
        return train_check(d->comm, collie_allreduce(d->comm, x, x, n, COLLIE_FLOAT32, COLLIE_AVG),
                           "global averaging");
    return 0;
}

double decentral_to_mean(struct decentral *d, float *x, size_t n)
{
    if (train_check(d->comm, collie_allreduce(d->comm, x, d->mean, n, COLLIE_FLOAT32, COLLIE_AVG),
                    "model averaging"))
        return -1;
    double sq = 0;
    for (size_t i = 0; i < n; i++)
        sq += ((double)x[i] - d->mean[i]) * ((double)x[i] - d->mean[i]);
    if (train_check(d->comm, collie_allreduce(d->comm, &sq, &sq, 1, COLLIE_FLOAT64, COLLIE_SUM),
                    "consensus distance"))
        return -1;
    memcpy(d->keep, x, n * sizeof *x);
    memcpy(x, d->mean, n * sizeof *x);
    return sqrt(sq / collie_size(d->comm));
}

void decentral_restore(struct decentral *d, float *x, size_t n)
{
    memcpy(x, d->keep, n * sizeof *x);
}
