/* SPDX-License-Identifier: BSD-3-Clause */
/* copy.c - copies through the cache with vector loads and stores (copy.h). */
#include "copy.h"

#include <stdint.h>
#include <string.h>

/* Below this glibc's memcpy uses vector moves too, and the call costs less. */
#define COPY_LOOP_MIN 2048

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/*
 * Both loops: the first and the last step's bytes, then the steps between
 * from the destination's first aligned address (an unaligned store at an
 * aligned address runs as an aligned one).  The copy is at least
 * COPY_LOOP_MIN bytes, so the overlapping first and last steps stay inside
 * it (bytes copied twice are copied alike: the regions do not overlap).
 */
#define AVX2_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define AVX2_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)

/* 128 bytes. */
__attribute__((target("avx2"))) static inline void step_avx2(unsigned char *d,
                                                             const unsigned char *s)
{
    __m256i a = AVX2_LOAD(s), b = AVX2_LOAD(s + 32), c = AVX2_LOAD(s + 64), e = AVX2_LOAD(s + 96);
    AVX2_STORE(d, a), AVX2_STORE(d + 32, b), AVX2_STORE(d + 64, c), AVX2_STORE(d + 96, e);
}

__attribute__((target("avx2"))) static void copy_avx2(unsigned char *d, const unsigned char *s,
                                                      size_t n)
{
    step_avx2(d, s);
    step_avx2(d + n - 128, s + n - 128);
    for (size_t i = 32 - ((uintptr_t)d & 31); i + 128 <= n; i += 128)
        step_avx2(d + i, s + i);
}

#define SSE2_LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define SSE2_STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)

/* 64 bytes, with the 16-byte moves every x86-64 has. */
static inline void step_sse2(unsigned char *d, const unsigned char *s)
{
    __m128i a = SSE2_LOAD(s), b = SSE2_LOAD(s + 16), c = SSE2_LOAD(s + 32), e = SSE2_LOAD(s + 48);
    SSE2_STORE(d, a), SSE2_STORE(d + 16, b), SSE2_STORE(d + 32, c), SSE2_STORE(d + 48, e);
}

static void copy_sse2(unsigned char *d, const unsigned char *s, size_t n)
{
    step_sse2(d, s);
    step_sse2(d + n - 64, s + n - 64);
    for (size_t i = 16 - ((uintptr_t)d & 15); i + 64 <= n; i += 64)
        step_sse2(d + i, s + i);
}

/*
 * Under ThreadSanitizer or AddressSanitizer, memcpy: they check its two
 * ranges in one call, and every move of the loop one by one.  Measured on
 * ThreadSanitizer's async.reduce.5 and async.reduce_scatter.8 against the
 * build before the loop: 1.27-1.40x slower with it, 1.05-1.07x with memcpy.
 * The loops themselves stay checked there: the tests call
 * collie__copy_without_avx2.
 */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define COPY_BY_MEMCPY 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define COPY_BY_MEMCPY 1
#endif
#endif
#ifndef COPY_BY_MEMCPY
#define COPY_BY_MEMCPY 0
#endif

void collie__copy(void *dst, const void *src, size_t n)
{
    if (n < COPY_LOOP_MIN || COPY_BY_MEMCPY)
        memcpy(dst, src, n);
    else if (__builtin_cpu_supports("avx2"))
        copy_avx2(dst, src, n);
    else
        copy_sse2(dst, src, n);
}

void collie__copy_without_avx2(void *dst, const void *src, size_t n)
{
    if (n < COPY_LOOP_MIN)
        memcpy(dst, src, n);
    else
        copy_sse2(dst, src, n);
}

#else

void collie__copy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
void collie__copy_without_avx2(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }

#endif
