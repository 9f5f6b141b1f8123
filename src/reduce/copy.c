/* copy.c - copies through the cache with vector loads and stores (copy.h). */
#include "copy.h"

#include <stdint.h>
#include <string.h>

/* Below this glibc's memcpy uses vector moves too, and the call costs less. */
#define COPY_LOOP_MIN 2048

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/*
 * Both loops: the first and the last step's bytes with unaligned moves, the
 * steps between with stores aligned to their width.  The copy is at least
 * COPY_LOOP_MIN bytes, so the overlapping first and last steps stay inside
 * it (bytes copied twice are copied alike: the regions do not overlap).
 */
#define AVX2_STEP 128

#define AVX2_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))

__attribute__((target("avx2"))) static inline void step_avx2(unsigned char *d,
                                                             const unsigned char *s, int aligned)
{
    __m256i a = AVX2_LOAD(s), b = AVX2_LOAD(s + 32), c = AVX2_LOAD(s + 64), e = AVX2_LOAD(s + 96);
    if (aligned) {
        _mm256_store_si256((__m256i *)(void *)d, a);
        _mm256_store_si256((__m256i *)(void *)(d + 32), b);
        _mm256_store_si256((__m256i *)(void *)(d + 64), c);
        _mm256_store_si256((__m256i *)(void *)(d + 96), e);
    } else {
        _mm256_storeu_si256((__m256i *)(void *)d, a);
        _mm256_storeu_si256((__m256i *)(void *)(d + 32), b);
        _mm256_storeu_si256((__m256i *)(void *)(d + 64), c);
        _mm256_storeu_si256((__m256i *)(void *)(d + 96), e);
    }
}

__attribute__((target("avx2"))) static void copy_avx2(unsigned char *d, const unsigned char *s,
                                                      size_t n)
{
    size_t head = 32 - ((uintptr_t)d & 31);
    step_avx2(d, s, 0);
    step_avx2(d + n - AVX2_STEP, s + n - AVX2_STEP, 0);
    for (size_t i = head; i + AVX2_STEP <= n; i += AVX2_STEP)
        step_avx2(d + i, s + i, 1);
}

#define SSE2_STEP 64

#define SSE2_LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))

static inline void step_sse2(unsigned char *d, const unsigned char *s, int aligned)
{
    __m128i a = SSE2_LOAD(s), b = SSE2_LOAD(s + 16), c = SSE2_LOAD(s + 32), e = SSE2_LOAD(s + 48);
    if (aligned) {
        _mm_store_si128((__m128i *)(void *)d, a);
        _mm_store_si128((__m128i *)(void *)(d + 16), b);
        _mm_store_si128((__m128i *)(void *)(d + 32), c);
        _mm_store_si128((__m128i *)(void *)(d + 48), e);
    } else {
        _mm_storeu_si128((__m128i *)(void *)d, a);
        _mm_storeu_si128((__m128i *)(void *)(d + 16), b);
        _mm_storeu_si128((__m128i *)(void *)(d + 32), c);
        _mm_storeu_si128((__m128i *)(void *)(d + 48), e);
    }
}

/* The same with the 16-byte moves every x86-64 has. */
static void copy_sse2(unsigned char *d, const unsigned char *s, size_t n)
{
    size_t head = 16 - ((uintptr_t)d & 15);
    step_sse2(d, s, 0);
    step_sse2(d + n - SSE2_STEP, s + n - SSE2_STEP, 0);
    for (size_t i = head; i + SSE2_STEP <= n; i += SSE2_STEP)
        step_sse2(d + i, s + i, 1);
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
