/* convert.c - collie_convert(): the library's own float16/bfloat16 rounding, for callers. */
#include <string.h>

#include "half.h"
#include "reduce.h"

collie_status collie_convert(void *dst, collie_dtype dst_dtype, const void *src,
                             collie_dtype src_dtype, size_t count)
{
    if (count && (!dst || !src))
        return COLLIE_ERR_INVALID_ARG;
    const float *f = src;
    const uint16_t *h = src;
    float *fo = dst;
    uint16_t *ho = dst;
    if (src_dtype == COLLIE_FLOAT32 && dst_dtype == COLLIE_FLOAT32) {
        memmove(dst, src, count * sizeof(float));
    } else if (src_dtype == COLLIE_FLOAT32 && dst_dtype == COLLIE_FLOAT16) {
        for (size_t i = 0; i < count; i++)
            ho[i] = collie__float_to_half(f[i]);
    } else if (src_dtype == COLLIE_FLOAT32 && dst_dtype == COLLIE_BFLOAT16) {
        for (size_t i = 0; i < count; i++)
            ho[i] = collie__float_to_bf16(f[i]);
    } else if (src_dtype == COLLIE_FLOAT16 && dst_dtype == COLLIE_FLOAT32) {
        for (size_t i = 0; i < count; i++)
            fo[i] = collie__half_to_float(h[i]);
    } else if (src_dtype == COLLIE_BFLOAT16 && dst_dtype == COLLIE_FLOAT32) {
        for (size_t i = 0; i < count; i++)
            fo[i] = collie__bf16_to_float(h[i]);
    } else {
        return COLLIE_ERR_UNSUPPORTED;
    }
    return COLLIE_OK;
}
