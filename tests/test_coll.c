/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_coll.c - one collective, every dtype x op x count x in-place form
 * (from 1M elements fewer: ALL_OPS_BELOW), on the ranks `collie
 * run` started.  Every element of every output is checked exactly, unused
 * output regions and a guard past the end must stay untouched, and
 * out-of-place inputs must come back unchanged.
 *
 * Inputs are small integers chosen so that every result is exact in every
 * dtype (float16, bfloat16 and int8 included) and has a closed form, so
 * checking 16M elements costs no more than filling them.
 *
 *   collie run -n N test_coll COLLECTIVE      (COLLIE_TEST_MAX_COUNT caps the counts)
 *
 * COLLIE_TEST_NONBLOCKING=1 runs every case through the non-blocking form
 * instead, with two more requests in flight around it (an allreduce issued
 * before, an allgather after, both checked) and the three waited in an order
 * other than their issue order, changing from case to case.
 *
 * COLLIE_TEST_SKEW=1 starts buffer k (0: input, 1: output) 16 k + 8 rank
 * bytes (modulo 64) past a page, so that the ranks' buffers lie 1-31 bytes
 * apart modulo 4 KiB, where the kernel's copy between them crawls and the
 * single copies go by a placed buffer instead (transport/shm_attach.c).
 *
 * COLLIE_TEST_REPEAT=N runs every case N times in a row, so that a size's
 * calls repeat as a training loop's do (adaptive.c then runs granted calls
 * that do not ask local rank 0: each is checked as the first was).
 *
 * COLLIE_TEST_MEM=all takes every buffer from collie_mem_alloc, which peers
 * map and copy from as their own (transport/shm_mem.c); =even on even ranks
 * only, so that calls mix mapped and kernel copies.  A buffer that grows is
 * freed and allocated again, often at the same address: a peer must not
 * read the old segment there.
 */
#include "test_util.h"

#define GUARD 64
#define GUARD_BYTE 0xa5
#define UNTOUCHED 0xee

static const size_t counts[] = {0, 1, 2, 3, 7, 64, 1000, 65537, 1u << 20, (1u << 24) + 3};
#define N_COUNTS (sizeof counts / sizeof counts[0])
/*
 * From 1M elements on, a reduction runs SUM and AVG only (AVG's division is
 * a pass of its own), and every collective one dtype of each element size
 * (float32, float64, bfloat16, int8).  Operators and dtypes differ only in
 * the kernels, which work in blocks of a few KiB: unit.reduce checks each
 * against a plain loop at 1 to 5000 elements, and every operator and dtype
 * runs here at every count up to 65537 (past a slot for 8-byte dtypes).  The
 * large counts are for the algorithms' pieces, pipelines and slot
 * boundaries, which only the element's size changes.
 */
#define ALL_OPS_BELOW (1u << 20)
static int large_count_dtype(collie_dtype t)
{
    return t == COLLIE_FLOAT32 || t == COLLIE_FLOAT64 || t == COLLIE_BFLOAT16 || t == COLLIE_INT8;
}

static int rank, size;
static long failures, cases;
static int nonblocking, skew, mem, repeat = 1;

/* The requests around a non-blocking case: one issued before it, one after. */
static struct {
    collie_request *before, *after;
    long long sum_in[3], sum_out[3];
    int32_t gather_in, *gather_out;
} around;

static void around_issue_before(collie_comm *comm)
{
    for (int i = 0; i < 3; i++)
        around.sum_in[i] = (long long)(rank + 1) * (i + 1);
    CHECK_OK(comm, collie_iallreduce(comm, around.sum_in, around.sum_out, 3, COLLIE_INT64,
                                     COLLIE_SUM, &around.before));
}

