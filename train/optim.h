/* SPDX-License-Identifier: BSD-3-Clause */
/* optim.h - optimizers over a flat parameter buffer: SGD (momentum, Nesterov, weight decay), Adam. */
#ifndef COLLIE_TRAIN_OPTIM_H
#define COLLIE_TRAIN_OPTIM_H

#include <stddef.h>

enum optim_kind { OPTIM_SGD, OPTIM_ADAM };

struct optim {
    enum optim_kind kind;
    float momentum, weight_decay; /* SGD; weight decay (L2) for both */
    int nesterov;
    float beta1, beta2, eps; /* Adam */
    size_t n;
    float *m, *v; /* SGD: m = velocity; Adam: first and second moments */
    long t;       /* steps taken */
};

/* 0, or -1 without memory. */
int optim_init(struct optim *o, enum optim_kind kind, size_t n);
void optim_free(struct optim *o);

/* One step at learning rate lr: params -= update(grads). */
void optim_step(struct optim *o, float *params, const float *grads, float lr);

#endif
