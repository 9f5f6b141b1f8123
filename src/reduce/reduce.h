/* SPDX-License-Identifier: BSD-3-Clause */
/* reduce.h - element-wise reduction kernels over any number of sources. */
#ifndef COLLIE_REDUCE_H
#define COLLIE_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "collie.h"

/*
 * dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[nsrc-1][i], combined in
 * source order, so every caller with the same sources gets the same bits.
 * COLLIE_AVG divides the sum by `divisor`.  float16/bfloat16 accumulate in
 * float32 and round once.  dst may be one of the sources; dtype and op must
 * be valid (the caller checked them).  With `stream`, dst is written with
 * non-temporal stores (stream.h): for outputs nobody will read soon.
 */
void collie__reduce(void *dst, const void *const *srcs, int nsrc, size_t count, collie_dtype dtype,
                    collie_op op, int divisor, int stream);

/*
 * collie__reduce into dst, through the cache, and the same result stored
 * into copy too (non-temporally with copy_stream): each block is stored
 * twice from L1, so the second output costs its writes alone where a copy
 * after the reduce reads dst again.  copy overlaps no source but may be one
 * of them exactly (each block is read before it is stored).
 */
void collie__reduce_twice(void *dst, void *copy, int copy_stream, const void *const *srcs, int nsrc,
                          size_t count, collie_dtype dtype, collie_op op, int divisor);

/*
 * Neighbour averaging's combination (combine.c):
 *     dst[i] = self_w * x[i] + w[0] * ys[0][i] + ... + w[n-1] * ys[n-1][i],
 * added in that order (the same inputs give the same bits on every rank).
 * dtype is float32, float64, float16 or bfloat16 (the half types computed
 * in float32 and rounded once); the sources ys are in ydtype, which is dtype
 * or, for float32 data, float16 / bfloat16.  dst may be x; n may be 0.
 */
void collie__combine(void *dst, const void *x, double self_w, const void *const *ys,
                     const double *w, int n, size_t count, collie_dtype dtype, collie_dtype ydtype);

/* dst = w * x, converted from dtype to dst_dtype (as collie__combine's sources may be). */
void collie__scale(void *dst, collie_dtype dst_dtype, const void *x, collie_dtype dtype, double w,
                   size_t count);

/*
 * Array conversions between float32 and float16 / bfloat16, rounding to
 * nearest even (convert.c): F16C instructions where the CPU has them, else
 * the branch-free scalar code of half.h, which the compiler vectorises.
 * out and in must not overlap.
 */
void collie__f16_widen(float *restrict out, const uint16_t *restrict in, size_t m);
void collie__f16_narrow(uint16_t *restrict out, const float *restrict in, size_t m);
void collie__bf16_widen(float *restrict out, const uint16_t *restrict in, size_t m);
void collie__bf16_narrow(uint16_t *restrict out, const float *restrict in, size_t m);

#endif
