/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * quantize.h - the codes of error-feedback compression: float32 in blocks
 * of COLLIE_QUANT_BLOCK elements, each block a float32 scale and then its
 * codes.  INT8: round(x / scale) with scale = max|x| / 127 (nearest).
 * SIGN: one bit per element, +scale where x >= 0, -scale elsewhere, with
 * scale = mean |x| (1-bit SGD).  Encoding leaves in x what the code dropped,
 * the residual that error feedback adds to the next step.
 */
#ifndef COLLIE_QUANTIZE_H
#define COLLIE_QUANTIZE_H

#include <stddef.h>

#define COLLIE_QUANT_BLOCK 256

enum collie__quant { COLLIE__QUANT_INT8 = 1, COLLIE__QUANT_SIGN = 2 };

/* Bytes of the code of n elements: the blocks' scales, then their codes. */
size_t collie__quant_bytes(int kind, size_t n);

/* Encodes x[0..n) into out, and leaves in x what the code does not carry (x - decoded). */
void collie__quant_encode(int kind, float *x, size_t n, void *out);

/* y[0..n) += the n elements code holds (scaled by `scale`: 1, or 1/ranks for an average). */
void collie__quant_decode_add(int kind, const void *code, size_t n, float scale, float *y);

/* y[0..n) = the n elements code holds. */
void collie__quant_decode(int kind, const void *code, size_t n, float *y);

#endif
