/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mem.c - collie_mem_alloc and collie_mem_free: the arguments they
 * refuse, and single copies from peers' segments that stay exact while
 * segments come and go (transport/shm_mem.c).  Run under `collie run` with
 * an algorithm of single copies forced (COLLIE_ALGO=allgather:direct).
 *
 * Every round allgathers BLOCK floats of a pattern of (rank, round) from a
 * send buffer that is, by turns:
 *   0: a segment freed and allocated again, mostly at the same address;
 *   1: ordinary memory mapped where the last segment was (a peer must copy
 *      it through the kernel, not from its old mapping of that address);
 *   2: one of SEGMENTS live segments, more than a peer keeps mapped.
 * A child forked midway allocates and frees segments of its own: the
 * parent's table must not change.  Every element is checked.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define BLOCK 65536
#define ROUNDS 30
#define SEGMENTS 12

static int rank, size;

static float value(int r, int round, size_t i)
{
    return (float)((r * 7 + round * 13 + (int)i) % 1021);
}

static void fill(float *send, int round)
{
    for (size_t i = 0; i < BLOCK; i++)
        send[i] = value(rank, round, i);
}

static void check(const float *recv, int round)
{
    for (int r = 0; r < size; r++)
        for (size_t i = 0; i < BLOCK; i++)
            CHECK(recv[(size_t)r * BLOCK + i] == value(r, round, i),
                  "rank %d, round %d: element %zu of rank %d's block is %g, not %g", rank, round, i,
                  r, (double)recv[(size_t)r * BLOCK + i], (double)value(r, round, i));
}

static void *segment(size_t bytes)
{
    void *p = NULL;
    CHECK(collie_mem_alloc(&p, bytes) == COLLIE_OK && p, "collie_mem_alloc of %zu bytes", bytes);
    return p;
}

static void refusals(void)
{
    void *p = (void *)1, *heap = malloc(64);
    CHECK(collie_mem_alloc(NULL, 64) == COLLIE_ERR_INVALID_ARG, "a NULL ptr is refused");
    CHECK(collie_mem_alloc(&p, 0) == COLLIE_ERR_INVALID_ARG && p == (void *)1,
          "0 bytes are refused, and nothing written");
    CHECK(collie_mem_free(heap) == COLLIE_ERR_INVALID_ARG, "malloc's memory is not ours to free");
    CHECK(collie_mem_free(NULL) == COLLIE_OK, "freeing NULL does nothing");
    unsigned char *s = segment(10000);
    CHECK(((uintptr_t)s & 4095) == 0, "page-aligned");
    for (size_t i = 0; i < 12288; i++) /* rounded up to whole pages, zeroed */
        CHECK(s[i] == 0, "byte %zu of a fresh segment is %d", i, s[i]);
    CHECK(collie_mem_free(s + 64) == COLLIE_ERR_INVALID_ARG, "only the start frees a segment");
    CHECK(collie_mem_free(s) == COLLIE_OK, "free");
    CHECK(collie_mem_free(s) == COLLIE_ERR_INVALID_ARG, "a second free is refused");
    free(heap);
}

/* A child that allocates and frees segments of its own, then exits. */
static void fork_child(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        void *mine[4];
        for (int k = 0; k < 4; k++)
            if (collie_mem_alloc(&mine[k], 4096) != COLLIE_OK)
                _exit(2);
        for (int k = 0; k < 4; k++)
            if (collie_mem_free(mine[k]) != COLLIE_OK)
                _exit(3);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the forked child's segments (status %d)", status);
}

int main(void)
{
    collie_comm *comm = test_init();
    rank = collie_rank(comm);
    size = collie_size(comm);
    refusals();
    const size_t block = BLOCK * sizeof(float);
    float *recv = segment(block * (size_t)size);
    float *live[SEGMENTS];
    for (int k = 0; k < SEGMENTS; k++)
        live[k] = segment(block);
    float *fresh = segment(block);
    for (int round = 0; round < ROUNDS; round++) {
        float *send = NULL;
        if (round % 3 == 0) {
            CHECK(collie_mem_free(fresh) == COLLIE_OK, "free");
            send = fresh = segment(block);
        } else if (round % 3 == 1) {
            void *at = fresh;
            CHECK(collie_mem_free(fresh) == COLLIE_OK, "free");
            send = mmap(at, block, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            CHECK(send != MAP_FAILED, "ordinary memory where the segment was");
        } else {
            send = live[round % SEGMENTS];
        }
        fill(send, round);
        CHECK_OK(comm, collie_allgather(comm, send, recv, BLOCK, COLLIE_FLOAT32));
        check(recv, round);
        if (round % 3 == 1) { /* back to a segment, for the next round's free */
            CHECK(munmap(send, block) == 0, "munmap");
            fresh = segment(block);
        }
        if (round == ROUNDS / 2)
            fork_child();
    }
    for (int k = 0; k < SEGMENTS; k++)
        CHECK(collie_mem_free(live[k]) == COLLIE_OK, "free");
    CHECK(collie_mem_free(fresh) == COLLIE_OK && collie_mem_free(recv) == COLLIE_OK, "free");
    CHECK_OK(comm, collie_finalize(comm));
    if (rank == 0)
        printf("mem on %d ranks: %d rounds exact\n", size, ROUNDS);
    return 0;
}
