/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_async.c - the asynchronous core beyond what test_coll checks per
 * collective (COLLIE_TEST_NONBLOCKING=1 there).
 *
 *   collie run -n N test_async SCENARIO
 *
 * p2p        every rank isends 3 messages (one large) to every other rank and
 *            irecvs theirs, all issued before any wait: no deadlock where
 *            blocking sends would, every element checked, order per pair kept
 * mixed      an isend still pending while both ranks run collectives, then
 *            the irecv: point-to-point progresses beside the collective lane
 * progress   rank 0 issues an allreduce and sleeps without calling collie:
 *            the others' waits complete before it wakes (progress without the
 *            caller), and its own wait returns the right sum
 * abort      rank 0 waits on an irecv nobody sends while a second thread calls
 *            collie_comm_abort: the wait returns ABORTED at once, so does every
 *            later call (one of count 0 too); the other ranks' next collective
 *            fails too
 * kill       the last rank SIGKILLs itself while every other rank has
 *            requests pending: each completes with PEER_LOST, within the timeout
 * mismatch   rank 1 issues iallreduce with another count: every rank's request
 *            completes with MISMATCH naming both calls, and so does the
 *            request queued behind it
 * badargs    a bad non-blocking call returns INVALID_ARG at once with a NULL
 *            request and queues nothing; wait(NULL) and test work
 * split      halves, odd/even (reversed by key), by host (COLLIE_HOST=hN), a
 *            negative color, and a half split again; then collectives on all
 *            of them at once (interleaved requests, waited backwards) and
 *            blocking ones on each, every result checked
 * fusion     the 62 gradient tensors of a ResNet-18 (float32), then a run broken
 *            by other dtypes, ops and collectives: allreduced one request each,
 *            then inside collie_group_start/end (fused per COLLIE_FUSION_BYTES):
 *            bit for bit the same; a blocking call or a wait inside a group,
 *            and an end without a start, are INVALID_ARG
 * compress   float32 allreduces over float16 and bfloat16 (blocking, in
 *            place, non-blocking; SUM and AVG) within the documented bound
 * uid        rank 0 draws a unique id, the parent broadcasts it, every rank
 *            joins with collie_init_rank and the new communicator works;
 *            reusing the id, a rank out of range, a garbage id, rank 0 in
 *            a process that did not draw the id, and a wrong size each
 *            fail, naming why, within the timeout
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "../tools/bench/resnet18.h"
#include "test_util.h"

static collie_comm *comm;
static int rank, size;

static uint32_t word(int from, int to, int msg, size_t i)
{
    return (uint32_t)(from * 1000003 + to * 7919 + msg * 104729) ^ (uint32_t)(i * 2654435761u);
}

static void p2p(void)
{
    static const size_t lens[3] = {1, (size_t)3 << 20, 1000}; /* 12 MiB: far past any ring */
    int n = size - 1;
    uint32_t **out = calloc((size_t)(3 * size), sizeof *out),
             **in = calloc((size_t)(3 * size), sizeof *in);
    collie_request **reqs = calloc((size_t)(6 * size), sizeof *reqs);
    CHECK(out && in && reqs, "out of memory");
    int nreq = 0;
    /* Sends first everywhere: with blocking sends of 12 MiB this would deadlock. */
    for (int m = 0; m < 3; m++)
        for (int k = 1; k <= n; k++) {
            int to = (rank + k) % size;
            uint32_t *b = out[m * size + to] = malloc(lens[m] * 4);
            CHECK(b, "out of memory");
            for (size_t i = 0; i < lens[m]; i++)
                b[i] = word(rank, to, m, i);
            CHECK_OK(comm, collie_isend(comm, b, lens[m], COLLIE_INT32, to, &reqs[nreq++]));
        }
    for (int m = 0; m < 3; m++)
        for (int k = 1; k <= n; k++) {
            int from = (rank + size - k) % size;
            uint32_t *b = in[m * size + from] = calloc(lens[m], 4);
            CHECK(b, "out of memory");
            CHECK_OK(comm, collie_irecv(comm, b, lens[m], COLLIE_INT32, from, &reqs[nreq++]));
        }
    /* Waited backwards: the receives first. */
    for (int i = nreq - 1; i >= 0; i--)
        CHECK_OK(comm, collie_wait(reqs[i]));
    for (int m = 0; m < 3; m++)
        for (int from = 0; from < size; from++) {
            if (from == rank)
                continue;
            for (size_t i = 0; i < lens[m]; i++)
                CHECK(in[m * size + from][i] == word(from, rank, m, i),
                      "message %d from rank %d: element %zu is %u", m, from, i,
                      in[m * size + from][i]);
            free(in[m * size + from]);
            free(out[m * size + from]);
        }
    free(in), free(out), free(reqs);
}

