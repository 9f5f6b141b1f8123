/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_leaks.c - a communicator's whole life, many times in one process:
 * init, an allreduce, a non-blocking allreduce (the asynchronous core's
 * threads), a split with a collective on it, finalize of both.  After ten
 * warm-up cycles (state made once per process: the configuration,
 * OpenSSL's tables), what the process holds must come back to where it was
 * after every cycle: file descriptors, threads and, where malloc is
 * glibc's (not under the sanitizers, whose LeakSanitizer checks
 * at exit instead, and whose allocator maps more as it goes), memory
 * mappings and heap bytes in use.
 *   test_leaks CYCLES
 */
#include <dirent.h>
#include <malloc.h>

#include "test_util.h"

struct held {
    int fds, threads, maps;
    size_t heap;
};

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    CHECK(d, "opendir %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - (!strcmp(dir, "/proc/self/fd")); /* the one opendir holds */
}

static int lines(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f, "fopen %s", path);
    int n = 0;
    for (int c; (c = fgetc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

static struct held now(void)
{
    return (struct held){entries("/proc/self/fd"), entries("/proc/self/task"),
                         lines("/proc/self/maps"), mallinfo2().uordblks};
}

static void cycle(int n)
{
    collie_comm *comm = test_init();
    int rank = collie_rank(comm), size = collie_size(comm);
    float x[64], y[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)(rank + i);
    CHECK_OK(comm, collie_allreduce(comm, x, y, 64, COLLIE_FLOAT32, COLLIE_SUM));
    for (int i = 0; i < 64; i++)
        CHECK(y[i] == (float)(size * (size - 1) / 2 + size * i), "cycle %d: y[%d] = %g", n, i,
              (double)y[i]);
    collie_request *req;
    CHECK_OK(comm, collie_iallreduce(comm, x, y, 64, COLLIE_FLOAT32, COLLIE_MAX, &req));
    CHECK_OK(comm, collie_wait(req));
    CHECK(y[0] == (float)(size - 1), "cycle %d: max %g", n, (double)y[0]);
    collie_comm *half;
    CHECK_OK(comm, collie_comm_split(comm, rank % 2, rank, &half));
    int hsize = collie_size(half);
    CHECK_OK(half, collie_allreduce(half, x, y, 1, COLLIE_FLOAT32, COLLIE_MAX));
    CHECK(y[0] == (float)(rank % 2 + 2 * (hsize - 1)), "cycle %d: split max %g", n, (double)y[0]);
    CHECK_OK(half, collie_finalize(half));
    CHECK_OK(comm, collie_finalize(comm));
}

int main(int argc, char **argv)
{
    int cycles = argc > 1 ? atoi(argv[1]) : 1000, warmup = 10;
    CHECK(cycles > warmup, "usage: test_leaks CYCLES (more than %d)", warmup);
    /*
     * One malloc arena: glibc maps another (two mappings) the first time a
     * thread finds the main one busy, at any cycle; that is the allocator's
     * cache, not ours.
     */
    mallopt(M_ARENA_MAX, 1);
    for (int i = 0; i < warmup; i++)
        cycle(i);
    struct held before = now();
    for (int i = warmup; i < cycles; i++)
        cycle(i);
    struct held after = now();
    printf("after %d cycles: %d -> %d fds, %d -> %d threads, %d -> %d mappings, %zu -> %zu heap "
           "bytes\n",
           cycles - warmup, before.fds, after.fds, before.threads, after.threads, before.maps,
           after.maps, before.heap, after.heap);
    CHECK(after.fds == before.fds, "file descriptors leak");
    CHECK(after.threads == before.threads, "threads outlive their communicators");
    if (!before.heap) /* a sanitizer's allocator: it maps as its quarantine fills */
        return 0;
    CHECK(after.maps == before.maps, "memory mappings leak");
    /* glibc's heap may keep a few free-list pages; a leak of even 16 bytes a cycle shows. */
    CHECK(after.heap <= before.heap + 4096, "the heap grew by %zu bytes", after.heap - before.heap);
    return 0;
}
