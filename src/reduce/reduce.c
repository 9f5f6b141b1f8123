/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce.c - the dtype x op reduction kernels.
 *
 * Each kernel walks the arrays in blocks that stay in L1: a block of the
 * first source is copied into an accumulator, every further source is
 * combined into it, and the result is stored once.  Memory traffic is one
 * read per source and one write, dst may alias a source, and the inner loops
 * are plain element-wise loops over restrict pointers that the compiler
 * vectorises.  Signed integers add and multiply in their unsigned twin, so
 * overflow wraps (as it does in every MPI) instead of being undefined.
 */
#include "reduce.h"

#include <stdint.h>
#include <string.h>

#include "../core/op.h"
#include "copy.h"
#include "half.h"
#include "stream.h"

#define BLOCK 1024 /* elements; 8 KiB for the widest type */

/* x86-64: an AVX2 version of each kernel too, chosen at load time (ifunc). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KERNEL __attribute__((target_clones("avx2", "default")))
#else
#define KERNEL
#endif

/*
 * The one store of each output block: through the cache, or around it
 * (stream.h).  Not memcpy, whose `rep movsb` runs at a tenth of a loop's
 * rate on some CPUs when dst is off the block's alignment (copy.h).
 */
static void store(void *dst, const void *block, size_t bytes, int stream)
{
    if (stream)
        collie__copy_stream(dst, block, bytes);
    else
        collie__copy(dst, block, bytes);
}

#define DEFINE_COMBINE(NAME, T, W)                                                                 \
    static void combine_##NAME(T *restrict acc, const T *restrict src, size_t m, collie_op op)     \
    {                                                                                              \
        switch (op) {                                                                              \
        case COLLIE_SUM:                                                                           \
        case COLLIE_AVG:                                                                           \
            for (size_t i = 0; i < m; i++)                                                         \
                acc[i] = (T)((W)acc[i] + (W)src[i]);                                               \
            break;                                                                                 \
        case COLLIE_PROD:                                                                          \
            for (size_t i = 0; i < m; i++)                                                         \
                acc[i] = (T)((W)acc[i] * (W)src[i]);                                               \
            break;                                                                                 \
        case COLLIE_MIN:                                                                           \
            for (size_t i = 0; i < m; i++)                                                         \
                acc[i] = src[i] < acc[i] ? src[i] : acc[i];                                        \
            break;                                                                                 \
        case COLLIE_MAX:                                                                           \
            for (size_t i = 0; i < m; i++)                                                         \
                acc[i] = src[i] > acc[i] ? src[i] : acc[i];                                        \
            break;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    static void average_##NAME(T *restrict acc, size_t m, int divisor)                             \
    {                                                                                              \
        for (size_t i = 0; i < m; i++)                                                             \
            acc[i] = (T)(acc[i] / divisor); /* int divisor: no narrowing */                        \
    }

#define DEFINE_NATIVE(NAME, T, W)                                                                  \
    DEFINE_COMBINE(NAME, T, W)                                                                     \
    KERNEL static void reduce_##NAME(void *dst, void *copy, int copy_stream,                       \
                                     const void *const *srcs, int nsrc, size_t count,              \
                                     collie_op op, int divisor, int stream)                        \
    {                                                                                              \
        T acc[BLOCK];                                                                              \
        for (size_t base = 0; base < count; base += BLOCK) {                                       \
            size_t m = count - base < BLOCK ? count - base : BLOCK;                                \
            collie__copy(acc, (const T *)srcs[0] + base, m * sizeof(T));                           \
            for (int s = 1; s < nsrc; s++)                                                         \
                combine_##NAME(acc, (const T *)srcs[s] + base, m, op);                             \
            if (op == COLLIE_AVG)                                                                  \
                average_##NAME(acc, m, divisor);                                                   \
            store((T *)dst + base, acc, m * sizeof(T), stream);                                    \
            if (copy)                                                                              \
                store((T *)copy + base, acc, m * sizeof(T), copy_stream);                          \
        }                                                                                          \
    }

/* Arithmetic is done in W: the type itself for floats, the unsigned twin for integers. */
DEFINE_NATIVE(f32, float, float)
DEFINE_NATIVE(f64, double, double)
DEFINE_NATIVE(i8, int8_t, uint8_t)
DEFINE_NATIVE(u8, uint8_t, uint8_t)
DEFINE_NATIVE(i32, int32_t, uint32_t)
DEFINE_NATIVE(i64, int64_t, uint64_t)

/*
 * float16 and bfloat16: widen a block to float32, combine there, narrow once,
 * with the array converters of convert.c.
 */
#define DEFINE_HALF(NAME, WIDEN, NARROW)                                                           \
    KERNEL static void reduce_##NAME(void *dst, void *copy, int copy_stream,                       \
                                     const void *const *srcs, int nsrc, size_t count,              \
                                     collie_op op, int divisor, int stream)                        \
    {                                                                                              \
        float acc[BLOCK], tmp[BLOCK];                                                              \
        uint16_t out[BLOCK];                                                                       \
        for (size_t base = 0; base < count; base += BLOCK) {                                       \
            size_t m = count - base < BLOCK ? count - base : BLOCK;                                \
            WIDEN(acc, (const uint16_t *)srcs[0] + base, m);                                       \
            for (int s = 1; s < nsrc; s++) {                                                       \
                WIDEN(tmp, (const uint16_t *)srcs[s] + base, m);                                   \
                combine_f32(acc, tmp, m, op);                                                      \
            }                                                                                      \
            if (op == COLLIE_AVG)                                                                  \
                average_f32(acc, m, divisor);                                                      \
            NARROW(out, acc, m);                                                                   \
            store((uint16_t *)dst + base, out, m * 2, stream);                                     \
            if (copy)                                                                              \
                store((uint16_t *)copy + base, out, m * 2, copy_stream);                           \
        }                                                                                          \
    }

