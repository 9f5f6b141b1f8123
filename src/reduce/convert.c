/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * convert.c - float32 <-> float16 / bfloat16 over arrays: the reduction
 * kernels' converters, and collie_convert() for callers (the compressed
 * allreduce rounds its inputs and widens its result with it).
 */
#include <string.h>

#include "half.h"
#include "reduce.h"

/* x86-64: an AVX2 version too, chosen at load time (ifunc), as in reduce.c. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KERNEL __attribute__((target_clones("avx2", "default")))
#else
#define KERNEL
#endif

/* bfloat16 is the top half of a float32: plain loops, which vectorise. */
KERNEL void collie__bf16_widen(float *restrict out, const uint16_t *restrict in, size_t m)
{
    for (size_t i = 0; i < m; i++)
        out[i] = collie__bf16_to_float(in[i]);
}

KERNEL void collie__bf16_narrow(uint16_t *restrict out, const float *restrict in, size_t m)
{
    for (size_t i = 0; i < m; i++)
        out[i] = collie__float_to_bf16(in[i]);
}

static void f16_widen_portable(float *restrict out, const uint16_t *restrict in, size_t m)
{
    for (size_t i = 0; i < m; i++)
        out[i] = collie__half_to_float(in[i]);
}

static void f16_narrow_portable(uint16_t *restrict out, const float *restrict in, size_t m)
{
    for (size_t i = 0; i < m; i++)
        out[i] = collie__float_to_half(in[i]);
}

/*
 * float16 on x86-64 with F16C: the conversions are single instructions, with
 * the same round-to-nearest-even (NaN payloads may differ from the portable
 * code; every NaN stays a NaN).  CPUID says whether the CPU has AVX and F16C,
 * XGETBV whether the kernel saves the YMM registers; read once (CPUID traps
 * to the hypervisor in a VM), an idempotent race between first callers.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>

__attribute__((target("avx,f16c"))) static void f16_widen_f16c(float *restrict out,
                                                               const uint16_t *restrict in,
                                                               size_t m)
{
    size_t i = 0;
    for (; i + 8 <= m; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
    f16_widen_portable(out + i, in + i, m - i);
}

__attribute__((target("avx,f16c"))) static void f16_narrow_f16c(uint16_t *restrict out,
                                                                const float *restrict in, size_t m)
{
    size_t i = 0;
    for (; i + 8 <= m; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    f16_narrow_portable(out + i, in + i, m - i);
}

static int probe_f16c(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX) || !(c & bit_F16C))
        return 0;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6) == 6; /* XMM and YMM state enabled */
}

static int has_f16c(void)
{
    static atomic_int known; /* 0: not probed; 1: no; 2: yes */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        k = probe_f16c() ? 2 : 1;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 2;
}
#else
static int has_f16c(void) { return 0; }
#define f16_widen_f16c f16_widen_portable
#define f16_narrow_f16c f16_narrow_portable
#endif

void collie__f16_widen(float *restrict out, const uint16_t *restrict in, size_t m)
{
    (has_f16c() ? f16_widen_f16c : f16_widen_portable)(out, in, m);
}

void collie__f16_narrow(uint16_t *restrict out, const float *restrict in, size_t m)
{
    (has_f16c() ? f16_narrow_f16c : f16_narrow_portable)(out, in, m);
}

collie_status collie_convert(void *dst, collie_dtype dst_dtype, const void *src,
                             collie_dtype src_dtype, size_t count)
{
    if (count && (!dst || !src))
        return COLLIE_ERR_INVALID_ARG;
    if (src_dtype == COLLIE_FLOAT32 && dst_dtype == COLLIE_FLOAT32)
        memmove(dst, src, count * sizeof(float));
    else if (src_dtype == COLLIE_FLOAT32 && dst_dtype == COLLIE_FLOAT16)
        collie__f16_narrow(dst, src, count);
    else if (src_dtype == COLLIE_FLOAT32 && dst_dtype == COLLIE_BFLOAT16)
        collie__bf16_narrow(dst, src, count);
    else if (src_dtype == COLLIE_FLOAT16 && dst_dtype == COLLIE_FLOAT32)
        collie__f16_widen(dst, src, count);
    else if (src_dtype == COLLIE_BFLOAT16 && dst_dtype == COLLIE_FLOAT32)
        collie__bf16_widen(dst, src, count);
    else
        return COLLIE_ERR_UNSUPPORTED;
    return COLLIE_OK;
}
