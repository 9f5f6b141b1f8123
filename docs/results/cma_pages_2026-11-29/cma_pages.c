/*
 * cma_pages.c - what one process_vm_readv costs, by the page size of the
 * buffer it reads (the peer's, which the kernel pins page by page) and of
 * the one it writes (the caller's), beside memcpy of the same bytes.
 *
 *   gcc -O2 -o cma_pages cma_pages.c && ./cma_pages [BYTES] [PIECE]
 *
 * A child maps BYTES (default 2 MiB), 2 MiB-aligned, with MADV_HUGEPAGE or
 * without, and waits; the parent reads it PIECE bytes a call (default all
 * at once), 200 times, and prints the median.  Needs THP "madvise" or
 * "always" in /sys/kernel/mm/transparent_hugepage/enabled.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPS 200
#define HUGE_PAGE ((size_t)2 << 20)

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static unsigned char *buffer(size_t bytes, int huge, int fill)
{
    unsigned char *p = aligned_alloc(HUGE_PAGE, (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
    if (!p)
        exit(1);
    if (huge)
        madvise(p, bytes, MADV_HUGEPAGE);
    memset(p, fill, bytes);
    return p;
}

static double median(double *t)
{
    qsort(t, REPS, sizeof *t, by_value);
    return t[REPS / 2];
}

static void measure(size_t bytes, size_t piece, int huge_peer, int huge_own)
{
    int pipefd[2];
    if (pipe(pipefd))
        exit(1);
    pid_t child = fork();
    if (child == 0) {
        uintptr_t at = (uintptr_t)buffer(bytes, huge_peer, 1);
        if (write(pipefd[1], &at, sizeof at) != sizeof at)
            _exit(1);
        pause();
        _exit(0);
    }
    uintptr_t peer;
    if (read(pipefd[0], &peer, sizeof peer) != sizeof peer)
        exit(1);
    unsigned char *own = buffer(bytes, huge_own, 2), *src = buffer(bytes, huge_own, 3);
    double cma[REPS], copy[REPS];
    for (int i = 0; i < REPS; i++) {
        double t = now_us();
        for (size_t off = 0; off < bytes; off += piece) {
            size_t m = bytes - off < piece ? bytes - off : piece;
            struct iovec local = {own + off, m}, remote = {(void *)(peer + off), m};
            if (process_vm_readv(child, &local, 1, &remote, 1, 0) != (ssize_t)m) {
                perror("process_vm_readv");
                exit(1);
            }
        }
        cma[i] = now_us() - t;
        t = now_us();
        memcpy(own, src, bytes);
        copy[i] = now_us() - t;
    }
    double c = median(cma), m = median(copy);
    printf("%8zu B, %8zu a call, peer's pages %s, own %s: process_vm_readv %7.1f us (%5.2f GB/s), "
           "memcpy %6.1f us (%5.2f GB/s)\n",
           bytes, piece, huge_peer ? "2 MiB" : "4 KiB", huge_own ? "2 MiB" : "4 KiB", c,
           (double)bytes / c / 1e3, m, (double)bytes / m / 1e3);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    free(own);
    free(src);
    close(pipefd[0]);
    close(pipefd[1]);
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : HUGE_PAGE;
    size_t piece = argc > 2 ? strtoull(argv[2], NULL, 0) : bytes;
    for (int peer = 0; peer < 2; peer++)
        for (int own = 0; own < 2; own++)
            measure(bytes, piece, peer, own);
    return 0;
}
