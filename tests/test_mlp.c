/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mlp.c - the MLP's gradients against central finite differences, for
 * every layer's weights and biases, with and without hidden layers, softmax
 * (several classes) and sigmoid (two classes) outputs.
 */
#include <math.h>

#include "../train/dataset.h"
#include "../train/mlp.h"
#include "test_util.h"

static void gradcheck(const int *sizes, int nlayers)
{
    enum { BATCH = 5 };
    struct mlp m;
    CHECK(mlp_init(&m, sizes, nlayers, 0, BATCH, 7) == 0, "mlp_init");
    float x[BATCH * 16];
    uint8_t y[BATCH];
    uint64_t s = 3;
    for (int i = 0; i < BATCH * sizes[0]; i++)
        x[i] = train_uniform(&s);
    int classes = sizes[nlayers] == 1 ? 2 : sizes[nlayers]; /* one output: binary */
    for (int i = 0; i < BATCH; i++)
        y[i] = (uint8_t)(train_rand(&s) % (uint64_t)classes);
    mlp_forward_backward(&m, x, y, BATCH, 1);
    float *analytic = malloc(m.nparams * sizeof(float));
    memcpy(analytic, m.grads, m.nparams * sizeof(float));
    int checked = 0;
    for (size_t p = 0; p < m.nparams; p++) {
        const float h = 1e-3f, keep = m.params[p]; /* 1e-2 crosses ReLU kinks */
        m.params[p] = keep + h;
        double up = mlp_forward_backward(&m, x, y, BATCH, 0);
        m.params[p] = keep - h;
        double down = mlp_forward_backward(&m, x, y, BATCH, 0);
        m.params[p] = keep;
        double numeric = (up - down) / (2 * h), a = analytic[p];
        CHECK(fabs(numeric - a) <= 2e-3 + 2e-2 * fabs(a),
              "layers=%d param %zu: analytic %g, numeric %g", nlayers, p, a, numeric);
        checked++;
    }
    printf("gradcheck %d layer(s): %d parameters agree with finite differences\n", nlayers,
           checked);
    free(analytic);
    mlp_free(&m);
}

int main(void)
{
    const int logreg[] = {16, 4}, deep[] = {16, 12, 8, 4}, binary[] = {16, 1},
              deep_binary[] = {16, 8, 1};
    gradcheck(logreg, 1);
    gradcheck(deep, 3);
    gradcheck(binary, 1);
    gradcheck(deep_binary, 2);
    return 0;
}
