/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * quantize.c - error-feedback codes (quantize.h): INT8 and SIGN over blocks
 * of COLLIE_QUANT_BLOCK elements.  Each block is read twice from cache: once
 * for its scale, once to write its codes and leave its residual.  The loops
 * are written so that the compiler vectorises them (an AVX2 clone beside the
 * baseline, chosen at load time, as in reduce.c): max |x| over the bits of
 * |x| as integers, which also finds an infinity or NaN; sums in eight lanes;
 * selects instead of branches; SIGN decoded through a table of +-1 per byte.
 */
#include "quantize.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KERNEL __attribute__((target_clones("avx2", "default")))
#else
#define KERNEL
#endif

#define B COLLIE_QUANT_BLOCK
#define FINITE_BITS 0x7f800000u /* |x|'s bits from here up: infinity or NaN */

static size_t blocks(size_t n) { return (n + B - 1) / B; }

static size_t code_bytes(int kind, size_t n)
{
    return kind == COLLIE__QUANT_INT8 ? n : (n + 7) / 8;
}

size_t collie__quant_bytes(int kind, size_t n)
{
    return blocks(n) * sizeof(float) + code_bytes(kind, n);
}

/* The largest |x|'s bits: non-negative floats order as their bits do. */
static inline uint32_t max_abs_bits(const float *x, size_t m)
{
    uint32_t big = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t b;
        memcpy(&b, &x[i], sizeof b);
        b &= 0x7fffffffu;
        big = b > big ? b : big;
    }
    return big;
}

static inline float abs_mean(const float *x, size_t m)
{
    float lane[8] = {0};
    size_t i = 0;
    for (; i + 8 <= m; i += 8)
        for (int k = 0; k < 8; k++)
            lane[k] += fabsf(x[i + (size_t)k]);
    float sum = 0;
    for (int k = 0; k < 8; k++)
        sum += lane[k];
    for (; i < m; i++)
        sum += fabsf(x[i]);
    return sum / (float)m;
}

static inline void int8_encode(float *x, size_t m, float scale, int8_t *q)
{
    float inv = scale > 0 ? 1.0f / scale : 0.0f;
    for (size_t i = 0; i < m; i++) {
        float r = nearbyintf(x[i] * inv); /* |x| <= 127 scale: within int8, bar rounding */
        r = r > 127.0f ? 127.0f : r;
        r = r < -127.0f ? -127.0f : r;
        q[i] = (int8_t)r;
        x[i] -= r * scale;
    }
}

/* Up to 8 elements' signs as one byte's bits, each element left its residual. */
static inline uint8_t sign_byte(float *x, size_t k_end, float scale)
{
    unsigned byte = 0;
    for (size_t k = 0; k < k_end; k++) {
        int up = !(x[k] < 0); /* 0 goes up */
        byte |= (unsigned)up << k;
        x[k] -= up ? scale : -scale;
    }
    return (uint8_t)byte;
}

static inline void sign_encode(float *x, size_t m, float scale, uint8_t *bits)
{
    size_t i = 0;
    for (; i + 8 <= m; i += 8)
        bits[i / 8] = sign_byte(x + i, 8, scale); /* a constant 8: unrolled, vectorised */
    if (i < m)
        bits[i / 8] = sign_byte(x + i, m - i, scale);
}

KERNEL void collie__quant_encode(int kind, float *x, size_t n, void *out)
{
    unsigned char *codes = (unsigned char *)out + blocks(n) * sizeof(float);
    for (size_t b = 0; b * B < n; b++) {
        size_t m = n - b * B < B ? n - b * B : B;
        float *xb = x + b * B;
        int8_t *q = (int8_t *)codes + b * B;
        uint8_t *bits = codes + b * (B / 8);
        uint32_t big = max_abs_bits(xb, m);
        float s;
        if (big >= FINITE_BITS) {
            /* An infinity or NaN: the block decodes to NaN, where the caller sees it, and
             * keeps no residual, so that a step skipped for it (a loss scaler's) leaves none. */
            s = NAN;
            memset(kind == COLLIE__QUANT_INT8 ? (void *)q : (void *)bits, 0,
                   kind == COLLIE__QUANT_INT8 ? m : (m + 7) / 8);
            memset(xb, 0, m * sizeof *xb);
        } else if (kind == COLLIE__QUANT_INT8) {
            float bigf;
            memcpy(&bigf, &big, sizeof bigf);
            /* A scale below FLT_MIN would have no finite inverse (0 x inf: NaN): a block that
             * small is coded as zeros, and the residual keeps all of it. */
            s = bigf >= 127.0f * FLT_MIN ? bigf / 127.0f : 0.0f;
            int8_encode(xb, m, s, q);
        } else {
            s = abs_mean(xb, m);
            sign_encode(xb, m, s, bits);
        }
        memcpy((unsigned char *)out + b * sizeof s, &s, sizeof s);
    }
}

/* +-1 for each bit of each byte value: SIGN's decoding as a load and a multiply. */
static float sign_table[256][8];
static pthread_once_t sign_table_once = PTHREAD_ONCE_INIT;

static void make_sign_table(void)
{
    for (int v = 0; v < 256; v++)
        for (int k = 0; k < 8; k++)
            sign_table[v][k] = (v >> k & 1) ? 1.0f : -1.0f;
}

KERNEL void collie__quant_decode_add(int kind, const void *code, size_t n, float scale, float *y)
{
    const unsigned char *codes = (const unsigned char *)code + blocks(n) * sizeof(float);
    if (kind != COLLIE__QUANT_INT8)
        pthread_once(&sign_table_once, make_sign_table);
    for (size_t b = 0; b * B < n; b++) {
        size_t m = n - b * B < B ? n - b * B : B;
        float s;
        memcpy(&s, (const unsigned char *)code + b * sizeof(float), sizeof s);
        s *= scale;
        float *yb = y + b * B;
        if (kind == COLLIE__QUANT_INT8) {
            const int8_t *q = (const int8_t *)codes + b * B;
            for (size_t i = 0; i < m; i++)
                yb[i] += (float)q[i] * s;
            continue;
        }
        const uint8_t *bits = codes + b * (B / 8);
        size_t i = 0;
        for (; i + 8 <= m; i += 8) {
            const float *sign = sign_table[bits[i / 8]];
            for (int k = 0; k < 8; k++)
                yb[i + (size_t)k] += sign[k] * s;
        }
        for (; i < m; i++)
            yb[i] += sign_table[bits[i / 8]][i % 8] * s;
    }
}

void collie__quant_decode(int kind, const void *code, size_t n, float *y)
{
    memset(y, 0, n * sizeof *y);
    collie__quant_decode_add(kind, code, n, 1.0f, y);
}
