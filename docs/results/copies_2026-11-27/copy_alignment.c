/*
 * copy_alignment.c - glibc's memcpy (which takes `rep movsb` from about 2
 * KiB where the CPU reports ERMS) against `rep movsq` and a vector loop,
 * copying 256 KiB from a page-aligned buffer (as a shared-memory slot is)
 * to one that starts OFFSET bytes into a page (malloc's large buffers start
 * 16 bytes in).  gcc -O2 -o copy_alignment copy_alignment.c && ./copy_alignment
 * (docs/PERFORMANCE.md, *Copies of a call's data*).
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BYTES (256u << 10)
#define ROUNDS 2000

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((target("avx2"))) static void vector_loop(void *d, const void *s, size_t n)
{
    for (size_t i = 0; i < n; i += 32)
        _mm256_storeu_si256((__m256i *)((char *)d + i),
                            _mm256_loadu_si256((const __m256i *)((const char *)s + i)));
}

static void movsq(void *d, const void *s, size_t n)
{
    size_t c = n / 8;
    __asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(c)::"memory");
}

int main(void)
{
    static const size_t offsets[] = {0, 1, 8, 16, 24, 32, 48, 63, 64, 96, 128};
    char *src = aligned_alloc(4096, BYTES), *base = aligned_alloc(4096, BYTES + 4096);
    memset(src, 1, BYTES);
    memset(base, 0, BYTES + 4096);
    printf("# destination offset in its page; GB/s: glibc memcpy, rep movsq, vector loop\n");
    for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
        char *out = base + offsets[k];
        double gbs[3];
        for (int c = 0; c < 3; c++) {
            double spent = 0;
            for (int r = 0; r < ROUNDS; r++) {
                double t = now();
                if (c == 0)
                    memcpy(out, src, BYTES);
                else if (c == 1)
                    movsq(out, src, BYTES);
                else
                    vector_loop(out, src, BYTES);
                spent += now() - t;
            }
            gbs[c] = (double)BYTES * ROUNDS / spent / 1e9;
        }
        printf("%4zu  %6.2f  %6.2f  %6.2f\n", offsets[k], gbs[0], gbs[1], gbs[2]);
    }
    return 0;
}
