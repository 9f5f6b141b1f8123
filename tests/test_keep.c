/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_keep.c - communicators made again and again of the same ranks, which
 * reuse the host segment a finalized one left behind (shm_keep.c), and must
 * find it as good as new.  Each cycle splits the job, moves data through
 * every part of the segment (the flags of small calls, the slots of a large
 * allreduce, the rings of an alltoall and of send/recv) and checks every
 * element, then finalizes the split with a message sent and never
 * received: the next communicator on that segment must not see it.
 *   test_keep dup|reorder CYCLES
 * dup:     every cycle the same ranks in the same order (each reuses the last);
 * reorder: the order reversed every other cycle (each order reuses its own,
 *          while COLLIE_SHM_KEEP keeps two; never the other order's).
 * test_keep.sh counts what each cycle reused from the shared memory log.
 */
#include "test_util.h"

#define BIG (1 << 18) /* floats of the large allreduce: through the slots */
#define BLOCK 3000    /* int32 per alltoall block: through the rings */

static void check_allreduce(collie_comm *c, int cycle, float *x, float *y, size_t n)
{
    int rank = collie_rank(c), size = collie_size(c);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((rank + 1) * (int)(i % 97) + cycle);
    CHECK_OK(c, collie_allreduce(c, x, y, n, COLLIE_FLOAT32, COLLIE_SUM));
    for (size_t i = 0; i < n; i++) {
        float want = (float)(size * (size + 1) / 2 * (int)(i % 97) + size * cycle);
        CHECK(y[i] == want, "cycle %d: allreduce of %zu, element %zu is %g, want %g", cycle, n, i,
              y[i], want);
    }
}

static void check_alltoall(collie_comm *c, int cycle)
{
    int rank = collie_rank(c), size = collie_size(c);
    int32_t *x = malloc(sizeof *x * BLOCK * (size_t)size),
            *y = malloc(sizeof *y * BLOCK * (size_t)size);
    CHECK(x && y, "no memory");
    for (int j = 0; j < size; j++)
        for (int i = 0; i < BLOCK; i++)
            x[j * BLOCK + i] = cycle * 1000000 + rank * 10000 + j * 100 + i % 100;
    CHECK_OK(c, collie_alltoall(c, x, y, BLOCK, COLLIE_INT32));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < BLOCK; i++) {
            int32_t want = cycle * 1000000 + j * 10000 + rank * 100 + i % 100;
            CHECK(y[j * BLOCK + i] == want, "cycle %d: alltoall block %d element %d is %d, want %d",
                  cycle, j, i, y[j * BLOCK + i], want);
        }
    free(x), free(y);
}

/* Around the ring: each rank sends the cycle's number to the next and leaves one more unread. */
static void check_sendrecv(collie_comm *c, int cycle)
{
    int rank = collie_rank(c), size = collie_size(c);
    int32_t out[2] = {cycle, rank}, in[2] = {-1, -1}, stale[2] = {-cycle - 1, rank};
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank % 2 == 0) {
        CHECK_OK(c, collie_send(c, out, 2, COLLIE_INT32, next));
        CHECK_OK(c, collie_recv(c, in, 2, COLLIE_INT32, prev));
    } else {
        CHECK_OK(c, collie_recv(c, in, 2, COLLIE_INT32, prev));
        CHECK_OK(c, collie_send(c, out, 2, COLLIE_INT32, next));
    }
    CHECK(in[0] == cycle && in[1] == prev, "cycle %d: rank %d received {%d, %d} from rank %d",
          cycle, rank, in[0], in[1], prev);
    CHECK_OK(c, collie_send(c, stale, 2, COLLIE_INT32, next)); /* buffered, never received */
}

int main(int argc, char **argv)
{
    CHECK(argc == 3 && (!strcmp(argv[1], "dup") || !strcmp(argv[1], "reorder")),
          "usage: test_keep dup|reorder CYCLES");
    int reorder = !strcmp(argv[1], "reorder"), cycles = atoi(argv[2]);
    collie_comm *world = test_init();
    int rank = collie_rank(world);
    float *x = malloc(sizeof *x * BIG), *y = malloc(sizeof *y * BIG);
    CHECK(x && y, "no memory");
    for (int cycle = 0; cycle < cycles; cycle++) {
        collie_comm *c;
        int key = reorder && cycle % 2 ? -rank : rank;
        CHECK_OK(world, collie_comm_split(world, 0, key, &c));
        check_allreduce(c, cycle, x, y, 5); /* the flags' carried bytes */
        check_allreduce(c, cycle, x, y, BIG);
        check_alltoall(c, cycle);
        if (collie_size(c) > 1)
            check_sendrecv(c, cycle);
        CHECK_OK(c, collie_barrier(c));
        CHECK(collie_finalize(c) == COLLIE_OK, "cycle %d: finalize", cycle);
    }
    free(x), free(y);
    CHECK(collie_finalize(world) == COLLIE_OK, "finalize");
    printf("rank %d: %d cycles checked\n", rank, cycles);
    return 0;
}
