/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * half.h - float16 and bfloat16 <-> float32, round to nearest even, written
 * without branches so that loops over arrays of them vectorise.
 *
 * float16 -> float32 is exact.  float32 -> float16 handles every class:
 * overflow to infinity, NaN stays (quiet) NaN, subnormals rounded by adding a
 * magic constant in float arithmetic, normals by the carry of a biased add.
 */
#ifndef COLLIE_HALF_H
#define COLLIE_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t collie__f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float collie__u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float collie__half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t bits = (uint32_t)(h & 0x7fffu) << 13; /* exponent and mantissa, in float position */
    uint32_t exp = bits & 0x0f800000u;
    uint32_t normal = bits + 0x38000000u;  /* rebias 15 -> 127 */
    uint32_t special = bits + 0x70000000u; /* infinity and NaN: exponent 255 */
    /* subnormal: the mantissa as a float with exponent -14, minus 2^-14 */
    uint32_t subnormal = collie__f2u(collie__u2f(bits + 0x38800000u) - collie__u2f(0x38800000u));
    uint32_t r = exp == 0x0f800000u ? special : exp == 0 ? subnormal : normal;
    return collie__u2f(r | sign);
}

static inline uint16_t collie__float_to_half(float f)
{
    uint32_t x = collie__f2u(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    uint32_t special = x > 0x7f800000u ? 0x7e00u : 0x7c00u; /* NaN : too large or infinity */
    /* below 2^-14: adding 0.5f aligns the mantissa so the FPU rounds it to 10 bits */
    uint32_t subnormal = collie__f2u(collie__u2f(x) + 0.5f) - 0x3f000000u;
    /* normal: rebias 127 -> 15 and round half to even through the carry */
    uint32_t normal = (x + 0xc8000fffu + ((x >> 13) & 1u)) >> 13;
    uint32_t r = x >= 0x47800000u ? special : x < 0x38800000u ? subnormal : normal;
    return (uint16_t)(r | sign);
}

static inline float collie__bf16_to_float(uint16_t b) { return collie__u2f((uint32_t)b << 16); }

static inline uint16_t collie__float_to_bf16(float f)
{
    uint32_t x = collie__f2u(f);
    uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    uint32_t quiet_nan = (x >> 16) | 0x40u;
    return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

#endif