DEFINE_HALF(f16, collie__f16_widen, collie__f16_narrow)
DEFINE_HALF(bf16, collie__bf16_widen, collie__bf16_narrow)

/*
 * Up to SMALL elements, one pass element by element: each output element
 * from all its sources, no blocks.  A block's copies in and out were memcpy
 * of a size the compiler knows is at most BLOCK elements, which it inlined
 * as `rep movsq`: about 30 ns to start here, however few bytes it moved
 * (collie__copy's calls now, no cheaper to start).
 * Measured then, a reduce of 2 sources: float32 at 2-8 elements 30-46 ns
 * through the blocks, 5-10 this way (a 2-rank allreduce of 8 bytes took
 * 0.53 us against 0.46 for 4 bytes); float16 at 4-7 elements 65-77 ns
 * blocked, 17-29 this way.
 * The same operations in the same order per element (the half types
 * widened to float32, combined there and rounded once, with half.h's
 * conversions, which round as F16C does), so the same bits.  Defined
 * apart from the blocked kernels, which it leaves as they were compiled:
 * their loops' speed moves 1.3x with where they land in the code.
 */
#define SMALL 8

/* Element i of p as the type computed in, and back. */
#define DEFINE_ACCESS(NAME, T, STORED, WIDEN, NARROW)                                              \
    static inline T load_##NAME(const void *p, size_t i) { return WIDEN(((const STORED *)p)[i]); } \
    static inline void store_##NAME(void *p, size_t i, T v) { ((STORED *)p)[i] = NARROW(v); }

#define AS_IS(x) (x)
DEFINE_ACCESS(f32, float, float, AS_IS, AS_IS)
DEFINE_ACCESS(f64, double, double, AS_IS, AS_IS)
DEFINE_ACCESS(i8, int8_t, int8_t, AS_IS, AS_IS)
DEFINE_ACCESS(u8, uint8_t, uint8_t, AS_IS, AS_IS)
DEFINE_ACCESS(i32, int32_t, int32_t, AS_IS, AS_IS)
DEFINE_ACCESS(i64, int64_t, int64_t, AS_IS, AS_IS)
DEFINE_ACCESS(f16, float, uint16_t, collie__half_to_float, collie__float_to_half)
DEFINE_ACCESS(bf16, float, uint16_t, collie__bf16_to_float, collie__float_to_bf16)

