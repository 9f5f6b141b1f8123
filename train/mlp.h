/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlp.h - a multilayer perceptron for classification: Linear layers with
 * ReLU and (inverted) dropout between them, softmax cross-entropy on top; a
 * single output unit means two classes: sigmoid and binary cross-entropy.
 * No hidden layer makes it logistic regression (binary or multinomial).
 *
 * Parameters and gradients each live in one flat buffer (W1 b1 W2 b2 ...),
 * so data-parallel training averages all gradients with one allreduce.
 */
#ifndef COLLIE_TRAIN_MLP_H
#define COLLIE_TRAIN_MLP_H

#include <stddef.h>
#include <stdint.h>

#define MLP_MAX_LAYERS 8

struct mlp {
    int nlayers;                  /* weight layers */
    int size[MLP_MAX_LAYERS + 1]; /* size[0]: input features; size[nlayers]: classes, or 1 */
    float dropout;                /* probability of dropping a hidden unit in training */
    size_t nparams;
    float *params, *grads;
    size_t w_off[MLP_MAX_LAYERS], b_off[MLP_MAX_LAYERS]; /* W[l] is size[l+1] x size[l] */
    int max_batch;
    float *act[MLP_MAX_LAYERS + 1]; /* act[l], l >= 1: layer l's output, batch x size[l] */
    float *delta[2];                /* backward scratch, batch x max width */
    uint64_t rng;                   /* dropout masks */
    /*
     * Called during the backward pass as soon as a layer's gradients (its W
     * and b, grads[off, off + n)) are final, the last layer first: where
     * data-parallel training starts reducing them while the pass goes on.
     */
    void (*grads_ready)(void *arg, size_t off, size_t n);
    void *grads_arg;
};

/*
 * sizes[0..nlayers]: input, hidden..., classes.  Weights get He-uniform
 * values from seed (the same on every rank), biases 0.  0, or -1 (bad
 * shape or no memory).
 */
int mlp_init(struct mlp *m, const int *sizes, int nlayers, float dropout, int max_batch,
             uint64_t seed);
void mlp_free(struct mlp *m);

/*
 * Forward pass on batch samples; with train set, dropout is on and m->grads
 * receives the gradient of the mean loss.  Returns the mean cross-entropy.
 */
float mlp_forward_backward(struct mlp *m, const float *x, const uint8_t *y, int batch, int train);

/* Correct top-1 predictions among batch samples (no dropout). */
int mlp_correct(struct mlp *m, const float *x, const uint8_t *y, int batch);

#endif
