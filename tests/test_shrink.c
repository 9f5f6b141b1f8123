/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_shrink.c - collie_comm_shrink on real processes (run by
 * test_shrink.sh under collie run, which lets the victims die):
 *
 *   healthy       nobody fails: the shrunk communicator is the whole job
 *   kill V...     ranks V SIGKILL themselves between collectives; the others
 *                 fail, shrink within 5 s and the survivors' collectives are exact
 *   stop V        rank V SIGSTOPs itself; the others time out, shrink without
 *                 it after one COLLIE_TIMEOUT, and its new rank 0 kills it
 *   during V W MS V is SIGKILLed, then W dies MS ms into collie_comm_shrink:
 *                 the survivors get a communicator of the rest, shrinking
 *                 again if W was lost while theirs formed
 *
 * Every survivor checks the new size, its new rank (its old order kept),
 * who the members are (allgather of old ranks) and an allreduce of 100,003
 * elements, element by element.
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "test_util.h"

static collie_comm *comm;
static int rank, size;
static double slowest = -1; /* seconds of the slowest survivor's shrink, for the report */

static int in(int r, const int *victims, int nv)
{
    for (int i = 0; i < nv; i++)
        if (victims[i] == r)
            return 1;
    return 0;
}

/* The survivors' communicator, checked: size, order, members, and an exact allreduce. */
static void check_survivors(collie_comm *sub, const int *victims, int nv)
{
    int expect_rank = 0, n = size - nv;
    for (int r = 0; r < rank; r++)
        expect_rank += !in(r, victims, nv);
    CHECK(collie_size(sub) == n && collie_rank(sub) == expect_rank,
          "rank %d: shrunk to rank %d of %d, expected %d of %d", rank, collie_rank(sub),
          collie_size(sub), expect_rank, n);
    int *old = malloc(sizeof(int) * (size_t)n);
    CHECK_OK(sub, collie_allgather(sub, &rank, old, 1, COLLIE_INT32));
    for (int i = 0, r = 0; i < n; i++, r++) {
        while (in(r, victims, nv))
            r++;
        CHECK(old[i] == r, "member %d of the survivors was rank %d, expected %d", i, old[i], r);
    }
    enum { COUNT = 100003 };
    int64_t *x = malloc(sizeof(int64_t) * COUNT), sum_ranks = 0;
    for (int i = 0; i < n; i++)
        sum_ranks += old[i];
    for (int i = 0; i < COUNT; i++)
        x[i] = (int64_t)rank * 1000003 + i;
    CHECK_OK(sub, collie_allreduce(sub, x, x, COUNT, COLLIE_INT64, COLLIE_SUM));
    for (int i = 0; i < COUNT; i++)
        CHECK(x[i] == sum_ranks * 1000003 + (int64_t)n * i, "element %d: %lld", i, (long long)x[i]);
    CHECK_OK(sub, collie_barrier(sub));
    free(x);
    free(old);
}

/* Collectives until one fails: the job's failure as a training step meets it. */
static void until_failure(void)
{
    float x[256] = {0};
    for (int round = 0; round < 100000; round++)
        if (collie_allreduce(comm, x, x, 256, COLLIE_FLOAT32, COLLIE_SUM) != COLLIE_OK)
            return;
    CHECK(0, "rank %d: no collective failed", rank);
}

static collie_comm *shrink_checked(double limit_s)
{
    double t0 = test_seconds();
    collie_comm *sub = NULL;
    collie_status st = collie_comm_shrink(comm, &sub);
    CHECK(st == COLLIE_OK && sub, "rank %d: shrink: %s: %s", rank, collie_strerror(st),
          collie_last_error(NULL));
    double took = test_seconds() - t0;
    CHECK(took < test_time(limit_s), "rank %d: shrink took %.1f s (limit %.1f)", rank, took,
          test_time(limit_s));
    CHECK_OK(sub, collie_allreduce(sub, &took, &slowest, 1, COLLIE_FLOAT64, COLLIE_MAX));
    return sub;
}

