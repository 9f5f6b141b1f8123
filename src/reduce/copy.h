/*
 * copy.h - the library's copies of data through the cache: into and out of
 * the shared-memory slots and rings, and between a call's buffers.
 *
 * Not memcpy: glibc copies anything over about 2 KiB with `rep movsb` where
 * the CPU says it is fast (ERMS), and on this project's AMD EPYC vCPUs it is
 * fast only while every rank has a core of its own.  With ranks sharing a
 * core, the same 256 KiB copies out of the slots ran 4-8x slower than a
 * vector loop's (measured: a 1 MiB broadcast at 4 ranks on 2 cores, 1.4 ms
 * against 0.13-0.18; docs/PERFORMANCE.md, *Copies on a crowded host*).  So
 * the copies that move a call's data are collie's own loop, on any CPU.
 */
#ifndef COLLIE_COPY_H
#define COLLIE_COPY_H

#include <stddef.h>

/* Copies n bytes through the cache; the regions must not overlap. */
void collie__copy(void *dst, const void *src, size_t n);

/* The same as a CPU without AVX2 runs it (the tests check both paths). */
void collie__copy_without_avx2(void *dst, const void *src, size_t n);

#endif