static void mixed(void)
{
    CHECK(size >= 2, "mixed needs 2 ranks");
    size_t len = (size_t)4 << 20; /* 16 MiB: the send cannot finish before the receive */
    uint32_t *buf = malloc(len * 4);
    CHECK(buf, "out of memory");
    collie_request *req = NULL;
    if (rank == 0) {
        for (size_t i = 0; i < len; i++)
            buf[i] = word(0, 1, 0, i);
        CHECK_OK(comm, collie_isend(comm, buf, len, COLLIE_INT32, 1, &req));
    }
    for (int k = 0; k < 5; k++) { /* rank 0's send is still pending through these */
        int64_t x = rank + 1, sum = 0;
        CHECK_OK(comm, collie_allreduce(comm, &x, &sum, 1, COLLIE_INT64, COLLIE_SUM));
        CHECK(sum == (int64_t)size * (size + 1) / 2, "allreduce %d: %lld", k, (long long)sum);
    }
    if (rank == 1) {
        memset(buf, 0, len * 4);
        CHECK_OK(comm, collie_recv(comm, buf, len, COLLIE_INT32, 0));
        for (size_t i = 0; i < len; i++)
            CHECK(buf[i] == word(0, 1, 0, i), "element %zu is %u", i, buf[i]);
    }
    CHECK_OK(comm, collie_wait(req));
    free(buf);
}

