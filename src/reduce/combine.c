/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * combine.c - the weighted combination of neighbour averaging:
 *     dst = self_w * x + w[0] * ys[0] + ... + w[n-1] * ys[n-1]
 * in blocks that stay in L1 (one read of each input, one write), the terms
 * added in that order, so that every rank with the same inputs gets the same
 * bits.  float32 combines in float32, float64 in float64; float16 and
 * bfloat16 are widened to float32 and the result rounded once.  The sources
 * may arrive narrower than the data (float32 data sent as float16 or
 * bfloat16): widening them is exact.
 */
#include "reduce.h"

#include <string.h>

#include "../core/op.h"
#include "copy.h"
#include "half.h"

#define BLOCK 512 /* elements: the accumulator and one widened source, 4 KiB in all */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KERNEL __attribute__((target_clones("avx2", "default")))
#else
#define KERNEL
#endif

/* axpy_T: acc[j] (+)= w * y[j], the first term setting, the others adding. */
#define DEFINE_AXPY(NAME, T)                                                                       \
    KERNEL static void axpy_##NAME(T *restrict acc, const T *restrict y, T w, size_t m, int first) \
    {                                                                                              \
        if (first)                                                                                 \
            for (size_t j = 0; j < m; j++)                                                         \
                acc[j] = w * y[j];                                                                 \
        else                                                                                       \
            for (size_t j = 0; j < m; j++)                                                         \
                acc[j] += w * y[j];                                                                \
    }
DEFINE_AXPY(f32, float)
DEFINE_AXPY(f64, double)
#undef DEFINE_AXPY

/* m elements of a float32-computed dtype at p, as float32 (p itself when it is float32). */
static const float *as_f32(const void *p, collie_dtype dtype, float *tmp, size_t m)
{
    if (dtype == COLLIE_FLOAT16)
        collie__f16_widen(tmp, p, m);
    else if (dtype == COLLIE_BFLOAT16)
        collie__bf16_widen(tmp, p, m);
    else
        return p;
    return tmp;
}

/* m float32 values of acc into out, as dtype (float32, float16 or bfloat16). */
static void store_f32(void *out, collie_dtype dtype, const float *acc, size_t m)
{
    if (dtype == COLLIE_FLOAT16)
        collie__f16_narrow(out, acc, m);
    else if (dtype == COLLIE_BFLOAT16)
        collie__bf16_narrow(out, acc, m);
    else
        collie__copy(out, acc, m * sizeof *acc);
}

static void combine_f64(double *dst, const double *x, double self_w, const void *const *ys,
                        const double *w, int n, size_t count)
{
    double acc[BLOCK];
    for (size_t lo = 0; lo < count; lo += BLOCK) {
        size_t m = count - lo < BLOCK ? count - lo : BLOCK;
        axpy_f64(acc, x + lo, self_w, m, 1);
        for (int d = 0; d < n; d++)
            axpy_f64(acc, (const double *)ys[d] + lo, w[d], m, 0);
        collie__copy(dst + lo, acc, m * sizeof *acc);
    }
}

static void combine_f32(void *dst, const void *x, double self_w, const void *const *ys,
                        const double *w, int n, size_t count, collie_dtype dtype,
                        collie_dtype ydtype)
{
    float acc[BLOCK], tmp[BLOCK];
    size_t es = collie__dtype_size(dtype), ys_es = collie__dtype_size(ydtype);
    for (size_t lo = 0; lo < count; lo += BLOCK) {
        size_t m = count - lo < BLOCK ? count - lo : BLOCK;
        axpy_f32(acc, as_f32((const char *)x + lo * es, dtype, tmp, m), (float)self_w, m, 1);
        for (int d = 0; d < n; d++)
            axpy_f32(acc, as_f32((const char *)ys[d] + lo * ys_es, ydtype, tmp, m), (float)w[d], m,
                     0);
        store_f32((char *)dst + lo * es, dtype, acc, m);
    }
}

void collie__combine(void *dst, const void *x, double self_w, const void *const *ys,
                     const double *w, int n, size_t count, collie_dtype dtype, collie_dtype ydtype)
{
    if (dtype == COLLIE_FLOAT64)
        combine_f64(dst, x, self_w, ys, w, n, count);
    else
        combine_f32(dst, x, self_w, ys, w, n, count, dtype, ydtype);
}

void collie__scale(void *dst, collie_dtype dst_dtype, const void *x, collie_dtype dtype, double w,
                   size_t count)
{
    if (dtype == COLLIE_FLOAT64) {
        combine_f64(dst, x, w, NULL, NULL, 0, count);
        return;
    }
    float acc[BLOCK], tmp[BLOCK];
    size_t es = collie__dtype_size(dtype), dst_es = collie__dtype_size(dst_dtype);
    for (size_t lo = 0; lo < count; lo += BLOCK) {
        size_t m = count - lo < BLOCK ? count - lo : BLOCK;
        axpy_f32(acc, as_f32((const char *)x + lo * es, dtype, tmp, m), (float)w, m, 1);
        store_f32((char *)dst + lo * dst_es, dst_dtype, acc, m);
    }
}
