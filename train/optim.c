/* SPDX-License-Identifier: BSD-3-Clause */
/* optim.c - SGD with momentum / Nesterov / weight decay (PyTorch's formulation), and Adam. */
#include "optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int optim_init(struct optim *o, enum optim_kind kind, size_t n)
{
    float momentum = o->momentum, wd = o->weight_decay;
    int nesterov = o->nesterov;
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->momentum = momentum;
    o->weight_decay = wd;
    o->nesterov = nesterov;
    o->beta1 = 0.9f, o->beta2 = 0.999f, o->eps = 1e-8f;
    o->n = n;
    o->m = calloc(n, sizeof(float));
    o->v = kind == OPTIM_ADAM ? calloc(n, sizeof(float)) : NULL;
    if (!o->m || (kind == OPTIM_ADAM && !o->v)) {
        optim_free(o);
        return -1;
    }
    return 0;
}

void optim_free(struct optim *o)
{
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
}

void optim_step(struct optim *o, float *restrict params, const float *restrict grads, float lr)
{
    o->t++;
    const float wd = o->weight_decay, mu = o->momentum;
    if (o->kind == OPTIM_SGD) {
        for (size_t i = 0; i < o->n; i++) {
            float g = grads[i] + wd * params[i];
            float v = mu * o->m[i] + g;
            o->m[i] = v;
            params[i] -= lr * (o->nesterov ? g + mu * v : v);
        }
        return;
    }
    const float b1 = o->beta1, b2 = o->beta2;
    const float c1 = 1 - powf(b1, (float)o->t), c2 = 1 - powf(b2, (float)o->t);
    for (size_t i = 0; i < o->n; i++) {
        float g = grads[i] + wd * params[i];
        o->m[i] = b1 * o->m[i] + (1 - b1) * g;
        o->v[i] = b2 * o->v[i] + (1 - b2) * g * g;
        params[i] -= lr * (o->m[i] / c1) / (sqrtf(o->v[i] / c2) + o->eps);
    }
}