#define SMALL_LOOP(NAME, T, EXPR)                                                                  \
    for (size_t i = 0; i < count; i++) {                                                           \
        T a = load_##NAME(srcs[0], i);                                                             \
        for (int s = 1; s < nsrc; s++) {                                                           \
            T b = load_##NAME(srcs[s], i);                                                         \
            a = (EXPR);                                                                            \
        }                                                                                          \
        store_##NAME(dst, i, op == COLLIE_AVG ? (T)(a / divisor) : a);                             \
    }

/* T: the type computed in; W: the one its arithmetic wraps in (as DEFINE_NATIVE's). */
#define DEFINE_SMALL(NAME, T, W)                                                                   \
    static void small_##NAME(void *dst, const void *const *srcs, int nsrc, size_t count,           \
                             collie_op op, int divisor, int stream)                                \
    {                                                                                              \
        (void)stream;                                                                              \
        switch (op) {                                                                              \
        case COLLIE_SUM:                                                                           \
        case COLLIE_AVG: SMALL_LOOP(NAME, T, (T)((W)a + (W)b)); break;                             \
        case COLLIE_PROD: SMALL_LOOP(NAME, T, (T)((W)a * (W)b)); break;                            \
        case COLLIE_MIN: SMALL_LOOP(NAME, T, b < a ? b : a); break;                                \
        case COLLIE_MAX: SMALL_LOOP(NAME, T, b > a ? b : a); break;                                \
        }                                                                                          \
    }

DEFINE_SMALL(f32, float, float)
DEFINE_SMALL(f64, double, double)
DEFINE_SMALL(i8, int8_t, uint8_t)
DEFINE_SMALL(u8, uint8_t, uint8_t)
DEFINE_SMALL(i32, int32_t, uint32_t)
DEFINE_SMALL(i64, int64_t, uint64_t)
DEFINE_SMALL(f16, float, float)
DEFINE_SMALL(bf16, float, float)

/*
 * Up to CACHED_BYTES, from 2 sources on, in dst itself: srcs[0] copied in
 * by the C library's memcpy (a call: the size is not bounded here, so the
 * compiler does not inline it as `rep movsq`), the rest combined into it,
 * with no accumulator (the blocks' two inlined copies start at 30 ns each:
 * a 64-float reduce of 2 sources took 32 ns blocked, 15 this way).  Only
 * where dst is none of the later sources (copied over first, it would lose
 * one before it is read); dst may be srcs[0], which is then combined into in
 * place.  The same order of operations per element as the blocks, so the
 * same bits.  (A first pass of srcs[0] op srcs[1] straight into dst took
 * 2-3 ns less at 16-128 elements, and no less in an allreduce: 30 runs,
 * 0.93-1.05x; not worth a second copy of combine's switch.)
 */
#define DEFINE_CACHED(NAME, T)                                                                     \
    KERNEL static void cached_##NAME(void *dst, const void *const *srcs, int nsrc, size_t count,   \
                                     collie_op op, int divisor, int stream)                        \
    {                                                                                              \
        (void)stream;                                                                              \
        if (dst != srcs[0])                                                                        \
            memcpy(dst, srcs[0], count * sizeof(T));                                               \
        for (int s = 1; s < nsrc; s++)                                                             \
            combine_##NAME(dst, srcs[s], count, op);                                               \
        if (op == COLLIE_AVG)                                                                      \
            average_##NAME(dst, count, divisor);                                                   \
    }

DEFINE_CACHED(f32, float)
DEFINE_CACHED(f64, double)
DEFINE_CACHED(i8, int8_t)
DEFINE_CACHED(u8, uint8_t)
DEFINE_CACHED(i32, int32_t)
DEFINE_CACHED(i64, int64_t)