static void progress(void)
{
    double x[1000], y[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = rank + i;
    collie_request *req;
    CHECK_OK(comm, collie_iallreduce(comm, x, y, 1000, COLLIE_FLOAT64, COLLIE_SUM, &req));
    double done_at = 0, woke_at = 0;
    if (rank == 0) {
        test_sleep(test_time(0.3)); /* without a single collie call */
        woke_at = test_seconds();
        CHECK_OK(comm, collie_wait(req));
    } else {
        CHECK_OK(comm, collie_wait(req));
        done_at = test_seconds();
    }
    for (int i = 0; i < 1000; i++)
        CHECK(y[i] == (double)size * (size - 1) / 2 + (double)size * i, "y[%d] = %g", i, y[i]);
    double mine[2] = {done_at, woke_at}, *all = malloc(sizeof(double) * 2 * (size_t)size);
    CHECK(all, "out of memory");
    CHECK_OK(comm, collie_allgather(comm, mine, all, 2, COLLIE_FLOAT64));
    for (int r = 1; r < size; r++) /* CLOCK_MONOTONIC: one clock for the host */
        CHECK(all[2 * r] < all[1],
              "rank %d finished at %.6f, after rank 0 woke at %.6f: the "
              "allreduce waited for rank 0's caller",
              r, all[2 * r], all[1]);
    free(all);
}

static void *aborter(void *arg)
{
    (void)arg;
    struct timespec nap = {0, 200000000};
    nanosleep(&nap, NULL);
    CHECK_OK(comm, collie_comm_abort(comm));
    return NULL;
}

static void abort_scenario(void)
{
    CHECK(size >= 2, "abort needs 2 ranks");
    if (rank == 0) {
        int x = 0;
        collie_request *req;
        CHECK_OK(comm, collie_irecv(comm, &x, 1, COLLIE_INT32, 1, &req)); /* never sent */
        pthread_t t;
        CHECK(pthread_create(&t, NULL, aborter, NULL) == 0, "pthread_create");
        double t0 = test_seconds();
        collie_status st = collie_wait(req);
        double waited = test_seconds() - t0;
        pthread_join(t, NULL);
        CHECK(st == COLLIE_ERR_ABORTED, "wait returned %s: %s", collie_strerror(st),
              collie_last_error(comm));
        CHECK(waited < test_time(5), "the aborted wait took %.2f s", waited);
        CHECK(strstr(collie_last_error(comm), "collie_comm_abort"), "message: %s",
              collie_last_error(comm));
        t0 = test_seconds();
        CHECK(collie_barrier(comm) == COLLIE_ERR_ABORTED, "a later call is not ABORTED");
        /* a call that moves nothing skips the peers' checks, not this rank's failure */
        CHECK(collie_allreduce(comm, &x, &x, 0, COLLIE_INT32, COLLIE_SUM) == COLLIE_ERR_ABORTED,
              "a later zero-count call is not ABORTED");
        collie_request *r2 = NULL;
        CHECK(collie_ibarrier(comm, &r2) == COLLIE_ERR_ABORTED && !r2, "a later ibarrier");
        CHECK(test_seconds() - t0 < test_time(0.5), "later calls took %.2f s", test_seconds() - t0);
    } else {
        collie_status st = collie_barrier(comm); /* rank 0 never joins: it aborts */
        CHECK(st != COLLIE_OK, "the barrier without rank 0 succeeded");
    }
}

static void kill_scenario(void)
{
    CHECK(size >= 2, "kill needs 2 ranks");
    if (rank == size - 1) {
        struct timespec nap = {0, 200000000};
        nanosleep(&nap, NULL);
        raise(SIGKILL);
    }
    int32_t x[64] = {0}, y[64];
    collie_request *reqs[3];
    CHECK_OK(comm, collie_iallreduce(comm, x, y, 64, COLLIE_INT32, COLLIE_SUM, &reqs[0]));
    CHECK_OK(comm, collie_irecv(comm, y, 1, COLLIE_INT32, size - 1, &reqs[1]));
    CHECK_OK(comm, collie_ibarrier(comm, &reqs[2]));
    double t0 = test_seconds();
    for (int i = 0; i < 3; i++) {
        collie_status st = collie_wait(reqs[i]);
        CHECK(st == COLLIE_ERR_PEER_LOST, "request %d: %s (%s)", i, collie_strerror(st),
              collie_last_error(comm));
    }
    CHECK(test_seconds() - t0 < test_time(10), "the failed requests took %.2f s",
          test_seconds() - t0);
}

static void mismatch(void)
{
    CHECK(size >= 2, "mismatch needs 2 ranks");
    float x[11] = {0}, y[11];
    collie_request *a, *b;
    /*
     * Each is queued, or refused at issue when another rank's report of the
     * failure has already arrived (sticky): either way it ends in MISMATCH.
     */
    collie_status ia =
        collie_iallreduce(comm, x, y, rank == 1 ? 11 : 10, COLLIE_FLOAT32, COLLIE_SUM, &a);
    collie_status ib = collie_ibarrier(comm, &b);
    CHECK(ia == COLLIE_OK || (ia == COLLIE_ERR_MISMATCH && !a), "iallreduce issue: %s",
          collie_strerror(ia));
    CHECK(ib == COLLIE_OK || (ib == COLLIE_ERR_MISMATCH && !b), "ibarrier issue: %s",
          collie_strerror(ib));
    collie_status sa = ia == COLLIE_OK ? collie_wait(a) : ia;
    collie_status sb = ib == COLLIE_OK ? collie_wait(b) : ib;
    const char *msg = collie_last_error(comm);
    CHECK(sa == COLLIE_ERR_MISMATCH, "iallreduce: %s (%s)", collie_strerror(sa), msg);
    CHECK(sb == COLLIE_ERR_MISMATCH, "the request behind it: %s", collie_strerror(sb));
    CHECK(strstr(msg, "count=10") && strstr(msg, "count=11"), "message names both: %s", msg);
}

static void badargs(void)
{
    float x = 1;
    collie_request *req = (collie_request *)&x; /* must come back NULL */
    CHECK(collie_iallreduce(comm, &x, &x, 1, COLLIE_FLOAT32, (collie_op)99, &req) ==
              COLLIE_ERR_INVALID_ARG,
          "bad op accepted");
    CHECK(req == NULL, "a failed issue left a request");
    CHECK(strstr(collie_last_error(comm), "op=99"), "message: %s", collie_last_error(comm));
    CHECK(collie_iallreduce(comm, &x, &x, 1, COLLIE_FLOAT32, COLLIE_SUM, NULL) ==
              COLLIE_ERR_INVALID_ARG,
          "NULL req accepted");
    CHECK(collie_isend(comm, &x, 1, COLLIE_FLOAT32, size, &req) == COLLIE_ERR_INVALID_ARG,
          "isend to rank %d accepted", size);
    CHECK(collie_wait(NULL) == COLLIE_OK, "wait(NULL)");
    int done = 0;
    CHECK(collie_test(NULL, &done) == COLLIE_OK && done, "test(NULL)");
    CHECK(collie_test(NULL, NULL) == COLLIE_ERR_INVALID_ARG, "test without done");
    /* The communicator still works, and test eventually says done. */
    CHECK_OK(comm, collie_iallreduce(comm, &x, &x, 1, COLLIE_FLOAT32, COLLIE_SUM, &req));
    for (done = 0; !done;)
        CHECK_OK(comm, collie_test(req, &done));
    CHECK(x == (float)size, "x = %g", x);
}

/* Sum over the ranks of sub (numbered by their rank in comm, passed in) of (r + 1). */
static void check_sum(collie_comm *sub, const int64_t *got, int64_t want, const char *what)
{
    CHECK(*got == want, "%s (rank %d of %d): sum %lld, want %lld", what, collie_rank(sub),
          collie_size(sub), (long long)*got, (long long)want);
}

/* Sum of (old rank + 1) over the old ranks in a group. */
static int64_t group_sum(int (*color)(int), int me)
{
    int64_t sum = 0;
    for (int r = 0; r < size; r++)
        sum += color(r) == color(me) ? r + 1 : 0;
    return sum;
}

static int half_of(int r) { return r < size / 2; }
static int parity_of(int r) { return r % 2; }
static int host_of(int r) { return r % 2; } /* the tests run rank r with COLLIE_HOST=h(r%2) */

static void split(void)
{
    collie_comm *half, *parity, *byhost, *none, *quarter;
    CHECK_OK(comm, collie_comm_split(comm, half_of(rank), rank, &half));
    CHECK_OK(comm, collie_comm_split(comm, parity_of(rank), -rank, &parity)); /* reversed */
    const char *h = getenv("COLLIE_HOST");
    int by_host = h && h[0] == 'h';
    CHECK_OK(comm, collie_comm_split(comm, by_host ? atoi(h + 1) : 0, rank, &byhost));
    CHECK_OK(comm, collie_comm_split(comm, rank == 0 ? -1 : 1, 0, &none));
    CHECK((rank == 0) == (none == NULL), "negative color: newcomm %p on rank %d", (void *)none,
          rank);
    CHECK_OK(half, collie_comm_split(half, collie_rank(half) % 2, 0, &quarter));

    int half_size = 0, parity_size = 0, host_size = 0, host_rank = 0, parity_rank = 0;
    for (int r = 0; r < size; r++) {
        half_size += half_of(r) == half_of(rank);
        parity_size += parity_of(r) == parity_of(rank);
        parity_rank += parity_of(r) == parity_of(rank) && r > rank; /* by key -rank */
        host_size += !by_host || host_of(r) == host_of(rank);
        host_rank += (!by_host || host_of(r) == host_of(rank)) && r < rank;
    }
    CHECK(collie_size(half) == half_size && collie_size(parity) == parity_size &&
              collie_size(byhost) == host_size,
          "sizes %d %d %d", collie_size(half), collie_size(parity), collie_size(byhost));
    CHECK(collie_rank(parity) == parity_rank, "odd/even by -rank: rank %d, want %d",
          collie_rank(parity), parity_rank);
    CHECK(collie_rank(byhost) == host_rank, "by host: rank %d", collie_rank(byhost));
    if (by_host)
        CHECK(collie_local_size(byhost) == host_size, "by host: %d ranks share memory, want %d",
              collie_local_size(byhost), host_size);

    /* Everything at once: requests on five communicators, waited backwards. */
    for (int round = 0; round < 20; round++) {
        int64_t mine = rank + 1, out[5];
        collie_request *reqs[6];
        collie_comm *comms[5] = {comm, half, parity, byhost, quarter};
        for (int c = 0; c < 5; c++)
            CHECK_OK(comms[c], collie_iallreduce(comms[c], &mine, &out[c], 1, COLLIE_INT64,
                                                 COLLIE_SUM, &reqs[c]));
        CHECK_OK(comm, collie_ibarrier(comm, &reqs[5]));
        for (int c = 5; c >= 0; c--)
            CHECK_OK(comm, collie_wait(reqs[c]));
        check_sum(comm, &out[0], (int64_t)size * (size + 1) / 2, "world");
        check_sum(half, &out[1], group_sum(half_of, rank), "half");
        check_sum(parity, &out[2], group_sum(parity_of, rank), "odd/even");
        check_sum(byhost, &out[3], by_host ? group_sum(host_of, rank) : out[0], "by host");
        int64_t q = 0; /* the quarter: my half's ranks whose rank in the half has my parity */
        for (int r = 0, k = 0; r < size; r++)
            if (half_of(r) == half_of(rank))
                q += (k++ % 2 == collie_rank(half) % 2) ? r + 1 : 0;
        check_sum(quarter, &out[4], q, "quarter");
        /* And blocking, on each, with a larger message (shared memory or TCP, by placement). */
        size_t count = 100000;
        float *v = malloc(count * sizeof *v);
        CHECK(v, "out of memory");
        for (int c = 0; c < 5; c++) {
            for (size_t i = 0; i < count; i++)
                v[i] = (float)(i % 7);
            CHECK_OK(comms[c], collie_allreduce(comms[c], v, v, count, COLLIE_FLOAT32, COLLIE_SUM));
            for (size_t i = 0; i < count; i++)
                CHECK(v[i] == (float)(i % 7) * collie_size(comms[c]), "comm %d element %zu: %g", c,
                      i, v[i]);
        }
        free(v);
    }
    CHECK_OK(quarter, collie_finalize(quarter)); /* children before or after parents alike */
    CHECK_OK(half, collie_finalize(half));
    CHECK_OK(parity, collie_finalize(parity));
    CHECK_OK(none, collie_finalize(none));
    CHECK_OK(byhost, collie_finalize(byhost));
}

static void uid(void)
{
    collie_unique_id id;
    if (rank == 0)
        CHECK_OK(NULL, collie_get_unique_id(&id));
    CHECK_OK(comm, collie_broadcast(comm, &id, sizeof id, COLLIE_UINT8, 0));
    collie_comm *c = NULL;
    CHECK_OK(NULL, collie_init_rank(&c, size, &id, rank));
    CHECK(collie_rank(c) == rank && collie_size(c) == size, "rank %d of %d", collie_rank(c),
          collie_size(c));
    int64_t x = rank + 1, sum;
    CHECK_OK(c, collie_allreduce(c, &x, &sum, 1, COLLIE_INT64, COLLIE_SUM));
    CHECK(sum == (int64_t)size * (size + 1) / 2, "sum %lld", (long long)sum);
    CHECK_OK(c, collie_finalize(c));

    /* Bad input, at once. */
    collie_unique_id junk;
    memset(&junk, 0x5a, sizeof junk);
    CHECK(collie_init_rank(&c, size, &junk, rank) == COLLIE_ERR_INVALID_ARG && !c, "garbage id");
    CHECK(strstr(collie_last_error(NULL), "not a collie_unique_id"), "%s", collie_last_error(NULL));
    CHECK(collie_init_rank(&c, size, &id, size) == COLLIE_ERR_INVALID_ARG, "rank = size");
    CHECK(collie_init_rank(&c, 0, &id, 0) == COLLIE_ERR_INVALID_ARG, "size 0");

    /* The used id again: rank 0 refuses it at once, the others time out (COLLIE_TIMEOUT=2). */
    double t0 = test_seconds();
    collie_status st = collie_init_rank(&c, size, &id, rank);
    CHECK(st == (rank == 0 ? COLLIE_ERR_INVALID_ARG : COLLIE_ERR_TIMEOUT), "stale id: %s: %s",
          collie_strerror(st), collie_last_error(NULL));
    if (rank == 0)
        CHECK(strstr(collie_last_error(NULL), "used"), "%s", collie_last_error(NULL));
    CHECK(test_seconds() - t0 < test_time(10), "stale id took %.1f s", test_seconds() - t0);

    /* A fresh id, and the last rank says the job has one rank more. */
    if (rank == 0) { /* the others time out only now: meet them within the barrier's timeout */
        struct timespec nap = {1, 0};
        nanosleep(&nap, NULL);
    }
    CHECK_OK(comm, collie_barrier(comm));

    /* Drawn by rank 1: rank 0, in another process, refuses at once, saying where to draw
     * it; the others queue at rank 1's listener until COLLIE_TIMEOUT. */
    if (size > 1) {
        if (rank == 1)
            CHECK_OK(NULL, collie_get_unique_id(&id));
        CHECK_OK(comm, collie_broadcast(comm, &id, sizeof id, COLLIE_UINT8, 1));
        t0 = test_seconds();
        st = collie_init_rank(&c, size, &id, rank);
        CHECK(st == (rank == 0 ? COLLIE_ERR_INVALID_ARG : COLLIE_ERR_TIMEOUT),
              "id drawn by rank 1: %s: %s", collie_strerror(st), collie_last_error(NULL));
        if (rank == 0)
            CHECK(strstr(collie_last_error(NULL), "did not draw this id"), "%s",
                  collie_last_error(NULL));
        CHECK(test_seconds() - t0 < test_time(10), "id drawn by rank 1 took %.1f s",
              test_seconds() - t0);
        if (rank == 0) {
            struct timespec nap = {1, 0};
            nanosleep(&nap, NULL);
        }
        CHECK_OK(comm, collie_barrier(comm));
    }

    if (rank == 0)
        CHECK_OK(NULL, collie_get_unique_id(&id));
    CHECK_OK(comm, collie_broadcast(comm, &id, sizeof id, COLLIE_UINT8, 0));
    t0 = test_seconds();
    st = collie_init_rank(&c, rank == size - 1 ? size + 1 : size, &id, rank);
    /* Rank 0 names the mismatch to the ranks that joined; the rest lose it, or time out. */
    CHECK(st == COLLIE_ERR_MISMATCH || st == COLLIE_ERR_TIMEOUT || st == COLLIE_ERR_PEER_LOST,
          "wrong size: %s", collie_strerror(st));
    if (rank == 0 || rank == size - 1)
        CHECK(st != COLLIE_ERR_MISMATCH || strstr(collie_last_error(NULL), "expects ranks"),
              "rank %d: wrong size: %s: %s", rank, collie_strerror(st), collie_last_error(NULL));
    CHECK(test_seconds() - t0 < test_time(10), "wrong size took %.1f s", test_seconds() - t0);
}

static uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

/* Random floats of every magnitude and sign: sums that round differently in another order. */
static void fill_random(float *v, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = ((float)(lcg(&seed) >> 8) / 16777216.0f - 0.5f) * (float)(1u << (lcg(&seed) % 16));
}

struct call {
    int coll; /* 0 allreduce, 1 broadcast */
    size_t count;
    collie_dtype dtype;
    collie_op op;
};

static void run_calls(const struct call *calls, int n, void **in, void **out, int grouped)
{
    collie_request **reqs = calloc((size_t)n, sizeof *reqs);
    CHECK(reqs, "out of memory");
    if (grouped)
        CHECK_OK(comm, collie_group_start(comm));
    for (int i = 0; i < n; i++) {
        size_t bytes = calls[i].count * (calls[i].dtype == COLLIE_FLOAT64 ? 8 : 4);
        if (calls[i].coll == 0) {
            CHECK_OK(comm, collie_iallreduce(comm, in[i], out[i], calls[i].count, calls[i].dtype,
                                             calls[i].op, &reqs[i]));
        } else {
            memcpy(out[i], in[i], bytes);
            CHECK_OK(comm,
                     collie_ibroadcast(comm, out[i], calls[i].count, calls[i].dtype, 0, &reqs[i]));
        }
    }
    if (grouped) {
        float x = 0;
        collie_status st = collie_allreduce(comm, &x, &x, 1, COLLIE_FLOAT32, COLLIE_SUM);
        CHECK(st == COLLIE_ERR_INVALID_ARG && strstr(collie_last_error(comm), "inside"),
              "blocking call in a group: %s", collie_strerror(st));
        st = collie_wait(reqs[0]);
        CHECK(st == COLLIE_ERR_INVALID_ARG, "wait in a group: %s", collie_strerror(st));
        CHECK_OK(comm, collie_group_end(comm));
    }
    CHECK_OK(comm, collie_waitall((size_t)n, reqs));
    free(reqs);
}

static void fusion(void)
{
    enum { N = 62 + 6 };
    struct call calls[N];
    for (int i = 0; i < 62; i++)
        calls[i] = (struct call){0, resnet18_tensors[i], COLLIE_FLOAT32, COLLIE_SUM};
    /* A run broken by a float64, an AVG, a broadcast; then a last float32 pair. */
    calls[62] = (struct call){0, 1000, COLLIE_FLOAT64, COLLIE_SUM};
    calls[63] = (struct call){0, 777, COLLIE_FLOAT32, COLLIE_AVG};
    calls[64] = (struct call){0, 333, COLLIE_FLOAT32, COLLIE_AVG};
    calls[65] = (struct call){1, 4096, COLLIE_FLOAT32, COLLIE_SUM};
    calls[66] = (struct call){0, 5, COLLIE_FLOAT32, COLLIE_SUM};
    calls[67] = (struct call){0, 70000, COLLIE_FLOAT32, COLLIE_SUM};
    void *in[N], *one[N], *fused[N];
    for (int i = 0; i < N; i++) {
        size_t bytes = calls[i].count * (calls[i].dtype == COLLIE_FLOAT64 ? 8 : 4);
        in[i] = malloc(bytes), one[i] = malloc(bytes), fused[i] = malloc(bytes);
        CHECK(in[i] && one[i] && fused[i], "out of memory");
        if (calls[i].dtype == COLLIE_FLOAT64)
            for (size_t k = 0; k < calls[i].count; k++)
                ((double *)in[i])[k] = (double)k * 0.1 + rank;
        else
            fill_random(in[i], calls[i].count, (uint32_t)(rank * 7919 + i));
    }
    run_calls(calls, N, in, one, 0);
    run_calls(calls, N, in, fused, 1);
    for (int i = 0; i < N; i++) {
        size_t bytes = calls[i].count * (calls[i].dtype == COLLIE_FLOAT64 ? 8 : 4);
        CHECK(!memcmp(one[i], fused[i], bytes), "call %d (%zu elements): fused differs", i,
              calls[i].count);
        free(in[i]), free(one[i]), free(fused[i]);
    }
    CHECK(collie_group_end(comm) == COLLIE_ERR_INVALID_ARG, "an end without a start");
    /* Nested groups: the inner end issues nothing; a one-call group is the call. */
    float a = (float)rank, b = 1;
    collie_request *ra, *rb;
    CHECK_OK(comm, collie_group_start(comm));
    CHECK_OK(comm, collie_group_start(comm));
    CHECK_OK(comm, collie_iallreduce(comm, &a, &a, 1, COLLIE_FLOAT32, COLLIE_SUM, &ra));
    CHECK_OK(comm, collie_group_end(comm));
    CHECK_OK(comm, collie_iallreduce(comm, &b, &b, 1, COLLIE_FLOAT32, COLLIE_SUM, &rb));
    CHECK_OK(comm, collie_group_end(comm));
    CHECK_OK(comm, collie_wait(rb));
    CHECK_OK(comm, collie_wait(ra));
    CHECK(a == (float)size * (size - 1) / 2 && b == (float)size, "nested: %g %g", a, b);
}

/* The exact sum over ranks of fill_random's element, in double. */
static void compress(void)
{
    size_t n = 100003;
    float *x = malloc(n * 4), *y = malloc(n * 4), *in_place = malloc(n * 4);
    double *exact = calloc(n, 8), *abs_sum = calloc(n, 8);
    CHECK(x && y && in_place && exact && abs_sum, "out of memory");
    for (int r = 0; r < size; r++) {
        fill_random(x, n, (uint32_t)(r + 11));
        for (size_t i = 0; i < n; i++)
            exact[i] += x[i], abs_sum[i] += fabs(x[i]);
    }
    fill_random(x, n, (uint32_t)(rank + 11));
    for (int w = 0; w < 2; w++) {
        collie_dtype wire = w ? COLLIE_BFLOAT16 : COLLIE_FLOAT16;
        double u = w ? 1.0 / 256 : 1.0 / 2048;
        for (int form = 0; form < 3; form++) {
            collie_op op = form == 2 ? COLLIE_AVG : COLLIE_SUM;
            float *out = form == 1 ? in_place : y;
            memcpy(in_place, x, n * 4);
            if (form == 2) {
                collie_request *req;
                CHECK_OK(comm, collie_iallreduce_compressed(comm, x, out, n, wire, op, &req));
                CHECK_OK(comm, collie_wait(req));
            } else {
                CHECK_OK(comm, collie_allreduce_compressed(comm, form == 1 ? in_place : x, out, n,
                                                           wire, op));
            }
            double worst = 0;
            for (size_t i = 0; i < n; i++) {
                double want = op == COLLIE_AVG ? exact[i] / size : exact[i];
                double bound = (size + 1) * u * abs_sum[i] / (op == COLLIE_AVG ? size : 1);
                double err = fabs(out[i] - want);
                CHECK(err <= bound, "%s form %d element %zu: %.9g, exact %.9g, bound %.3g",
                      w ? "bfloat16" : "float16", form, i, out[i], want, bound);
                if (abs_sum[i] > 0 && err / abs_sum[i] > worst)
                    worst = err / abs_sum[i];
            }
            if (rank == 0)
                printf("%s %s: worst error %.3g of sum |x| (bound %.3g)\n",
                       w ? "bfloat16" : "float16", form == 2 ? "avg" : "sum", worst,
                       (size + 1) * u);
        }
    }
    CHECK(collie_allreduce_compressed(comm, x, y, n, COLLIE_INT32, COLLIE_SUM) ==
              COLLIE_ERR_INVALID_ARG,
          "an int32 wire accepted");
    CHECK(strstr(collie_last_error(comm), "wire_dtype"), "%s", collie_last_error(comm));
    free(x), free(y), free(in_place), free(exact), free(abs_sum);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2, "usage: test_async "
                     "p2p|mixed|progress|abort|kill|mismatch|badargs|fusion|compress|split|uid");
    comm = test_init();
    rank = collie_rank(comm);
    size = collie_size(comm);
    const char *s = argv[1];
    if (!strcmp(s, "p2p"))
        p2p();
    else if (!strcmp(s, "mixed"))
        mixed();
    else if (!strcmp(s, "progress"))
        progress();
    else if (!strcmp(s, "abort"))
        abort_scenario();
    else if (!strcmp(s, "kill"))
        kill_scenario();
    else if (!strcmp(s, "mismatch"))
        mismatch();
    else if (!strcmp(s, "badargs"))
        badargs();
    else if (!strcmp(s, "fusion"))
        fusion();
    else if (!strcmp(s, "compress"))
        compress();
    else if (!strcmp(s, "split"))
        split();
    else if (!strcmp(s, "uid"))
        uid();
    else
        CHECK(0, "unknown scenario '%s'", s);
    collie_finalize(comm);
    printf("%s: ok on rank %d of %d\n", s, rank, size);
    return 0;
}
