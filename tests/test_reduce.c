/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reduce.c - the reduction kernels and float16/bfloat16 conversions,
 * against independent references: the compiler's _Float16 conversions
 * (correctly rounded), a bfloat16 rounding done in double, and plain
 * element-by-element loops for every dtype x op x number of sources; and
 * the library's copies (copy.h), byte for byte.
 */
#include <math.h>

#include "reduce/copy.h"
#include "reduce/half.h"
#include "reduce/reduce.h"
#include "test_util.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static void test_half(void)
{
    for (uint32_t h = 0; h < 65536; h++) { /* every float16, widened */
        _Float16 ref;
        uint16_t h16 = (uint16_t)h;
        memcpy(&ref, &h16, 2);
        float want = (float)ref, got = collie__half_to_float(h16);
        CHECK(isnan(want) ? isnan(got) : collie__f2u(got) == collie__f2u(want),
              "half_to_float(%#x) = %a, want %a", h, got, want);
    }
    long checked = 0;
    for (uint32_t h = 0; h < 0x7c00; h++) { /* every finite half, its midpoints and neighbours */
        float lo = collie__half_to_float((uint16_t)h),
              hi = collie__half_to_float((uint16_t)(h + 1));
        float mid = lo + (hi - lo) / 2;
        float probes[] = {lo, mid, nextafterf(mid, 0), nextafterf(mid, INFINITY), -mid, -lo};
        for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++, checked++) {
            _Float16 ref = (_Float16)probes[k];
            uint16_t want, got = collie__float_to_half(probes[k]);
            memcpy(&want, &ref, 2);
            CHECK(got == want, "float_to_half(%a) = %#x, want %#x", probes[k], got, want);
        }
    }
    for (int i = 0; i < 4000000; i++, checked++) { /* random bit patterns, NaNs included */
        float f = collie__u2f((uint32_t)next());
        _Float16 ref = (_Float16)f;
        uint16_t want, got = collie__float_to_half(f);
        memcpy(&want, &ref, 2);
        if (isnan(f))
            CHECK((got & 0x7c00) == 0x7c00 && (got & 0x3ff), "float_to_half(NaN) = %#x", got);
        else
            CHECK(got == want, "float_to_half(%a) = %#x, want %#x", f, got, want);
    }
    printf("float16: 65536 widenings, %ld roundings exact\n", checked);
}

static uint16_t bf16_reference(float f)
{
    uint32_t u = collie__f2u(f);
    if (isnan(f))
        return (uint16_t)((u >> 16) | 0x40);
    if (isinf(f))
        return (uint16_t)(u >> 16);
    /* In magnitudes: truncation, and the next bfloat16 one ulp up (2^128 past the largest). */
    uint32_t e = (u >> 23) & 0xff;
    double down = fabs((double)collie__u2f(u & 0xffff0000u));
    double ulp = ldexp(1.0, (e ? (int)e : 1) - 127 - 7);
    double dd = fabs((double)f) - down, du = down + ulp - fabs((double)f);
    if (dd < du || (dd == du && !((u >> 16) & 1)))
        return (uint16_t)(u >> 16);
    return (uint16_t)((u >> 16) + 1);
}

static void test_bf16(void)
{
    for (int i = 0; i < 4000000; i++) {
        uint32_t u = (uint32_t)next();
        if (i % 4 == 0)
            u = (u & 0xffff0000u) | 0x8000u; /* exact ties */
        float f = collie__u2f(u);
        uint16_t got = collie__float_to_bf16(f), want = bf16_reference(f);
        CHECK(got == want || (isnan(f) && (got & 0x7f80) == 0x7f80 && (got & 0x7f)),
              "float_to_bf16(%a) = %#x, want %#x", f, got, want);
        CHECK(collie__f2u(collie__bf16_to_float(got)) == (uint32_t)got << 16, "bf16 widen");
    }
    printf("bfloat16: 4000000 roundings exact\n");
}

/* Reference: element by element, in source order, in float arithmetic as the kernel does. */
static float combine(float a, float b, collie_op op)
{
    switch (op) {
    case COLLIE_SUM:
    case COLLIE_AVG: return a + b;
    case COLLIE_PROD: return a * b;
    case COLLIE_MIN: return b < a ? b : a;
    case COLLIE_MAX: return b > a ? b : a;
    }
    return 0;
}

