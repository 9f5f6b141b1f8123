/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * copy.h - the library's copies of data through the cache: into and out of
 * the shared-memory slots and rings, and between a call's buffers.
 *
 * Not memcpy: glibc copies anything over about 2 KiB with `rep movsb` where
 * the CPU reports it fast (ERMS), and on this project's AMD EPYC vCPUs it
 * runs at 1.8-2.3 GB/s when the destination lies 1-31 bytes past the
 * source modulo 4 KiB, against 26-37 otherwise; a vector loop runs at 25-35
 * in every case.
 * The slots are page-aligned, and malloc's large buffers start 16 bytes
 * into a page: a 1 MiB broadcast at 4 ranks on 2 cores took 1.26 ms, 0.18
 * with this loop.  So the
 * copies that move a call's data are collie's own loop, on any CPU.
 */
#ifndef COLLIE_COPY_H
#define COLLIE_COPY_H

#include <stddef.h>

/*
 * Copies n bytes through the cache; the regions must not overlap.  Built
 * with a sanitizer, this is memcpy (copy.c).
 */
void collie__copy(void *dst, const void *src, size_t n);

/* The same as a CPU without AVX2 runs it (the tests check both paths). */
void collie__copy_without_avx2(void *dst, const void *src, size_t n);

#endif
