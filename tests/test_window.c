/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_window.c - one-sided neighbour windows across real ranks: deposits,
 * gets and updates against neighbor_allreduce on the same data (the same
 * combine, so bit for bit), push-sum's conservation and convergence with
 * ranks at different paces, whole deposits under concurrent puts, a lost
 * neighbour, and refused arguments.
 *   test_window put|pushsum|concurrent|kill|badargs
 */
#include <math.h>
#include <signal.h>

#include "test_util.h"

static collie_comm *comm;
static int rank, size;

#define WIN_OK(win, call)                                                                          \
    do {                                                                                           \
        collie_status st_ = (call);                                                                \
        CHECK(st_ == COLLIE_OK, "%s: %s", collie_strerror(st_), collie_win_last_error(win));       \
    } while (0)

/* Small integers, different per rank, element and round: exact in every dtype. */
static double input(int r, size_t i, int round)
{
    return (double)((r * 7 + (int)(i % 101) * 3 + round * 5) % 23) - 11;
}

static void *alloc(size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    CHECK(p, "calloc %zu", bytes);
    return p;
}

static void fill(collie_dtype t, void *buf, size_t count, int r, int round)
{
    for (size_t i = 0; i < count; i++)
        test_put(t, buf, i, input(r, i, round));
}

static collie_topology *make(collie_topology_kind kind, int param)
{
    collie_topology *t = NULL;
    CHECK_OK(NULL, collie_topology_create(kind, size, param, &t));
    return t;
}

static void same_bytes(const void *got, const void *want, size_t bytes, const char *what)
{
    for (size_t b = 0; b < bytes; b++)
        CHECK(((const unsigned char *)got)[b] == ((const unsigned char *)want)[b],
              "%s, rank %d of %d: byte %zu of %zu differs from neighbor_allreduce's", what, rank,
              size, b, bytes);
}

/*
 * y (x's copy, or x itself) updated over the window's mailboxes must be a
 * neighbor_allreduce step over every rank's x, byte for byte.
 */
static void update_matches(collie_win *win, const collie_topology *topo, const void *x, void *y,
                           size_t count, collie_dtype t, const char *what, const char *when)
{
    size_t bytes = count * test_dtype_size(t);
    void *want = alloc(bytes);
    char label[160];
    snprintf(label, sizeof label, "%s: %s", what, when);
    CHECK_OK(comm, collie_neighbor_allreduce(comm, topo, x, want, count, t));
    if (y != x)
        memcpy(y, x, bytes);
    WIN_OK(win, collie_win_update(win, y));
    same_bytes(y, want, bytes, label);
    free(want);
}

/*
 * Over each topology, dtype and size: the mailboxes start as the
 * neighbours' init (an update then equals a neighbor_allreduce step); a put
 * from every rank, a fence and an update equal a step over the put data;
 * a get of the updated values and an update, a step over those.
 */
static void put_scenario(void)
{
    static const collie_dtype dtypes[] = {COLLIE_FLOAT32, COLLIE_FLOAT64, COLLIE_BFLOAT16};
    static const size_t counts[] = {1, 1000, 300001};
    for (size_t k = 0; k < TEST_NTOPOLOGIES; k++) {
        collie_topology *topo = make(test_topologies[k].kind, test_topologies[k].param);
        int nin = collie_topology_in(topo, rank, NULL, NULL, 0);
        for (size_t ti = 0; ti < sizeof dtypes / sizeof *dtypes; ti++) {
            collie_dtype t = dtypes[ti];
            size_t count = counts[(k + ti) % 3], bytes = count * test_dtype_size(t);
            void *x = alloc(bytes), *y = alloc(bytes);
            char what[120];
            snprintf(what, sizeof what, "%s, %s, count %zu", test_topologies[k].name,
                     test_dtype_name(t), count);
            fill(t, x, count, rank, 0);
            collie_win *win = NULL;
            CHECK_OK(comm, collie_win_create(comm, topo, x, count, t, &win));
            update_matches(win, topo, x, y, count, t, what, "first update");
            /* a put of round 1's data from every rank, once all have looked */
            CHECK_OK(comm, collie_barrier(comm));
            fill(t, x, count, rank, 1);
            WIN_OK(win, collie_win_put(win, x, NULL));
            WIN_OK(win, collie_win_fence(win));
            unsigned long long got[64];
            CHECK(collie_win_deposits(win, got, 64) == nin, "in-degree");
            for (int d = 0; d < nin && d < 64; d++)
                CHECK(got[d] == 1, "%s: %llu deposits from in-neighbour %d, want 1", what, got[d],
                      d);
            update_matches(win, topo, x, y, count, t, what, "after puts");
            /* every rank published y; once all have, a get fetches them */
            CHECK_OK(comm, collie_barrier(comm));
            WIN_OK(win, collie_win_get(win));
            CHECK_OK(comm, collie_barrier(comm)); /* before anyone publishes again */
            update_matches(win, topo, y, y, count, t, what, "after a get");
            WIN_OK(win, collie_win_free(win));
            free(x), free(y);
        }
        collie_topology_free(topo);
    }
}

