/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stream.h - copying into memory that will not be read again soon (a large
 * collective's output) with non-temporal stores: they skip the read for
 * ownership and do not evict the working set, so writing S bytes costs S of
 * memory traffic instead of 2S.  Elsewhere than x86-64 this is memcpy.
 */
#ifndef COLLIE_STREAM_H
#define COLLIE_STREAM_H

#include <stddef.h>

/* Copies n bytes; the regions must not overlap. */
void collie__copy_stream(void *dst, const void *src, size_t n);

/* Orders earlier non-temporal stores before later stores (call before publishing). */
void collie__stream_fence(void);

#endif