/* Issues the request after the case's, waits all three in a rotating order, checks the two. */
static collie_status around_finish(collie_comm *comm, collie_status issued, collie_request **reqp)
{
    collie_request *req = *reqp; /* read here: as an argument it could be read before the issue */
    if (issued != COLLIE_OK) {
        collie_wait(around.before);
        return issued;
    }
    around.gather_in = rank * 7 + 1;
    around.gather_out = calloc((size_t)size, sizeof(int32_t));
    CHECK(around.gather_out, "out of memory");
    CHECK_OK(comm, collie_iallgather(comm, &around.gather_in, around.gather_out, 1, COLLIE_INT32,
                                     &around.after));
    collie_request *reqs[3] = {around.before, req, around.after};
    int first = (int)(cases % 3);
    collie_status st = COLLIE_OK;
    for (int k = 0; k < 3; k++) { /* first, then the others backwards */
        collie_status s = collie_wait(reqs[(first + 3 - k) % 3]);
        if (st == COLLIE_OK)
            st = s;
    }
    long long n = size;
    for (int i = 0; i < 3 && st == COLLIE_OK; i++)
        CHECK(around.sum_out[i] == (i + 1) * n * (n + 1) / 2, "allreduce around the case: %lld",
              around.sum_out[i]);
    for (int r = 0; r < size && st == COLLIE_OK; r++)
        CHECK(around.gather_out[r] == r * 7 + 1, "allgather around the case: [%d] = %d", r,
              around.gather_out[r]);
    free(around.gather_out);
    return st;
}