/*
 * Push-sum over exponential-2 (directed: column-stochastic weights only),
 * with empty mailboxes at the start: ranks take different numbers of
 * asynchronous steps, pausing at random; then everything deposited is
 * collected and the sums of values and weights are what they were; then
 * synchronous steps reach the mean.
 */
static void pushsum_scenario(void)
{
    collie_topology *topo = make(COLLIE_TOPO_EXPONENTIAL, 2);
    int nout = collie_topology_out(topo, rank, NULL, NULL, 0);
    double w[64];
    for (int k = 0; k < 64; k++)
        w[k] = 1.0 / (nout + 1);
    size_t count = 1000;
    double *x = alloc(count * sizeof *x), *sums = alloc((count + 1) * sizeof *sums);
    for (size_t i = 0; i < count; i++)
        x[i] = input(rank, i, 0);
    collie_win *win = NULL;
    CHECK_OK(comm, collie_win_create(comm, topo, NULL, count, COLLIE_FLOAT64, &win));
    unsigned seed = 12345u + (unsigned)rank;
    for (int step = 0; step < 20 + 7 * rank; step++) {
        WIN_OK(win, collie_win_accumulate(win, x, w));
        if (rand_r(&seed) % 4 == 0) {
            struct timespec nap = {0, (long)(rand_r(&seed) % 2000) * 1000};
            nanosleep(&nap, NULL);
        }
        WIN_OK(win, collie_win_collect(win, x, w[0]));
    }
    WIN_OK(win, collie_win_fence(win));
    WIN_OK(win, collie_win_collect(win, x, 1.0));
    for (size_t i = 0; i < count; i++)
        sums[i] = x[i];
    sums[count] = collie_win_weight(win);
    CHECK_OK(comm, collie_allreduce(comm, sums, sums, count + 1, COLLIE_FLOAT64, COLLIE_SUM));
    CHECK(fabs(sums[count] - size) <= 1e-12 * size, "the weights sum to %.17g, not %d", sums[count],
          size);
    for (size_t i = 0; i < count; i++) {
        double want = 0;
        for (int r = 0; r < size; r++)
            want += input(r, i, 0);
        CHECK(fabs(sums[i] - want) <= 1e-12 * (fabs(want) + size),
              "element %zu sums to %.17g, not %g", i, sums[i], want);
    }
    for (int step = 0; step < 60; step++) {
        WIN_OK(win, collie_win_accumulate(win, x, w));
        WIN_OK(win, collie_win_fence(win));
        WIN_OK(win, collie_win_collect(win, x, w[0]));
    }
    double p = collie_win_weight(win);
    for (size_t i = 0; i < count; i++) {
        double mean = 0;
        for (int r = 0; r < size; r++)
            mean += input(r, i, 0) / size;
        CHECK(fabs(x[i] / p - mean) <= 1e-9, "rank %d element %zu: x/p = %.17g, mean %.17g", rank,
              i, x[i] / p, mean);
    }
    WIN_OK(win, collie_win_free(win));
    collie_topology_free(topo);
    free(x), free(sums);
}

/*
 * Every rank puts 40 constant vectors (rank j's k-th: 1000 j + k) to its
 * out-neighbours while updating its own zeros between them: a mailbox
 * holds one whole deposit, so each update gives the same value in every
 * element; all deposits arrive; the last update gives the last puts.
 */
static void concurrent_scenario(void)
{
    enum { PUTS = 40 };
    collie_topology *topo = make(COLLIE_TOPO_EXPONENTIAL, 2);
    int from[64];
    double wt[64];
    int nin = collie_topology_in(topo, rank, from, wt, 64);
    double self = collie_topology_self_weight(topo, rank);
    size_t count = 300001;
    float *x = alloc(count * sizeof *x), *y = alloc(count * sizeof *y);
    collie_win *win = NULL;
    CHECK_OK(comm, collie_win_create(comm, topo, NULL, count, COLLIE_FLOAT32, &win));
    unsigned long long got[64];
    for (int k = 1; k <= PUTS; k++) {
        for (size_t i = 0; i < count; i++)
            x[i] = (float)(1000 * rank + k);
        WIN_OK(win, collie_win_put(win, x, NULL));
        for (int u = 0; u < 3; u++) {
            memset(y, 0, count * sizeof *y);
            WIN_OK(win, collie_win_update(win, y));
            for (size_t i = 1; i < count; i++)
                CHECK(y[i] == y[0],
                      "put %d, update %d: element %zu is %.9g, element 0 %.9g: a "
                      "mailbox held parts of two deposits",
                      k, u, i, y[i], y[0]);
        }
    }
    WIN_OK(win, collie_win_fence(win));
    CHECK(collie_win_deposits(win, got, 64) == nin, "in-degree");
    float want = 0.0f;
    for (int d = 0; d < nin; d++) {
        CHECK(got[d] == PUTS, "%llu deposits from rank %d, want %d", got[d], from[d], PUTS);
        want += (float)wt[d] * (float)(1000 * from[d] + PUTS);
    }
    memset(y, 0, count * sizeof *y);
    WIN_OK(win, collie_win_update(win, y));
    (void)self; /* the own term is 0 */
    for (size_t i = 0; i < count; i++)
        CHECK(y[i] == want, "after the fence: element %zu is %.9g, want %.9g", i, y[i], want);
    WIN_OK(win, collie_win_free(win));
    collie_topology_free(topo);
    free(x), free(y);
}

