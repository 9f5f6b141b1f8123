/* SPDX-License-Identifier: BSD-3-Clause */
/* mlp.c - forward and backward passes; matrix products by OpenBLAS (cblas_sgemm). */
#include "mlp.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"

int mlp_init(struct mlp *m, const int *sizes, int nlayers, float dropout, int max_batch,
             uint64_t seed)
{
    memset(m, 0, sizeof *m);
    if (nlayers < 1 || nlayers > MLP_MAX_LAYERS || max_batch < 1 || !(dropout >= 0 && dropout < 1))
        return -1;
    int widest = 0;
    for (int l = 0; l <= nlayers; l++) {
        if (sizes[l] < 1)
            return -1;
        m->size[l] = sizes[l];
        widest = sizes[l] > widest ? sizes[l] : widest;
    }
    m->nlayers = nlayers;
    m->dropout = dropout;
    m->max_batch = max_batch;
    for (int l = 0; l < nlayers; l++) {
        m->w_off[l] = m->nparams;
        m->nparams += (size_t)sizes[l + 1] * (size_t)sizes[l];
        m->b_off[l] = m->nparams;
        m->nparams += (size_t)sizes[l + 1];
    }
    m->params = malloc(m->nparams * sizeof(float));
    m->grads = calloc(m->nparams, sizeof(float));
    int ok = m->params && m->grads;
    for (int l = 1; l <= nlayers && ok; l++)
        ok = (m->act[l] = malloc(sizeof(float) * (size_t)max_batch * (size_t)sizes[l])) != NULL;
    for (int k = 0; k < 2 && ok; k++)
        ok = (m->delta[k] = malloc(sizeof(float) * (size_t)max_batch * (size_t)widest)) != NULL;
    if (!ok) {
        mlp_free(m);
        return -1;
    }
    uint64_t s = seed;
    for (int l = 0; l < nlayers; l++) {
        float bound = sqrtf(6.0f / (float)sizes[l]); /* He uniform, for ReLU */
        float *w = m->params + m->w_off[l];
        for (size_t i = 0; i < (size_t)sizes[l + 1] * (size_t)sizes[l]; i++)
            w[i] = (2 * train_uniform(&s) - 1) * bound;
        memset(m->params + m->b_off[l], 0, sizeof(float) * (size_t)sizes[l + 1]);
    }
    m->rng = seed ^ 0xd1b54a32d192ed03ull;
    return 0;
}

void mlp_free(struct mlp *m)
{
    free(m->params);
    free(m->grads);
    for (int l = 1; l <= MLP_MAX_LAYERS; l++)
        free(m->act[l]);
    free(m->delta[0]);
    free(m->delta[1]);
    memset(m, 0, sizeof *m);
}

/* act[l+1] = act[l] W^T + b, then ReLU and dropout on hidden layers. */
static void forward(struct mlp *m, const float *x, int batch, int train)
{
    for (int l = 0; l < m->nlayers; l++) {
        int in = m->size[l], out = m->size[l + 1];
        const float *a = l ? m->act[l] : x, *w = m->params + m->w_off[l],
                    *b = m->params + m->b_off[l];
        float *z = m->act[l + 1];
        for (int i = 0; i < batch; i++)
            memcpy(z + (size_t)i * (size_t)out, b, sizeof(float) * (size_t)out);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, out, in, 1.0f, a, in, w, in,
                    1.0f, z, out);
        if (l + 1 == m->nlayers)
            break;
        float keep = 1 - m->dropout, scale = 1 / keep;
        for (size_t i = 0; i < (size_t)batch * (size_t)out; i++) {
            float v = z[i] > 0 ? z[i] : 0;
            if (train && m->dropout > 0)
                v = train_uniform(&m->rng) < keep ? v * scale : 0; /* inverted dropout */
            z[i] = v;
        }
    }
}

