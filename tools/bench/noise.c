/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * noise.c - `collie bench --noise N`: N threads in every rank that compute
 * without pause, as the intra-op pool of PyTorch (OpenMP) or an OpenBLAS pool
 * does beside the communication of a training process.  The waiting policy
 * of a communication library must hold up with them on the same cores.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "bench.h"

#define MAX_NOISE 64

static pthread_t threads[MAX_NOISE];
static int nthreads;
static atomic_int stop;

/* A dot product over a cache-resident block, again and again: FMA work, no memory traffic. */
static void *compute(void *arg)
{
    (void)arg;
    float a[1024], b[1024];
    for (int i = 0; i < 1024; i++)
        a[i] = 1.0f + (float)i * 1e-3f, b[i] = 1.0f - (float)i * 1e-3f;
    volatile float sink = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        float s = 0;
        for (int i = 0; i < 1024; i++)
            s += a[i] * b[i];
        sink = s;
    }
    (void)sink;
    return NULL;
}

int bench_noise_start(int n)
{
    atomic_store(&stop, 0);
    for (nthreads = 0; nthreads < n && nthreads < MAX_NOISE; nthreads++)
        if (pthread_create(&threads[nthreads], NULL, compute, NULL) != 0) {
            bench_noise_stop();
            return -1;
        }
    return 0;
}

void bench_noise_stop(void)
{
    atomic_store(&stop, 1);
    for (int i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    nthreads = 0;
}
