/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataset.h - training data in memory: n samples of dim float features in
 * [0, 1] (row-major) and a class label each.  Loaded from MNIST-format IDX
 * files (gzip or plain) or made up by a generator of the same shape.
 */
#ifndef COLLIE_TRAIN_DATASET_H
#define COLLIE_TRAIN_DATASET_H

#include <stddef.h>
#include <stdint.h>

struct dataset {
    int n, dim, classes;
    float *x;   /* n * dim */
    uint8_t *y; /* n */
};

/* The most values (samples x features) a loaded set holds: 1 GiB of floats. */
#define DATASET_MAX_VALUES ((size_t)1 << 28)

#define FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

/*
 * Loads DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz].  Returns 0, or
 * -1 with err naming the file and what was wrong with it; d is then empty.
 */
int dataset_load_idx(const char *dir, int test, struct dataset *d, char *err, size_t errlen);

/*
 * Loads a LIBSVM-format file (the epsilon data set's): one sample per line,
 * "LABEL INDEX:VALUE ...", indices from 1.  Labels -1/+1 (or 0/1) become
 * classes 0/1; other integer labels 0..255 are classes as they are.  dim 0
 * takes the largest index seen.  Returns 0, or -1 with err naming the file,
 * the line and what was wrong.
 */
int dataset_load_libsvm(const char *path, int dim, struct dataset *d, char *err, size_t errlen);

/*
 * A synthetic classification set of the same shape: class c's samples
 * scatter around a random prototype, so a model can learn it.  The
 * prototypes come from seed, the samples from seed and stream: a training
 * and a test set of one problem share seed and differ in stream.
 */
int dataset_synthetic(struct dataset *d, int n, int dim, int classes, uint64_t seed,
                      uint64_t stream);

void dataset_free(struct dataset *d);

/* The permutation of [0, n) for an epoch: the same on every rank for one seed. */
void dataset_shuffle(int *perm, int n, uint64_t seed, int epoch);

/* splitmix64: the one random generator of the training code. */
static inline uint64_t train_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline float train_uniform(uint64_t *state)
{
    return (float)(train_rand(state) >> 40) * (1.0f / 16777216.0f);
}

#endif
