/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * decentral.h - decentralized training (BlueFog's model): no gradient
 * allreduce; each rank updates its own model with its own gradient and
 * averages the model with its neighbours of a topology or schedule
 * (collie_neighbor_allreduce), optionally averaging globally every H steps.
 *
 *   adapt-then-combine (ATC):    x <- W (x - lr g(x))
 *   adapt-with-combine (AWC):    x <- W x - lr g(x), W x computed while g(x) is
 *   push-sum (SGP):              x <- P (x - p lr g(z)), p <- P p, z = x / p
 *
 * In AWC the averaging of a copy of the model overlaps the forward and
 * backward passes (combine-while-computing).  Push-sum (Assran et al.,
 * Stochastic Gradient Push, ICML 2019) runs on a one-sided window: each rank
 * deposits a share of its numerator x and weight p with its out-neighbours
 * (P column-stochastic: 1 / (out-degree + 1) each, the same kept) and takes
 * in whatever has arrived, never waiting for a neighbour; the model trained
 * and evaluated is the de-biased z = x / p.
 */
#ifndef COLLIE_TRAIN_DECENTRAL_H
#define COLLIE_TRAIN_DECENTRAL_H

#include <stddef.h>

#include "collie.h"

enum train_sync {
    TRAIN_SYNC_ALLREDUCE,     /* gradients averaged over all ranks (the default) */
    TRAIN_SYNC_NEIGHBOR,      /* models averaged with the topology's neighbours */
    TRAIN_SYNC_HIER_NEIGHBOR, /* within the host, then with the neighbour hosts */
    TRAIN_SYNC_PUSH_SUM,      /* push-sum over a window: nobody waits for a neighbour */
};

struct decentral {
    collie_comm *comm;
    collie_schedule *sched;
    int hierarchical, awc, global_every;
    long step;
    float *mix;          /* AWC: the copy being averaged during the passes */
    float *mean, *keep;  /* the epoch's mean model, and this rank's while it is evaluated */
    collie_request *req; /* AWC: the averaging in flight */
    /* push-sum */
    collie_win *win;
    float *x, *z_prev; /* the numerator; the model before the update */
    double *shares;    /* 1 / (out-degree + 1) per out-neighbour */
    int nout, started;
    double sent; /* bytes deposited since the last look (the window's own communicator) */
};

/*
 * Sets d up for sync (not ALLREDUCE) over the topology or schedule named
 * topology (collie_schedule_from_name; over the hosts when hierarchical;
 * push-sum takes a static topology).  Collective.  0, or -1 with a message
 * on stderr.
 */
int decentral_init(struct decentral *d, collie_comm *comm, enum train_sync sync,
                   const char *topology, int awc, int global_every, size_t nparams);
/* Collective for push-sum (its window). */
void decentral_free(struct decentral *d);

/* Bytes sent on the window's own communicator since the last call (push-sum), else 0. */
double decentral_take_sent(struct decentral *d);

/* Before the passes: AWC starts averaging a copy of x.  0, or -1. */
int decentral_before(struct decentral *d, const float *x, size_t n);
/*
 * After the passes, before the update: AWC waits and takes the averaged
 * copy; push-sum notes the model.  0, or -1.
 */
int decentral_combine(struct decentral *d, float *x, size_t n);
/*
 * After the update: ATC averages x; push-sum deposits and collects; every
 * global_every steps, all ranks average.  0, or -1.
 */
int decentral_after(struct decentral *d, float *x, size_t n);

/*
 * For the epoch's report: puts the mean of every rank's x in x (keeping
 * this rank's; decentral_restore puts it back) and returns the consensus
 * distance, sqrt(mean over ranks of ||x_r - mean||^2); -1 on failure.
 */
double decentral_to_mean(struct decentral *d, float *x, size_t n);
void decentral_restore(struct decentral *d, float *x, size_t n);

#endif