static void healthy(void)
{
    float x[64] = {0};
    CHECK_OK(comm, collie_allreduce(comm, x, x, 64, COLLIE_FLOAT32, COLLIE_SUM));
    collie_comm *sub = shrink_checked(5);
    check_survivors(sub, NULL, 0);
    /* the parent is untouched and still works */
    CHECK_OK(comm, collie_allreduce(comm, x, x, 64, COLLIE_FLOAT32, COLLIE_SUM));
    collie_finalize(sub);
}

static void kill_ranks(const int *victims, int nv)
{
    float x[64] = {0};
    for (int round = 0; round < 10; round++)
        CHECK_OK(comm, collie_allreduce(comm, x, x, 64, COLLIE_FLOAT32, COLLIE_SUM));
    if (in(rank, victims, nv))
        raise(SIGKILL);
    until_failure();
    collie_comm *sub = shrink_checked(5);
    check_survivors(sub, victims, nv);
    collie_finalize(sub);
}

static void stop_rank(int v)
{
    int *pids = malloc(sizeof(int) * (size_t)size), me = (int)getpid();
    CHECK_OK(comm, collie_allgather(comm, &me, pids, 1, COLLIE_INT32));
    if (rank == v)
        raise(SIGSTOP);
    until_failure();
    /* One COLLIE_TIMEOUT for the stalled rank if it was the one to coordinate, one more to decide. */
    const char *t = getenv("COLLIE_TIMEOUT");
    collie_comm *sub = shrink_checked(2 * (t ? atof(t) : 300) + 3);
    check_survivors(sub, &v, 1);
    if (collie_rank(sub) == 0)
        kill(pids[v], SIGKILL);
    collie_finalize(sub);
    free(pids);
}

static void *die_soon(void *arg)
{
    usleep((useconds_t)(intptr_t)arg * 1000);
    raise(SIGKILL);
    return NULL;
}

static void during(int v, int w, int after_ms)
{
    float x[64] = {0};
    CHECK_OK(comm, collie_allreduce(comm, x, x, 64, COLLIE_FLOAT32, COLLIE_SUM));
    if (rank == v)
        raise(SIGKILL);
    until_failure();
    if (rank == w) {
        pthread_t t;
        pthread_create(&t, NULL, die_soon, (void *)(intptr_t)after_ms);
    }
    int victims[2] = {v, w};
    collie_comm *sub = NULL;
    for (int attempt = 0; attempt < 10; attempt++) {
        collie_status st = collie_comm_shrink(comm, &sub);
        if (st == COLLIE_OK && collie_size(sub) == size - 2)
            break;
        /* w was a member when it died: the new communicator (or its init) failed; again */
        if (sub) {
            float y = 0;
            collie_allreduce(sub, &y, &y, 1, COLLIE_FLOAT32, COLLIE_SUM); /* fails: w is gone */
            collie_finalize(sub);
            sub = NULL;
        }
    }
    CHECK(sub, "rank %d: no communicator of the %d survivors after 10 shrinks: %s", rank, size - 2,
          collie_last_error(NULL));
    check_survivors(sub, victims, 2);
    collie_finalize(sub);
}

int main(int argc, char **argv)
{
    CHECK(argc >= 2, "usage: test_shrink healthy|kill V...|stop V|during V W MS");
    comm = test_init();
    rank = collie_rank(comm);
    size = collie_size(comm);
    int victims[8], nv = 0;
    for (int i = 2; i < argc && nv < 8; i++)
        victims[nv++] = atoi(argv[i]);
    if (!strcmp(argv[1], "healthy"))
        healthy();
    else if (!strcmp(argv[1], "kill"))
        kill_ranks(victims, nv);
    else if (!strcmp(argv[1], "stop") && nv == 1)
        stop_rank(victims[0]);
    else if (!strcmp(argv[1], "during") && nv == 3)
        during(victims[0], victims[1], victims[nv-- - 1]); /* the last number: milliseconds */
    else
        CHECK(0, "unknown scenario %s", argv[1]);
    collie_finalize(comm);
    int first = 0;
    while (in(first, victims, nv))
        first++;
    if (rank == first)
        printf("shrink %s: ok on %d of %d ranks", argv[1], size - nv, size);
    if (rank == first && slowest >= 0)
        printf("; the slowest shrink took %.3f s", slowest);
    if (rank == first)
        printf("\n");
    return 0;
}