/* The last rank dies after creating the window: its neighbours' fences fail in time. */
static void kill_scenario(void)
{
    CHECK(size >= 2, "kill needs 2 ranks");
    collie_topology *topo = make(COLLIE_TOPO_RING, 0);
    float x[1000] = {0};
    collie_win *win = NULL;
    CHECK_OK(comm, collie_win_create(comm, topo, x, 1000, COLLIE_FLOAT32, &win));
    if (rank == size - 1) {
        struct timespec nap = {0, 200000000};
        nanosleep(&nap, NULL);
        raise(SIGKILL);
    }
    double t0 = test_seconds();
    collie_status st = collie_win_put(win, x, NULL);
    if (st == COLLIE_OK)
        st = collie_win_fence(win);
    int neighbour = rank == 0 || rank == size - 2;
    if (neighbour)
        CHECK(st == COLLIE_ERR_PEER_LOST || st == COLLIE_ERR_ABORTED || st == COLLIE_ERR_TIMEOUT,
              "rank %d: %s (%s)", rank, collie_strerror(st), collie_win_last_error(win));
    CHECK(test_seconds() - t0 < test_time(15), "rank %d took %.1f s", rank, test_seconds() - t0);
    /* Sticky: the next call says so too, at once. */
    if (st != COLLIE_OK)
        CHECK(collie_win_update(win, x) == st, "rank %d: a failed window updated", rank);
    /* A failed window is still freed (its thread stopped), at once. */
    t0 = test_seconds();
    collie_win_free(win);
    CHECK(test_seconds() - t0 < test_time(15), "rank %d: freeing took %.1f s", rank,
          test_seconds() - t0);
    collie_topology_free(topo);
}

static void expect_invalid(collie_status st, const char *msg, const char *needle, const char *what)
{
    CHECK(st == COLLIE_ERR_INVALID_ARG, "%s: %s", what, collie_strerror(st));
    CHECK(strstr(msg, needle), "%s: message '%s' lacks '%s'", what, msg, needle);
}

static void badargs_scenario(void)
{
    float x[4] = {1, 2, 3, 4};
    collie_topology *topo = make(COLLIE_TOPO_RING, 0), *other = NULL;
    CHECK_OK(NULL, collie_topology_create(COLLIE_TOPO_RING, size + 1, 0, &other));
    collie_win *win = (collie_win *)x;
    expect_invalid(collie_win_create(comm, other, x, 4, COLLIE_FLOAT32, &win),
                   collie_last_error(comm), "nodes", "a topology of another size");
    CHECK(win == NULL, "a refused create left a window");
    expect_invalid(collie_win_create(comm, topo, x, 4, COLLIE_INT32, &win), collie_last_error(comm),
                   "dtype", "an integer window");
    expect_invalid(collie_win_put(NULL, x, NULL), collie_last_error(NULL), "win", "no window");
    CHECK_OK(comm, collie_win_create(comm, topo, x, 4, COLLIE_FLOAT32, &win));
    expect_invalid(collie_win_put(win, NULL, NULL), collie_win_last_error(win), "buf", "no data");
    expect_invalid(collie_win_collect(win, x, NAN), collie_win_last_error(win), "self_weight",
                   "a NaN weight");
    /* refusals fail nothing */
    WIN_OK(win, collie_win_put(win, x, NULL));
    WIN_OK(win, collie_win_fence(win));
    WIN_OK(win, collie_win_update(win, x));
    WIN_OK(win, collie_win_free(win));
    CHECK(isnan(collie_win_weight(NULL)) && collie_win_deposits(NULL, NULL, 0) == -1 &&
              collie_win_free(NULL) == COLLIE_OK,
          "NULL windows");
    collie_topology_free(topo);
    collie_topology_free(other);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2, "usage: test_window put|pushsum|concurrent|kill|badargs");
    comm = test_init();
    rank = collie_rank(comm);
    size = collie_size(comm);
    const char *s = argv[1];
    if (!strcmp(s, "put"))
        put_scenario();
    else if (!strcmp(s, "pushsum"))
        pushsum_scenario();
    else if (!strcmp(s, "concurrent"))
        concurrent_scenario();
    else if (!strcmp(s, "kill"))
        kill_scenario();
    else if (!strcmp(s, "badargs"))
        badargs_scenario();
    else
        CHECK(0, "unknown scenario '%s'", s);
    collie_finalize(comm);
    printf("%s: ok on rank %d of %d\n", s, rank, size);
    return 0;
}
