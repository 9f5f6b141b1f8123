/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * quantize.c - error-feedback codes (quantize.h): INT8 and SIGN over blocks
 * of COLLIE_QUANT_BLOCK elements.  Plain loops over one block, which the
 * compiler vectorises; a block's scale is found in one pass and its codes
 * written, and the residual left, in a second over the same cache lines.
 */
#include "quantize.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define B COLLIE_QUANT_BLOCK

static size_t blocks(size_t n) { return (n + B - 1) / B; }

static size_t code_bytes(int kind, size_t n)
{
    return kind == COLLIE__QUANT_INT8 ? n : (n + 7) / 8;
}

size_t collie__quant_bytes(int kind, size_t n)
{
    return blocks(n) * sizeof(float) + code_bytes(kind, n);
}

static float int8_scale(const float *x, size_t m)
{
    float big = 0, sum = 0; /* sum: NaN or infinity where an element is (fmaxf skips NaN) */
    for (size_t i = 0; i < m; i++) {
        big = fmaxf(big, fabsf(x[i]));
        sum += x[i] * 0.0f;
    }
    return big / 127.0f + sum;
}

static void int8_encode(float *x, size_t m, float scale, int8_t *q)
{
    float inv = scale > 0 ? 1.0f / scale : 0.0f;
    for (size_t i = 0; i < m; i++) {
        float r = nearbyintf(x[i] * inv); /* |x| <= 127 scale: within int8, bar rounding */
        r = fminf(fmaxf(r, -127.0f), 127.0f);
        q[i] = (int8_t)r;
        x[i] -= r * scale;
    }
}

static float sign_scale(const float *x, size_t m)
{
    float sum = 0;
    for (size_t i = 0; i < m; i++)
        sum += fabsf(x[i]);
    return m ? sum / (float)m : 0.0f;
}

static void sign_encode(float *x, size_t m, float scale, uint8_t *bits)
{
    memset(bits, 0, (m + 7) / 8);
    for (size_t i = 0; i < m; i++) {
        int up = !(x[i] < 0); /* 0 goes up (a block with a NaN never gets here) */
        bits[i / 8] |= (uint8_t)(up << (i % 8));
        x[i] -= up ? scale : -scale;
    }
}

void collie__quant_encode(int kind, float *x, size_t n, void *out)
{
    unsigned char *codes = (unsigned char *)out + blocks(n) * sizeof(float);
    for (size_t b = 0; b * B < n; b++) {
        size_t m = n - b * B < B ? n - b * B : B;
        float *xb = x + b * B;
        int8_t *q = (int8_t *)codes + b * B;
        uint8_t *bits = codes + b * (B / 8);
        float s = kind == COLLIE__QUANT_INT8 ? int8_scale(xb, m) : sign_scale(xb, m);
        if (!isfinite(s)) {
            /* An infinity or NaN: the block decodes to NaN, where the caller sees it, and
             * keeps no residual, so that a step skipped for it (a loss scaler's) leaves none. */
            s = NAN;
            memset(kind == COLLIE__QUANT_INT8 ? (void *)q : (void *)bits, 0,
                   kind == COLLIE__QUANT_INT8 ? m : (m + 7) / 8);
            memset(xb, 0, m * sizeof *xb);
        } else if (kind == COLLIE__QUANT_INT8) {
            int8_encode(xb, m, s, q);
        } else {
            sign_encode(xb, m, s, bits);
        }
        memcpy((unsigned char *)out + b * sizeof s, &s, sizeof s);
    }
}

void collie__quant_decode_add(int kind, const void *code, size_t n, float scale, float *y)
{
    const unsigned char *codes = (const unsigned char *)code + blocks(n) * sizeof(float);
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
        } else {
            const uint8_t *bits = codes + b * (B / 8);
            for (size_t i = 0; i < m; i++)
                yb[i] += (bits[i / 8] >> (i % 8) & 1) ? s : -s;
        }
    }
}

void collie__quant_decode(int kind, const void *code, size_t n, float *y)
{
    memset(y, 0, n * sizeof *y);
    collie__quant_decode_add(kind, code, n, 1.0f, y);
}
