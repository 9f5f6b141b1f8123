/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * schedule.h - the learning rate over a run: the linear scaling rule, a
 * linear warm-up, and decay on plateau (PyTorch's ReduceLROnPlateau in "min"
 * mode on the training loss, relative threshold 1e-4).  Every rank feeds it
 * the same allreduced loss, so every rank decays at the same epoch.
 */
#ifndef COLLIE_TRAIN_SCHEDULE_H
#define COLLIE_TRAIN_SCHEDULE_H

struct lr_schedule {
    float lr;             /* the rate now, after scaling and decays (not warm-up) */
    long warmup_steps;    /* 0: none */
    float plateau_factor; /* 0: no decay; else multiply lr by it on a plateau */
    int patience;         /* epochs without improvement before decaying */
    float min_lr;
    double best; /* lowest loss seen */
    int bad_epochs;
};

/* base: per-rank rate; multiplied by ranks when scale is set. */
void lr_schedule_init(struct lr_schedule *s, float base, int ranks, int scale, long warmup_steps,
                      float plateau_factor, int patience, float min_lr);

/* The rate for step (0-based, counted over the whole run). */
float lr_schedule_at(const struct lr_schedule *s, long step);

/* Feeds one epoch's training loss; returns 1 when it decayed the rate. */
int lr_schedule_epoch_end(struct lr_schedule *s, double loss);

#endif