static void reference(collie_dtype t, collie_op op, const unsigned char *const *src, int n,
                      size_t i, unsigned char *out, int divisor)
{
    switch (t) {
    case COLLIE_FLOAT32:
    case COLLIE_FLOAT16:
    case COLLIE_BFLOAT16: {
        float v[16] = {0};
        for (int s = 0; s < n; s++) {
            if (t == COLLIE_FLOAT32)
                memcpy(&v[s], src[s] + 4 * i, 4);
            else {
                uint16_t h;
                memcpy(&h, src[s] + 2 * i, 2);
                _Float16 x;
                memcpy(&x, &h, 2);
                v[s] = t == COLLIE_BFLOAT16 ? collie__u2f((uint32_t)h << 16) : (float)x;
            }
        }
        float acc = v[0];
        for (int s = 1; s < n; s++)
            acc = combine(acc, v[s], op);
        if (op == COLLIE_AVG)
            acc /= (float)divisor;
        if (t == COLLIE_FLOAT32)
            memcpy(out, &acc, 4);
        else {
            uint16_t h;
            if (t == COLLIE_BFLOAT16)
                h = bf16_reference(acc);
            else {
                _Float16 r = (_Float16)acc;
                memcpy(&h, &r, 2);
            }
            memcpy(out, &h, 2);
        }
        break;
    }
    case COLLIE_FLOAT64: {
        double acc, v;
        memcpy(&acc, src[0] + 8 * i, 8);
        for (int s = 1; s < n; s++) {
            memcpy(&v, src[s] + 8 * i, 8);
            acc = op == COLLIE_SUM || op == COLLIE_AVG ? acc + v
                  : op == COLLIE_PROD                  ? acc * v
                  : op == COLLIE_MIN                   ? (v < acc ? v : acc)
                                                       : (v > acc ? v : acc);
        }
        if (op == COLLIE_AVG)
            acc /= divisor;
        memcpy(out, &acc, 8);
        break;
    }
    default: { /* integers: wrap like unsigned, compare signed */
        size_t es = test_dtype_size(t);
        int64_t acc = 0, v = 0;
        for (int s = 0; s < n; s++) {
            switch (t) {
            case COLLIE_INT8: v = ((const int8_t *)src[s])[i]; break;
            case COLLIE_UINT8: v = ((const uint8_t *)src[s])[i]; break;
            case COLLIE_INT32: v = ((const int32_t *)(const void *)src[s])[i]; break;
            default: memcpy(&v, src[s] + 8 * i, 8);
            }
            if (!s) {
                acc = v;
                continue;
            }
            uint64_t ua = (uint64_t)acc, uv = (uint64_t)v;
            acc = op == COLLIE_SUM || op == COLLIE_AVG ? (int64_t)(ua + uv)
                  : op == COLLIE_PROD                  ? (int64_t)(ua * uv)
                  : op == COLLIE_MIN                   ? (v < acc ? v : acc)
                                                       : (v > acc ? v : acc);
            if (t == COLLIE_INT8)
                acc = (int8_t)acc;
            if (t == COLLIE_UINT8)
                acc = (uint8_t)acc;
            if (t == COLLIE_INT32)
                acc = (int32_t)(uint32_t)acc;
        }
        if (op == COLLIE_AVG)
            acc /= divisor;
        memcpy(out, &acc, es); /* little-endian: the low bytes */
    }
    }
}

