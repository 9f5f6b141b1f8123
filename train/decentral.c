/* SPDX-License-Identifier: BSD-3-Clause */
/* decentral.c - decentralized training's averaging steps (decentral.h). */
#include "decentral.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Push-sum's window over the (static) topology, and its buffers. */
static int push_sum_init(struct decentral *d, const char *topology, size_t nparams)
{
    if (collie_schedule_period(d->sched) != 1) {
        if (collie_rank(d->comm) == 0)
            fprintf(stderr,
                    "collie train: --sync push-sum needs a static topology, not the schedule "
                    "'%s'\n",
                    topology);
        return -1;
    }
    const collie_topology *t = collie_schedule_step(d->sched, 0);
    d->nout = collie_topology_out(t, collie_rank(d->comm), NULL, NULL, 0);
    d->x = malloc(nparams * sizeof *d->x);
    d->z_prev = malloc(nparams * sizeof *d->z_prev);
    d->shares = malloc(((size_t)d->nout + 1) * sizeof *d->shares);
    if (!d->x || !d->z_prev || !d->shares) {
        fprintf(stderr, "collie train: out of memory\n");
        return -1;
    }
    for (int k = 0; k < d->nout; k++)
        d->shares[k] = 1.0 / (d->nout + 1);
    return train_check(d->comm,
                       collie_win_create(d->comm, t, NULL, nparams, COLLIE_FLOAT32, &d->win),
                       "push-sum window");
}

int decentral_init(struct decentral *d, collie_comm *comm, enum train_sync sync,
                   const char *topology, int awc, int global_every, size_t nparams)
{
    *d = (struct decentral){.comm = comm,
                            .hierarchical = sync == TRAIN_SYNC_HIER_NEIGHBOR,
                            .awc = awc,
                            .global_every = global_every};
    int n = collie_size(comm), nodes = d->hierarchical ? collie_host_count(comm) : n;
    int *host_of = malloc((size_t)n * sizeof *host_of); /* the host-aware schedules' */
    for (int r = 0; host_of && r < n; r++)
        host_of[r] = collie_host_of(comm, r);
    collie_status st = host_of ? collie_schedule_from_name_hosts(
                                     topology, nodes, d->hierarchical ? NULL : host_of, &d->sched)
                               : COLLIE_ERR_NOMEM;
    free(host_of);
    if (st != COLLIE_OK) {
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
    return sync == TRAIN_SYNC_PUSH_SUM ? push_sum_init(d, topology, nparams) : 0;
}

void decentral_free(struct decentral *d)
{
    collie_win_free(d->win);
    collie_schedule_free(d->sched);
    free(d->mix);
    free(d->mean);
    free(d->keep);
    free(d->x);
    free(d->z_prev);
    free(d->shares);
    d->win = NULL, d->sched = NULL, d->mix = d->mean = d->keep = d->x = d->z_prev = NULL;
    d->shares = NULL;
}

double decentral_take_sent(struct decentral *d)
{
    double sent = d->sent;
    d->sent = 0;
    return sent;
}

/* The window's failure, on rank 0's stderr as train_check says a communicator's. */
static int win_check(struct decentral *d, collie_status st, const char *what)
{
    if (st == COLLIE_OK)
        return 0;
    fprintf(stderr, "collie train: rank %d: %s: %s: %s\n", collie_rank(d->comm), what,
            collie_strerror(st), collie_win_last_error(d->win));
    return -1;
}

/*
 * Push-sum's step: the update, taken on the model z = x / p, goes to the
 * numerator (x += p dz: a rank whose weight ran low while its neighbours
 * lagged is not pushed further than the step); a share of x and p goes to
 * each out-neighbour, whatever has arrived is taken in, and the model is
 * the de-biased numerator again.
 */
static int push_sum(struct decentral *d, float *z, size_t n)
{
    float p = (float)collie_win_weight(d->win);
    for (size_t i = 0; i < n; i++) /* the step on z = x / p */
        d->x[i] += p * (z[i] - d->z_prev[i]);
    if (win_check(d, collie_win_accumulate(d->win, d->x, d->shares), "push-sum deposit") ||
        win_check(d, collie_win_collect(d->win, d->x, 1.0 / (d->nout + 1)), "push-sum collect"))
        return -1;
    d->sent += (double)d->nout * (double)n * sizeof *z;
    float inv = (float)(1.0 / collie_win_weight(d->win));
    for (size_t i = 0; i < n; i++)
        z[i] = d->x[i] * inv;
    d->step++;
    return 0;
}

/*
 * Global averaging under push-sum: once every deposit has landed and been
 * taken in, the numerator is rescaled to weight 1 (x = z) and averaged.
 */
static int push_sum_global(struct decentral *d, float *z, size_t n)
{
    if (win_check(d, collie_win_fence(d->win), "push-sum fence") ||
        win_check(d, collie_win_collect(d->win, d->x, 1.0), "push-sum collect") ||
        win_check(d, collie_win_collect(d->win, d->x, 1.0 / collie_win_weight(d->win)),
                  "push-sum collect"))
        return -1;
    if (train_check(d->comm, collie_allreduce(d->comm, d->x, d->x, n, COLLIE_FLOAT32, COLLIE_AVG),
                    "global averaging"))
        return -1;
    memcpy(z, d->x, n * sizeof *z);
    return 0;
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
    if (d->win) {
        if (!d->started) /* the weight starts at 1: the numerator is the model */
            memcpy(d->x, x, n * sizeof *x);
        d->started = 1;
        memcpy(d->z_prev, x, n * sizeof *x);
        return 0;
    }
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
    if (d->win) {
        if (push_sum(d, x, n))
            return -1;
        return d->global_every > 0 && d->step % d->global_every == 0 ? push_sum_global(d, x, n) : 0;
    }
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