typedef void (*reduce_fn)(void *, const void *const *, int, size_t, collie_op, int, int);

/*
 * Each cached path and the most elements it takes: CACHED_BYTES.  Past
 * that the blocks win (measured at 2 ranks: allreduce of 1.7 KiB 0.96x the
 * blocks' time this way, of 2.2-3.4 KiB 1.02-1.05x): the block's one store
 * to dst, as `rep movsq`, writes whole lines without reading them first,
 * where the combines' vector stores read each line of dst in.  The half
 * types widen and narrow whole blocks: none.
 */
#define CACHED_BYTES 2048
static const struct {
    reduce_fn run;
    size_t most;
} cached_kernels[] = {
    [COLLIE_FLOAT32] = {cached_f32, CACHED_BYTES / 4},
    [COLLIE_FLOAT64] = {cached_f64, CACHED_BYTES / 8},
    [COLLIE_INT8] = {cached_i8, BLOCK},
    [COLLIE_UINT8] = {cached_u8, BLOCK},
    [COLLIE_INT32] = {cached_i32, CACHED_BYTES / 4},
    [COLLIE_INT64] = {cached_i64, CACHED_BYTES / 8},
};

/* Whether dst is one of srcs[1..nsrc-1]. */
static int is_later_source(const void *dst, const void *const *srcs, int nsrc)
{
    for (int s = 1; s < nsrc; s++)
        if (srcs[s] == dst)
            return 1;
    return 0;
}

/* Each small path and the most elements it takes (8 float16 go faster blocked: F16C widens 8 at once). */
static const struct {
    reduce_fn run;
    size_t most;
} small_kernels[] = {
    [COLLIE_FLOAT32] = {small_f32, SMALL},     [COLLIE_FLOAT64] = {small_f64, SMALL},
    [COLLIE_FLOAT16] = {small_f16, SMALL - 1}, [COLLIE_BFLOAT16] = {small_bf16, SMALL},
    [COLLIE_INT8] = {small_i8, SMALL},         [COLLIE_UINT8] = {small_u8, SMALL},
    [COLLIE_INT32] = {small_i32, SMALL},       [COLLIE_INT64] = {small_i64, SMALL},
};

typedef void (*block_fn)(void *, void *, int, const void *const *, int, size_t, collie_op, int,
                         int);

static const block_fn kernels[] = {
    [COLLIE_FLOAT32] = reduce_f32,   [COLLIE_FLOAT64] = reduce_f64, [COLLIE_FLOAT16] = reduce_f16,
    [COLLIE_BFLOAT16] = reduce_bf16, [COLLIE_INT8] = reduce_i8,     [COLLIE_UINT8] = reduce_u8,
    [COLLIE_INT32] = reduce_i32,     [COLLIE_INT64] = reduce_i64,
};

void collie__reduce(void *dst, const void *const *srcs, int nsrc, size_t count, collie_dtype dtype,
                    collie_op op, int divisor, int stream)
{
    if (count <= small_kernels[dtype].most && !stream)
        small_kernels[dtype].run(dst, srcs, nsrc, count, op, divisor, stream);
    else if (count <= cached_kernels[dtype].most && nsrc >= 2 && !stream &&
             !is_later_source(dst, srcs, nsrc))
        cached_kernels[dtype].run(dst, srcs, nsrc, count, op, divisor, stream);
    else
        kernels[dtype](dst, NULL, 0, srcs, nsrc, count, op, divisor, stream);
}

void collie__reduce_twice(void *dst, void *copy, int copy_stream, const void *const *srcs, int nsrc,
                          size_t count, collie_dtype dtype, collie_op op, int divisor)
{
    if (count <= small_kernels[dtype].most || count <= cached_kernels[dtype].most) {
        collie__reduce(dst, srcs, nsrc, count, dtype, op, divisor, 0);
        store(copy, dst, count * collie__dtype_size(dtype), copy_stream);
    } else {
        kernels[dtype](dst, copy, copy_stream, srcs, nsrc, count, op, divisor, 0);
    }
}