/* Softmax in place on each row of the logits; returns the mean cross-entropy. */
static float softmax_loss(float *p, const uint8_t *y, int batch, int classes)
{
    double loss = 0;
    for (int i = 0; i < batch; i++) {
        float *row = p + (size_t)i * (size_t)classes, max = row[0], sum = 0;
        for (int c = 1; c < classes; c++)
            max = row[c] > max ? row[c] : max;
        for (int c = 0; c < classes; c++)
            sum += row[c] = expf(row[c] - max);
        for (int c = 0; c < classes; c++)
            row[c] /= sum;
        loss -= log(row[y[i]] > 1e-30f ? row[y[i]] : 1e-30f);
    }
    return (float)(loss / batch);
}

/*
 * One output: the probability of class 1 is sigmoid(z); binary cross-entropy
 * in its stable form, max(z, 0) - z y + log(1 + exp(-|z|)).  z is replaced by
 * the probability.
 */
static float sigmoid_loss(float *z, const uint8_t *y, int batch)
{
    double loss = 0;
    for (int i = 0; i < batch; i++) {
        float v = z[i], t = (float)y[i];
        loss += (v > 0 ? v : 0) - v * t + log1pf(expf(-fabsf(v)));
        z[i] = 1 / (1 + expf(-v));
    }
    return (float)(loss / batch);
}

float mlp_forward_backward(struct mlp *m, const float *x, const uint8_t *y, int batch, int train)
{
    int L = m->nlayers, classes = m->size[L];
    forward(m, x, batch, train);
    float loss = classes == 1 ? sigmoid_loss(m->act[L], y, batch)
                              : softmax_loss(m->act[L], y, batch, classes);
    if (!train)
        return loss;
    /* dZ_L = (probabilities - targets) / batch, for softmax and for sigmoid alike */
    float *dz = m->delta[0];
    memcpy(dz, m->act[L], sizeof(float) * (size_t)batch * (size_t)classes);
    for (int i = 0; i < batch; i++)
        if (classes == 1)
            dz[i] -= (float)y[i];
        else
            dz[(size_t)i * (size_t)classes + y[i]] -= 1;
    for (size_t i = 0; i < (size_t)batch * (size_t)classes; i++)
        dz[i] /= (float)batch;
    for (int l = L - 1; l >= 0; l--) {
        int in = m->size[l], out = m->size[l + 1];
        const float *a = l ? m->act[l] : x, *w = m->params + m->w_off[l];
        float *dw = m->grads + m->w_off[l], *db = m->grads + m->b_off[l];
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, batch, 1.0f, dz, out, a, in,
                    0.0f, dw, in);
        memset(db, 0, sizeof(float) * (size_t)out);
        for (int i = 0; i < batch; i++)
            for (int j = 0; j < out; j++)
                db[j] += dz[(size_t)i * (size_t)out + (size_t)j];
        if (m->grads_ready) /* W then b, back to back */
            m->grads_ready(m->grads_arg, m->w_off[l], m->b_off[l] + (size_t)out - m->w_off[l]);
        if (!l)
            break;
        float *da = dz == m->delta[0] ? m->delta[1] : m->delta[0];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, in, out, 1.0f, dz, out, w, in,
                    0.0f, da, in);
        /* act[l] holds ReLU(z) after dropout: zero where it was cut or dropped, else scaled */
        float scale = m->dropout > 0 ? 1 / (1 - m->dropout) : 1;
        for (size_t i = 0; i < (size_t)batch * (size_t)in; i++)
            da[i] = m->act[l][i] > 0 ? da[i] * scale : 0;
        dz = da;
    }
    return loss;
}

int mlp_correct(struct mlp *m, const float *x, const uint8_t *y, int batch)
{
    int classes = m->size[m->nlayers], correct = 0;
    forward(m, x, batch, 0);
    for (int i = 0; i < batch; i++) {
        const float *row = m->act[m->nlayers] + (size_t)i * (size_t)classes;
        int best = 0;
        if (classes == 1)
            best = row[0] > 0; /* the logit: class 1 when its probability passes 1/2 */
        for (int c = 1; c < classes; c++)
            best = row[c] > row[best] ? c : best;
        correct += best == y[i];
    }
    return correct;
}