static void test_kernels(void)
{
    /* 8: the last small count; 9-512 float32: reduced straight into dst; then blocks */
    static const size_t counts[] = {1, 2, 7, 8, 9, 64, 256, 257, 512, 513, 1023, 1024, 1025, 5000};
    static const int nsrcs[] = {1, 2, 3, 8};
    long cases = 0;
    for (int t = COLLIE_FLOAT32; t <= COLLIE_INT64; t++)
        for (int op = COLLIE_SUM; op <= COLLIE_AVG; op++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                for (size_t k = 0; k < sizeof nsrcs / sizeof nsrcs[0]; k++)
                    /* alias 0: dst apart; 1: dst is the last source; 2: the first */
                    for (int alias = 0; alias < 3; alias++, cases++) {
                        size_t es = test_dtype_size((collie_dtype)t), n = counts[c];
                        int ns = nsrcs[k];
                        unsigned char *src[8], *copy[8], *dst = malloc(n * es), want[8];
                        for (int s = 0; s < ns; s++) {
                            src[s] = malloc(n * es);
                            copy[s] = malloc(n * es);
                            for (size_t b = 0; b < n * es; b++)
                                src[s][b] = (unsigned char)next();
                            if (t <= COLLIE_BFLOAT16 &&
                                op == COLLIE_PROD) /* keep products finite-ish */
                                for (size_t i = 0; i < n; i++)
                                    test_put((collie_dtype)t, src[s], i, (double)(next() % 7) - 3);
                            memcpy(copy[s], src[s], n * es);
                        }
                        unsigned char *out = alias == 1 ? src[ns - 1] : alias ? src[0] : dst;
                        collie__reduce(out, (const void *const *)src, ns, n, (collie_dtype)t,
                                       (collie_op)op, 3,
                                       alias == 1 && n > 1000); /* streaming too */
                        for (size_t i = 0; i < n; i++) {
                            reference((collie_dtype)t, (collie_op)op,
                                      (const unsigned char *const *)copy, ns, i, want, 3);
                            int same = !memcmp(out + i * es, want, es);
                            if (!same &&
                                t <=
                                    COLLIE_BFLOAT16) { /* NaN payloads may differ: both NaN is fine */
                                double a = 0, b = 0;
                                if (t == COLLIE_FLOAT64) {
                                    memcpy(&a, out + i * es, 8);
                                    memcpy(&b, want, 8);
                                } else if (t == COLLIE_FLOAT32) {
                                    float x, y;
                                    memcpy(&x, out + i * es, 4);
                                    memcpy(&y, want, 4);
                                    a = x;
                                    b = y;
                                } else {
                                    uint16_t x, y;
                                    memcpy(&x, out + i * es, 2);
                                    memcpy(&y, want, 2);
                                    a = t == COLLIE_FLOAT16 ? collie__half_to_float(x)
                                                            : collie__bf16_to_float(x);
                                    b = t == COLLIE_FLOAT16 ? collie__half_to_float(y)
                                                            : collie__bf16_to_float(y);
                                }
                                same = isnan(a) && isnan(b);
                            }
                            CHECK(same, "%s op=%d nsrc=%d count=%zu alias=%d: element %zu differs",
                                  test_dtype_name((collie_dtype)t), op, ns, n, alias, i);
                        }
                        for (int s = 0; s < ns; s++) {
                            free(src[s]);
                            free(copy[s]);
                        }
                        free(dst);
                    }
    printf("kernels: %ld dtype x op x count x sources cases exact\n", cases);
}

/*
 * collie__reduce_twice: dst and copy both hold exactly collie__reduce's
 * bytes (checked above against the references), with copy apart, the
 * last source or the first, its stores cached or streamed.
 */
static void test_twice(void)
{
    static const size_t counts[] = {1, 8, 9, 512, 513, 1024, 1025, 5000};
    long cases = 0;
    for (int t = COLLIE_FLOAT32; t <= COLLIE_INT64; t++)
        for (int op = COLLIE_SUM; op <= COLLIE_AVG; op++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                for (int ns = 1; ns <= 3; ns++)
                    for (int alias = 0; alias < 3; alias++)
                        for (int stream = 0; stream < 2; stream++, cases++) {
                            size_t es = test_dtype_size((collie_dtype)t), n = counts[c];
                            unsigned char *src[3], *want = malloc(n * es), *dst = malloc(n * es),
                                                   *apart = malloc(n * es);
                            for (int s = 0; s < ns; s++) {
                                src[s] = malloc(n * es);
                                for (size_t b = 0; b < n * es; b++)
                                    src[s][b] = (unsigned char)next();
                            }
                            collie__reduce(want, (const void *const *)src, ns, n, (collie_dtype)t,
                                           (collie_op)op, 3, 0);
                            unsigned char *copy = alias == 1 ? src[ns - 1] : alias ? src[0] : apart;
                            collie__reduce_twice(dst, copy, stream, (const void *const *)src, ns, n,
                                                 (collie_dtype)t, (collie_op)op, 3);
                            CHECK(!memcmp(dst, want, n * es) && !memcmp(copy, want, n * es),
                                  "reduce_twice %s op=%d nsrc=%d count=%zu alias=%d stream=%d: "
                                  "dst %s, copy %s",
                                  test_dtype_name((collie_dtype)t), op, ns, n, alias, stream,
                                  memcmp(dst, want, n * es) ? "differs" : "right",
                                  memcmp(copy, want, n * es) ? "differs" : "right");
                            for (int s = 0; s < ns; s++)
                                free(src[s]);
                            free(want);
                            free(dst);
                            free(apart);
                        }
    printf("reduce_twice: %ld cases, both outputs exact\n", cases);
}

/* collie_convert: the public face of the same conversions, element for element. */
static void test_convert(void)
{
    enum { N = 4099 };
    static float f[N], back[N];
    static uint16_t h[N];
    for (int i = 0; i < N; i++)
        f[i] = (float)((int64_t)(next() % 2000001) - 1000000) / 977.0f;
    CHECK(collie_convert(h, COLLIE_FLOAT16, f, COLLIE_FLOAT32, N) == COLLIE_OK, "to float16");
    for (int i = 0; i < N; i++)
        CHECK(h[i] == collie__float_to_half(f[i]), "float16 of %g: %#x", f[i], h[i]);
    CHECK(collie_convert(back, COLLIE_FLOAT32, h, COLLIE_FLOAT16, N) == COLLIE_OK, "from float16");
    for (int i = 0; i < N; i++)
        CHECK(back[i] == collie__half_to_float(h[i]), "float16 %#x back: %g", h[i], back[i]);
    CHECK(collie_convert(h, COLLIE_BFLOAT16, f, COLLIE_FLOAT32, N) == COLLIE_OK, "to bfloat16");
    for (int i = 0; i < N; i++)
        CHECK(h[i] == collie__float_to_bf16(f[i]), "bfloat16 of %g: %#x", f[i], h[i]);
    CHECK(collie_convert(back, COLLIE_FLOAT32, h, COLLIE_BFLOAT16, N) == COLLIE_OK, "from bf16");
    for (int i = 0; i < N; i++)
        CHECK(back[i] == collie__bf16_to_float(h[i]), "bfloat16 %#x back: %g", h[i], back[i]);
    h[0] = 0x1234;
    CHECK(collie_convert(h, COLLIE_INT8, f, COLLIE_FLOAT32, 1) == COLLIE_ERR_UNSUPPORTED &&
              h[0] == 0x1234,
          "an unsupported pair must be refused and write nothing");
    CHECK(collie_convert(NULL, COLLIE_FLOAT16, f, COLLIE_FLOAT32, 1) == COLLIE_ERR_INVALID_ARG,
          "NULL dst accepted");
    CHECK(collie_convert(NULL, COLLIE_FLOAT16, NULL, COLLIE_FLOAT32, 0) == COLLIE_OK,
          "count 0 is a no-op");
}

/*
 * Both copy loops, at every alignment of source and destination to 64
 * bytes, at sizes around the loop's threshold and its steps: every byte
 * copied, none written outside the destination.
 */
static void test_copies(void)
{
    enum { GUARD = 256, MOST = (1 << 20) + 13 };
    static const size_t sizes[] = {0,    1,    31,   127,  2047, 2048, 2049,      2080,
                                   2175, 2176, 2177, 4095, 4096, 5000, 65536 + 7, MOST};
    unsigned char *src = malloc(MOST + 64), *dst = malloc(MOST + 64 + 2 * GUARD);
    CHECK(src && dst, "no memory");
    for (size_t i = 0; i < MOST + 64; i++)
        src[i] = (unsigned char)next();
    void (*copies[])(void *, const void *, size_t) = {collie__copy, collie__copy_without_avx2};
    for (int c = 0; c < 2; c++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (size_t so = 0; so<64; so += sizes[k]> 65536 ? 21 : 1)
                for (size_t d = 0; d<64; d += sizes[k]> 65536 ? 13 : 3) {
                    size_t n = sizes[k];
                    memset(dst, 0xa5, MOST + 64 + 2 * GUARD);
                    unsigned char *to = dst + GUARD + d;
                    copies[c](to, src + so, n);
                    CHECK(memcmp(to, src + so, n) == 0, "copy %d of %zu bytes (+%zu, +%zu) differs",
                          c, n, so, d);
                    for (size_t i = 0; i < GUARD + d; i++)
                        CHECK(dst[i] == 0xa5, "copy %d of %zu bytes wrote %zu before", c, n,
                              GUARD + d - i);
                    for (size_t i = 0; i < GUARD; i++)
                        CHECK(to[n + i] == 0xa5, "copy %d of %zu bytes wrote %zu past", c, n, i);
                }
    free(src);
    free(dst);
}

int main(void)
{
    test_copies();
    test_half();
    test_bf16();
    test_kernels();
    test_twice();
    test_convert();
    return 0;
}