/* Runs one call blocking, or non-blocking amid two more requests. */
#define CALL(blocking, ...)                                                                        \
    (nonblocking ? (around_issue_before(comm),                                                     \
                    around_finish(comm, collie_i##blocking(__VA_ARGS__, &req), &req))              \
                 : collie_##blocking(__VA_ARGS__))

static int is_signed(collie_dtype t) { return t != COLLIE_UINT8; }
static int is_float(collie_dtype t) { return t <= COLLIE_BFLOAT16; }

/* Rank r's input element at global index i, for reduction op. */
static double input(collie_op op, collie_dtype t, int r, size_t i)
{
    int s = is_signed(t);
    switch (op) {
    case COLLIE_SUM:
    case COLLIE_AVG: return (double)(i % 5) - (s ? 2 : 0) + r * (double)((i / 3) % 2);
    case COLLIE_PROD:
        if ((size_t)r == i % (size_t)size)
            return 2;
        if (size >= 2 && (size_t)r == (i + 1) % (size_t)size)
            return 3;
        if (size >= 3 && s && (size_t)r == (i + 2) % (size_t)size)
            return -1;
        return 1;
    case COLLIE_MIN:
    case COLLIE_MAX:
        return (double)(i % 11) - (s ? 5 : 0) + (double)(((size_t)r + i) % (size_t)size);
    }
    return 0;
}

static double expected(collie_op op, collie_dtype t, size_t i)
{
    int s = is_signed(t);
    double a = (double)(i % 5) - (s ? 2 : 0), c = (double)((i / 3) % 2);
    double sum = size * a + c * size * (size - 1) / 2;
    switch (op) {
    case COLLIE_SUM: return sum;
    case COLLIE_AVG:
        if (is_float(t))
            return sum / size;
        return (double)((long long)sum / size); /* C integer division truncates */
    case COLLIE_PROD: return 2.0 * (size >= 2 ? 3 : 1) * (size >= 3 && s ? -1 : 1);
    case COLLIE_MIN: return (double)(i % 11) - (s ? 5 : 0);
    case COLLIE_MAX: return (double)(i % 11) - (s ? 5 : 0) + size - 1;
    }
    return 0;
}

/*
 * Raw bytes for the collectives that only move data: any bits will do.  The
 * pattern repeats every PATTERN_PERIOD bytes, a prime, so no misplacement by
 * a whole number of elements or blocks can go unseen.
 */
#define PATTERN_PERIOD 4093
static unsigned char pattern(int r, size_t byte)
{
    uint32_t x = (uint32_t)(byte % PATTERN_PERIOD) * 2654435761u + (uint32_t)r * 40503u;
    return (unsigned char)(x >> 24 ^ x >> 11);
}

struct buf {
    unsigned char *p;
    size_t bytes;
};

/* Buffers are reused across cases (which: 0 or 1): fresh pages would cost more than the test. */
static struct buf make(int which, size_t bytes)
{
    static unsigned char *pool[2];
    static size_t capacity[2];
    size_t start = skew ? (size_t)(16 * which + 8 * rank) % 64 : 0, need = start + bytes + GUARD;
    if (capacity[which] < need && mem) {
        CHECK(collie_mem_free(pool[which]) == COLLIE_OK, "collie_mem_free refused its own buffer");
        void *p = NULL;
        pool[which] = collie_mem_alloc(&p, need) == COLLIE_OK ? p : NULL;
        capacity[which] = pool[which] ? need : 0;
    } else if (capacity[which] < need) { /* malloc's placement, as a program's, unless skewed */
        free(pool[which]);
        pool[which] = skew ? aligned_alloc(4096, (need + 4095) / 4096 * 4096) : malloc(need);
        capacity[which] = pool[which] ? need : 0;
    }
    CHECK(pool[which], "out of memory for %zu bytes", bytes);
    struct buf b = {pool[which] + start, bytes};
    memset(b.p, UNTOUCHED, bytes);
    memset(b.p + bytes, GUARD_BYTE, GUARD);
    return b;
}

static int guard_ok(const struct buf *b)
{
    for (size_t k = 0; k < GUARD; k++)
        if (b->p[b->bytes + k] != GUARD_BYTE)
            return 0;
    return 1;
}

static void report(const char *what, const char *coll, collie_dtype t, int op, size_t count,
                   int mode, size_t at)
{
    if (failures++ < 10)
        fprintf(stderr, "rank %d/%d: %s %s op=%d count=%zu mode=%d: %s at element %zu\n", rank,
                size, coll, test_dtype_name(t), op, count, mode, what, at);
}

/*
 * Inputs and results repeat every 330 * size elements (a multiple of the
 * periods 5, 6, 11 and size used above), so one period is computed and the
 * buffers are filled and checked with memcpy and memcmp.
 */
struct period {
    collie_dtype t;
    collie_op op;
    size_t len; /* elements */
    unsigned char *input, *expect;
};

static struct period period_for(collie_dtype t, collie_op op)
{
    static struct period p;
    if (p.input && p.t == t && p.op == op)
        return p;
    free(p.input);
    free(p.expect);
    p.t = t;
    p.op = op;
    p.len = 330 * (size_t)size;
    p.input = malloc(p.len * test_dtype_size(t));
    p.expect = malloc(p.len * test_dtype_size(t));
    CHECK(p.input && p.expect, "out of memory");
    for (size_t i = 0; i < p.len; i++) {
        test_put(t, p.input, i, input(op, t, rank, i));
        test_put(t, p.expect, i, expected(op, t, i));
    }
    return p;
}

/* Copies (fill) or compares (check) n elements at global index first against a template. */
static size_t tile(unsigned char *buf, const unsigned char *tmpl, size_t period, size_t es,
                   size_t first, size_t n, int fill)
{
    for (size_t j = 0; j < n;) {
        size_t at = (first + j) % period, m = period - at < n - j ? period - at : n - j;
        if (fill) {
            memcpy(buf + j * es, tmpl + at * es, m * es);
        } else if (memcmp(buf + j * es, tmpl + at * es, m * es)) {
            for (size_t k = 0;; k++)
                if (memcmp(buf + (j + k) * es, tmpl + (at + k) * es, es))
                    return j + k;
        }
        j += m;
    }
    return (size_t)-1;
}

static size_t check_reduced(const unsigned char *got, collie_dtype t, collie_op op, size_t first,
                            size_t n)
{
    struct period p = period_for(t, op);
    return tile((unsigned char *)got, p.expect, p.len, test_dtype_size(t), first, n, 0);
}

static size_t check_input(const unsigned char *got, collie_dtype t, collie_op op, size_t first,
                          size_t n)
{
    struct period p = period_for(t, op);
    return tile((unsigned char *)got, p.input, p.len, test_dtype_size(t), first, n, 0);
}

static void fill_reduced(unsigned char *buf, collie_dtype t, collie_op op, size_t first, size_t n)
{
    struct period p = period_for(t, op);
    tile(buf, p.input, p.len, test_dtype_size(t), first, n, 1);
}

static const unsigned char *pattern_of(int r)
{
    static unsigned char *cache[64];
    static int cached[64];
    int slot = r % 64;
    if (!cache[slot] || cached[slot] != r) {
        free(cache[slot]);
        cache[slot] = malloc(PATTERN_PERIOD);
        CHECK(cache[slot], "out of memory");
        for (size_t j = 0; j < PATTERN_PERIOD; j++)
            cache[slot][j] = pattern(r, j);
        cached[slot] = r;
    }
    return cache[slot];
}

static void fill_pattern(unsigned char *p, int r, size_t first_byte, size_t n)
{
    tile(p, pattern_of(r), PATTERN_PERIOD, 1, first_byte, n, 1);
}

static size_t check_pattern(const unsigned char *p, int r, size_t first_byte, size_t n)
{
    return tile((unsigned char *)p, pattern_of(r), PATTERN_PERIOD, 1, first_byte, n, 0);
}

static void run_case(collie_comm *comm, const char *coll, collie_dtype t, collie_op op,
                     size_t count, int mode, int root)
{
    size_t es = test_dtype_size(t), bytes = count * es, n = (size_t)size;
    size_t bad = (size_t)-1;
    collie_status st = COLLIE_OK;
    collie_request *req = NULL;
    cases++;
    if (!strcmp(coll, "allreduce")) {
        struct buf in = make(0, bytes), out = mode ? in : make(1, bytes);
        fill_reduced(in.p, t, op, 0, count);
        st = CALL(allreduce, comm, in.p, out.p, count, t, op);
        bad = check_reduced(out.p, t, op, 0, count);
        if (!mode && bad == (size_t)-1) /* the input must be intact */
            bad = check_input(in.p, t, op, 0, count);
        if (!guard_ok(&out) || !guard_ok(&in))
            report("guard overwritten", coll, t, op, count, mode, count);
    } else if (!strcmp(coll, "reduce")) {
        struct buf in = make(0, bytes), out = mode ? in : make(1, bytes);
        fill_reduced(in.p, t, op, 0, count);
        void *recv = rank == root ? out.p : (mode ? in.p : NULL); /* non-roots may pass NULL */
        st = CALL(reduce, comm, in.p, recv, count, t, op, root);
        if (rank == root)
            bad = check_reduced(out.p, t, op, 0, count);
        else if (!mode) /* a non-root passed NULL: its separate buffer stays untouched */
            for (size_t j = 0; j < bytes && bad == (size_t)-1; j++)
                if (out.p[j] != UNTOUCHED)
                    bad = j / es;
        if (mode && rank != root && bad == (size_t)-1) /* in place at a non-root: input intact */
            bad = check_input(in.p, t, op, 0, count);
        if (!guard_ok(&out) || !guard_ok(&in))
            report("guard overwritten", coll, t, op, count, mode, count);
    } else if (!strcmp(coll, "broadcast")) {
        struct buf b = make(0, bytes);
        if (rank == root)
            fill_pattern(b.p, root, 0, bytes);
        st = CALL(broadcast, comm, b.p, count, t, root);
        bad = check_pattern(b.p, root, 0, bytes);
        if (!guard_ok(&b))
            report("guard overwritten", coll, t, op, count, mode, count);
        bad = bad == (size_t)-1 ? bad : bad / es;
    } else if (!strcmp(coll, "allgather")) {
        struct buf out = make(0, bytes * n), in = make(1, bytes);
        unsigned char *send = in.p;
        if (mode) { /* 1: MPI form (sendbuf == recvbuf), 2: NCCL form (own block) */
            send = mode == 1 ? out.p : out.p + (size_t)rank * bytes;
            fill_pattern(out.p + (size_t)rank * bytes, rank, 0, bytes);
        } else {
            fill_pattern(in.p, rank, 0, bytes);
        }
        st = CALL(allgather, comm, send, out.p, count, t);
        for (int r = 0; r < size && bad == (size_t)-1; r++) {
            size_t b = check_pattern(out.p + (size_t)r * bytes, r, 0, bytes);
            if (b != (size_t)-1)
                bad = ((size_t)r * bytes + b) / es;
        }
        if (!mode && check_pattern(in.p, rank, 0, bytes) != (size_t)-1)
            report("input modified", coll, t, op, count, mode, 0);
        if (!guard_ok(&out) || !guard_ok(&in))
            report("guard overwritten", coll, t, op, count, mode, count);
    } else if (!strcmp(coll, "reduce_scatter")) {
        struct buf in = make(0, bytes * n), sep = make(1, bytes);
        fill_reduced(in.p, t, op, 0, count * n);
        unsigned char *out = mode == 0 ? sep.p : mode == 1 ? in.p : in.p + (size_t)rank * bytes;
        st = CALL(reduce_scatter, comm, in.p, out, count, t, op);
        bad = check_reduced(out, t, op, (size_t)rank * count, count);
        if (!mode && bad == (size_t)-1) /* the input must be intact */
            bad = check_input(in.p, t, op, 0, count * n);
        if (mode == 1 && bad == (size_t)-1 && n > 1) /* MPI form: only the first block changes */
            bad = check_input(in.p + bytes, t, op, count, count * (n - 1));
        if (!guard_ok(&in) || !guard_ok(&sep))
            report("guard overwritten", coll, t, op, count, mode, count);
    } else if (!strcmp(coll, "alltoall")) {
        struct buf in = make(0, bytes * n), out = mode ? in : make(1, bytes * n);
        /* block b of rank r's input: pattern(r * size + b) */
        for (size_t b = 0; b < n; b++)
            fill_pattern(in.p + b * bytes, rank * size + (int)b, 0, bytes);
        st = CALL(alltoall, comm, in.p, out.p, count, t);
        for (int r = 0; r < size && bad == (size_t)-1; r++) {
            size_t b = check_pattern(out.p + (size_t)r * bytes, r * size + rank, 0, bytes);
            if (b != (size_t)-1)
                bad = ((size_t)r * bytes + b) / es;
        }
        if (!guard_ok(&out) || !guard_ok(&in))
            report("guard overwritten", coll, t, op, count, mode, count);
    } else {
        CHECK(0, "unknown collective '%s'", coll);
    }
    if (st != COLLIE_OK) {
        fprintf(stderr, "rank %d: %s %s count=%zu failed: %s: %s\n", rank, coll, test_dtype_name(t),
                count, collie_strerror(st), collie_last_error(comm));
        exit(1);
    }
    if (bad != (size_t)-1)
        report("wrong value", coll, t, op, count, mode, bad);
}

/*
 * The barrier: one rank arrives late each round; no rank may leave before the
 * last has arrived (CLOCK_MONOTONIC is one clock for every process of the
 * machine, network namespaces included).
 */
static void barrier_rounds(collie_comm *comm)
{
    double *entered = malloc(sizeof(double) * (size_t)size);
    CHECK(entered, "out of memory");
    for (int round = 0; round < 3 * size; round++) {
        if (rank == round % size) {
            struct timespec late = {0, 2000000};
            nanosleep(&late, NULL);
        }
        double in = test_seconds();
        collie_request *req = NULL;
        CHECK_OK(comm, CALL(barrier, comm));
        double out = test_seconds();
        CHECK_OK(comm, collie_allgather(comm, &in, entered, 1, COLLIE_FLOAT64));
        for (int r = 0; r < size; r++) {
            cases++;
            if (entered[r] > out) {
                failures++;
                fprintf(stderr,
                        "rank %d left barrier round %d at %.6f, before rank %d entered at "
                        "%.6f\n",
                        rank, round, out, r, entered[r]);
            }
        }
    }
    free(entered);
}

/*
 * "run_ahead": thousands of tiny calls back to back, each with its own
 * values, rooted reduces to a rotating root between allreduces: a rank that
 * receives nothing leaves a reduce at its sync and writes its next call's
 * data while the root still reads this one's (up to 24 bytes ride in the
 * sync flag's line, by the step's parity: shm.h, collie__win_carry).
 */
static void run_ahead_rounds(collie_comm *comm)
{
    for (int call = 0; call < 3000; call++) {
        size_t count = 1 + (size_t)call % 4; /* 8-32 bytes: the carry's edge on both sides */
        int root = call % 3 == 2 ? -1 : (call / 3) % size;
        int64_t in[4], out[4] = {-1, -1, -1, -1};
        for (size_t i = 0; i < count; i++)
            in[i] = (int64_t)call * 1000 + rank * 10 + (int64_t)i;
        collie_request *req = NULL;
        if (root < 0)
            CHECK_OK(comm, CALL(allreduce, comm, in, out, count, COLLIE_INT64, COLLIE_SUM));
        else
            CHECK_OK(comm, CALL(reduce, comm, in, out, count, COLLIE_INT64, COLLIE_SUM, root));
        if (root >= 0 && rank != root)
            continue;
        for (size_t i = 0; i < count; i++) {
            int64_t want =
                (int64_t)size * (call * 1000 + (int64_t)i) + 10 * (int64_t)size * (size - 1) / 2;
            cases++;
            if (out[i] != want && failures++ < 10)
                fprintf(stderr, "rank %d call %d (%s, root %d) element %zu: %lld, want %lld\n",
                        rank, call, root < 0 ? "allreduce" : "reduce", root, i, (long long)out[i],
                        (long long)want);
        }
    }
}

int main(int argc, char **argv)
{
    CHECK(argc == 2,
          "usage: test_coll "
          "allreduce|reduce|broadcast|allgather|reduce_scatter|alltoall|barrier|run_ahead");
    const char *coll = argv[1];
    collie_comm *comm = test_init();
    const char *nb = getenv("COLLIE_TEST_NONBLOCKING");
    nonblocking = nb && *nb == '1';
    const char *sk = getenv("COLLIE_TEST_SKEW");
    skew = sk && *sk == '1';
    rank = collie_rank(comm);
    const char *rp = getenv("COLLIE_TEST_REPEAT");
    repeat = rp && atoi(rp) > 0 ? atoi(rp) : 1;
    const char *me = getenv("COLLIE_TEST_MEM");
    mem = me && (!strcmp(me, "all") || (!strcmp(me, "even") && rank % 2 == 0));
    size = collie_size(comm);
    if (!strcmp(coll, "run_ahead")) {
        double t0 = test_seconds();
        run_ahead_rounds(comm);
        CHECK_OK(comm, collie_finalize(comm));
        if (rank == 0 || failures)
            printf("run_ahead on %d ranks: %ld cases, %ld failures, %.1f s (rank %d)\n", size,
                   cases, failures, test_seconds() - t0, rank);
        return failures != 0;
    }
    if (!strcmp(coll, "barrier")) {
        double t0 = test_seconds();
        barrier_rounds(comm);
        CHECK_OK(comm, collie_finalize(comm));
        if (rank == 0 || failures)
            printf("barrier on %d ranks: %ld cases, %ld failures, %.1f s (rank %d)\n", size, cases,
                   failures, test_seconds() - t0, rank);
        return failures != 0;
    }
    const char *cap = getenv("COLLIE_TEST_MAX_COUNT");
    size_t max_count = cap ? strtoull(cap, NULL, 10) : (size_t)-1;
    int reduces =
        !strcmp(coll, "allreduce") || !strcmp(coll, "reduce") || !strcmp(coll, "reduce_scatter");
    int per_rank_blocks =
        !strcmp(coll, "allgather") || !strcmp(coll, "reduce_scatter") || !strcmp(coll, "alltoall");
    int modes = !strcmp(coll, "broadcast")                    ? 1
                : per_rank_blocks && strcmp(coll, "alltoall") ? 3
                                                              : 2;
    int rooted = !strcmp(coll, "broadcast") || !strcmp(coll, "reduce");
    double t0 = test_seconds();
    for (size_t c = 0; c < N_COUNTS; c++) {
        /* Block collectives move size x count elements: keep their largest case ~count in all. */
        size_t count = counts[c];
        if (per_rank_blocks && count >= (1u << 20))
            count = (count + (size_t)size - 1) / (size_t)size;
        if (count > max_count)
            continue;
        for (int t = COLLIE_FLOAT32; t <= COLLIE_INT64; t++)
            for (int op = COLLIE_SUM; op <= (reduces ? COLLIE_AVG : COLLIE_SUM); op++) {
                if (count >= ALL_OPS_BELOW &&
                    ((op != COLLIE_SUM && op != COLLIE_AVG) || !large_count_dtype((collie_dtype)t)))
                    continue;
                for (int mode = 0; mode < modes; mode++)
                    for (int root = 0; root<(rooted ? size : 1); root += size> 1 ? size - 1 : 1)
                        for (int r = 0; r < repeat; r++)
                            run_case(comm, coll, (collie_dtype)t, (collie_op)op, count, mode,
                                     rooted ? root : -1);
            }
    }
    CHECK_OK(comm, collie_finalize(comm));
    if (rank == 0 || failures)
        printf("%s on %d ranks: %ld cases, %ld failures, %.1f s (rank %d)\n", coll, size, cases,
               failures, test_seconds() - t0, rank);
    return failures != 0;
}
