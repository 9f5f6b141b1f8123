/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_quantize.c - the error-feedback codes (src/reduce/quantize.h), one
 * process: sizes of every length around the block; INT8 within max|x|/254 of
 * its block, SIGN +-mean|x| with x's signs; the residual left in x is exactly
 * what decoding misses; many steps of feedback lose nothing (the decoded sum
 * plus the last residual is the inputs' sum); a block with an infinity or NaN
 * decodes to NaN and keeps no residual, its neighbours unharmed; blocks of
 * tiny values (a scale with no finite inverse) code as numbers, never NaN.
 */
#include <float.h>
#include <math.h>

#include "reduce/quantize.h"
#include "test_util.h"

#define B COLLIE_QUANT_BLOCK

static uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

/* Values of many magnitudes and both signs, some exact zeros. */
static void fill(float *x, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t r = lcg(&seed);
        x[i] = r % 17 == 0 ? 0.0f
                           : ((float)(lcg(&seed) >> 8) / 16777216.0f - 0.5f) *
                                 (float)(1u << (r % 12)) / 64.0f;
    }
}

static void check_one(int kind, size_t n, uint32_t seed)
{
    float *x = malloc((n + 1) * sizeof *x), *orig = malloc((n + 1) * sizeof *x);
    float *y = malloc((n + 1) * sizeof *y);
    size_t bytes = collie__quant_bytes(kind, n);
    size_t want = (n + B - 1) / B * 4 + (kind == COLLIE__QUANT_INT8 ? n : (n + 7) / 8);
    CHECK(bytes == want, "kind %d n %zu: %zu bytes, want %zu", kind, n, bytes, want);
    unsigned char *code = malloc(bytes + 1);
    CHECK(x && orig && y && code, "no memory");
    fill(x, n, seed);
    memcpy(orig, x, n * sizeof *x);
    collie__quant_encode(kind, x, n, code);
    collie__quant_decode(kind, code, n, y);
    for (size_t b = 0; b * B < n; b++) {
        size_t m = n - b * B < B ? n - b * B : B;
        double big = 0, mean = 0;
        for (size_t i = 0; i < m; i++) {
            big = fmax(big, fabs(orig[b * B + i]));
            mean += fabs(orig[b * B + i]) / (double)m;
        }
        for (size_t i = b * B; i < b * B + m; i++) {
            /* the residual is what decoding misses, to the rounding of one subtraction */
            CHECK(fabs((double)orig[i] - y[i] - x[i]) <=
                      1e-6 * (fabs(orig[i]) + fabs(y[i])) + 1e-30,
                  "kind %d n %zu element %zu: x %g decoded %g residual %g", kind, n, i, orig[i],
                  y[i], x[i]);
            if (kind == COLLIE__QUANT_INT8)
                CHECK(fabs((double)orig[i] - y[i]) <= big / 254 * (1 + 1e-5),
                      "n %zu element %zu: x %g decoded %g, block max %g", n, i, orig[i], y[i], big);
            else
                CHECK(fabs(fabs(y[i]) - mean) <= 1e-5 * mean && (orig[i] < 0) == (y[i] < 0),
                      "n %zu element %zu: x %g decoded %g, block mean |x| %g", n, i, orig[i], y[i],
                      mean);
        }
    }
    free(x);
    free(orig);
    free(y);
    free(code);
}

/* T steps of feedback: the decoded sum plus the last residual is the inputs' sum. */
static void check_feedback(int kind, size_t n)
{
    enum { T = 200 };
    float *res = calloc(n, sizeof *res), *g = malloc(n * sizeof *g), *y = malloc(n * sizeof *y);
    double *in = calloc(n, sizeof *in), *out = calloc(n, sizeof *out);
    unsigned char *code = malloc(collie__quant_bytes(kind, n));
    CHECK(res && g && y && in && out && code, "no memory");
    double scale = 0;
    for (int t = 0; t < T; t++) {
        fill(g, n, 1000u + (uint32_t)t);
        for (size_t i = 0; i < n; i++) {
            in[i] += g[i];
            res[i] += g[i];
            scale = fmax(scale, fabs(g[i]));
        }
        collie__quant_encode(kind, res, n, code);
        collie__quant_decode(kind, code, n, y);
        for (size_t i = 0; i < n; i++)
            out[i] += y[i];
    }
    for (size_t i = 0; i < n; i++)
        CHECK(fabs(out[i] + res[i] - in[i]) <= 1e-5 * T * scale,
              "kind %d element %zu: decoded %g + residual %g, inputs %g", kind, i, out[i], res[i],
              in[i]);
    free(res);
    free(g);
    free(y);
    free(in);
    free(out);
    free(code);
}

static void check_nonfinite(int kind)
{
    size_t n = 3 * B;
    float x[3 * B], y[3 * B];
    unsigned char code[3 * B + 64];
    fill(x, n, 7);
    x[B + 5] = kind == COLLIE__QUANT_INT8 ? INFINITY : NAN;
    collie__quant_encode(kind, x, n, code);
    collie__quant_decode(kind, code, n, y);
    for (size_t i = 0; i < n; i++) {
        int in_bad = i >= B && i < 2 * B;
        CHECK(in_bad ? isnan(y[i]) && x[i] == 0 : isfinite(y[i]) && isfinite(x[i]),
              "kind %d element %zu: decoded %g residual %g", kind, i, y[i], x[i]);
    }
}

/*
 * Blocks whose largest |x| is tiny: subnormal, and normal but under 127 FLT_MIN, with zeros
 * among them.  The scale's inverse overflowed there and 0 x inf made the residual NaN,
 * which the next step decoded as NaN: INT8 training of a 784-256-128-10 MLP died in its
 * 60th step.  Decoded and residual must stay finite and sum to x.
 */
static void check_tiny(int kind)
{
    static const float bigs[] = {1e-44f, FLT_MIN / 2, FLT_MIN, 100 * FLT_MIN, 127 * FLT_MIN};
    for (size_t k = 0; k < sizeof bigs / sizeof bigs[0]; k++) {
        float x[B], y[B], was[B];
        unsigned char code[B + 64];
        for (size_t i = 0; i < B; i++)
            was[i] = x[i] = i % 3 == 0 ? 0.0f : bigs[k] * (float)(i % 7) / 6.0f;
        collie__quant_encode(kind, x, B, code);
        collie__quant_decode(kind, code, B, y);
        for (size_t i = 0; i < B; i++)
            CHECK(isfinite(y[i]) && isfinite(x[i]) && y[i] + x[i] == was[i],
                  "kind %d, max %g, element %zu: %g decoded + residual %g, was %g", kind,
                  (double)bigs[k], i, (double)y[i], (double)x[i], (double)was[i]);
    }
}

int main(void)
{
    static const size_t sizes[] = {1, 7, 8, 9, B - 1, B, B + 1, 3 * B + 13, 10000};
    for (int kind = COLLIE__QUANT_INT8; kind <= COLLIE__QUANT_SIGN; kind++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            check_one(kind, sizes[k], 17u * (uint32_t)k + 1);
        check_feedback(kind, 3 * B + 13);
        check_nonfinite(kind);
        check_tiny(kind);
    }
    printf("quantize: ok\n");
    return 0;
}
