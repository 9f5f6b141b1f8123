/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sweep.c - the measurement loop: for every size, warm up, time each of
 * --iters operations on every rank (those under 2 us a batch at a time),
 * keep the slowest rank's mean and median,
 * then run once more on known inputs and count the wrong output elements.
 * Both libraries go through this one loop (see bench.h's backend).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

/* The API's count, and the bytes of each buffer, for a size in bytes (bench.h). */
static void shape(int c, size_t bytes, size_t es, int n, size_t *count, size_t *send, size_t *recv)
{
    size_t elems = bytes / es, per_rank = elems / (size_t)n;
    *count = elems;
    *send = *recv = bytes;
    if (c == BENCH_ALLGATHER) {
        *count = per_rank;
        *send = per_rank * es;
    } else if (c == BENCH_REDUCE_SCATTER) {
        *count = per_rank;
        *recv = per_rank * es;
    } else if (c == BENCH_ALLTOALL) {
        *count = per_rank;
    } else if (c == BENCH_NEIGHBOR_ALLGATHER) {
        *recv = bytes * (size_t)n; /* in-degree blocks: at most n - 1 */
    }
}

/* Exact expected values have closed forms (see fill()); floats divide in their own width. */
void bench_encode(collie_dtype t, void *p, size_t i, double v)
{
    switch (t) {
    case COLLIE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case COLLIE_FLOAT64: ((double *)p)[i] = v; break;
    case COLLIE_FLOAT16: ((_Float16 *)p)[i] = (_Float16)(float)v; break;
    case COLLIE_BFLOAT16: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        ((uint16_t *)p)[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        break;
    }
    case COLLIE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case COLLIE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case COLLIE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case COLLIE_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    }
}

double bench_decode(collie_dtype t, const void *p, size_t i)
{
    switch (t) {
    case COLLIE_FLOAT32: return ((const float *)p)[i];
    case COLLIE_FLOAT64: return ((const double *)p)[i];
    case COLLIE_FLOAT16: return (double)((const _Float16 *)p)[i];
    case COLLIE_BFLOAT16: {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case COLLIE_INT8: return ((const int8_t *)p)[i];
    case COLLIE_UINT8: return ((const uint8_t *)p)[i];
    case COLLIE_INT32: return ((const int32_t *)p)[i];
    case COLLIE_INT64: return (double)((const int64_t *)p)[i];
    }
    return 0;
}

void bench_divide(void *buf, size_t count, collie_dtype t, int n)
{
    for (size_t i = 0; i < count; i++) {
        if (t == COLLIE_INT64) { /* exact past 2^53 */
            ((int64_t *)buf)[i] /= n;
            continue;
        }
        double x = bench_decode(t, buf, i);
        if (t == COLLIE_FLOAT64)
            x /= n;
        else if (t == COLLIE_FLOAT32 || t == COLLIE_FLOAT16 || t == COLLIE_BFLOAT16)
            x = (float)x / (float)n;
        else
            x = (double)((long long)x / n); /* integers: C's division, toward zero */
        bench_encode(t, buf, i, x);
    }
}

static int reduces(int c)
{
    return c == BENCH_ALLREDUCE || c == BENCH_REDUCE || c == BENCH_REDUCE_SCATTER;
}

/* Rank r's input element i (global index over the send buffer). */
double bench_input(int c, collie_op op, int r, int n, size_t i)
{
    if (!reduces(c))
        return (double)(((size_t)r * 31 + i) % 101);
    switch (op) {
    case COLLIE_PROD: return (size_t)r == i % (size_t)n ? 2 : 1;
    case COLLIE_MIN:
    case COLLIE_MAX: return (double)(i % 5 + ((size_t)r + i) % (size_t)n);
    default: return (double)(i % 3 + (size_t)(r % 2));
    }
}

double bench_reduced(collie_dtype t, collie_op op, int n, size_t i)
{
    double sum = (double)n * (double)(i % 3) + n / 2;
    switch (op) {
    case COLLIE_PROD: return 2;
    case COLLIE_MIN: return (double)(i % 5);
    case COLLIE_MAX: return (double)(i % 5) + n - 1;
    case COLLIE_SUM: return sum;
    case COLLIE_AVG:
        if (t == COLLIE_FLOAT64)
            return sum / n;
        if (t <= COLLIE_BFLOAT16)
            return (double)((float)sum / (float)n);
        return (double)((long long)sum / n);
    }
    return 0;
}

static void fill(const struct bench_backend *b, int c, const struct bench_opts *o,
                 unsigned char *send, size_t send_bytes)
{
    size_t es = bench_dtype_size(o->dtype);
    for (size_t i = 0; i < send_bytes / es; i++)
        bench_encode(o->dtype, send, i, bench_input(c, o->op, b->rank, b->size, i));
}

/* Counts the elements of this rank's output that differ from the expected ones. */
static long long verify(const struct bench_backend *b, int c, const struct bench_opts *o,
                        const unsigned char *recv, size_t count)
{
    size_t es = bench_dtype_size(o->dtype), n = (size_t)b->size, r = (size_t)b->rank;
    unsigned char want[8];
    long long wrong = 0;
    size_t elems = c == BENCH_ALLGATHER || c == BENCH_ALLTOALL ? count * n : count;
    if (c == BENCH_NEIGHBOR_ALLGATHER)
        elems = count * (size_t)b->neighbor_blocks(b);
    if ((c == BENCH_REDUCE && b->rank != o->root) || (c == BENCH_PINGPONG && bench_partner(b) < 0))
        return 0;
    for (size_t i = 0; i < elems; i++) {
        double v;
        switch (c) {
        case BENCH_BROADCAST: v = bench_input(c, o->op, o->root, b->size, i); break;
        case BENCH_PINGPONG: v = bench_input(c, o->op, bench_partner(b), b->size, i); break;
        case BENCH_ALLGATHER:
            v = bench_input(c, o->op, (int)(i / count), b->size, i % count);
            break;
        case BENCH_ALLTOALL:
            v = bench_input(c, o->op, (int)(i / count), b->size, r * count + i % count);
            break;
        case BENCH_REDUCE_SCATTER:
            v = bench_reduced(o->dtype, o->op, b->size, r * count + i);
            break;
        case BENCH_NEIGHBOR:
        case BENCH_HIER_NEIGHBOR:
        case BENCH_NEIGHBOR_ALLGATHER: v = b->neighbor_expected(b, o, i, count); break;
        default: v = bench_reduced(o->dtype, o->op, b->size, i);
        }
        bench_encode(o->dtype, want, 0, v);
        wrong += memcmp(recv + i * es, want, es) != 0;
    }
    return wrong;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_iters_for(const struct bench_opts *o, double est)
{
    double want = est > 0 ? ceil(o->min_time / est) : o->iters;
    return want < 3 ? 3 : want > o->iters ? o->iters : (int)want;
}

/* In-place forms: allgather reads its block from recvbuf, reduce_scatter writes into sendbuf. */
static void in_place(int c, const struct bench_backend *b, size_t count, size_t es,
                     unsigned char *send, unsigned char *recv, const void **s, void **r)
{
    *s = send;
    *r = recv;
    if (c == BENCH_ALLGATHER)
        *s = recv + (size_t)b->rank * count * es;
    else if (c == BENCH_REDUCE_SCATTER)
        *r = send + (size_t)b->rank * count * es;
    else
        *r = send;
}

static void progress(const struct bench_backend *b, int c, size_t k, size_t nsizes, double t0,
                     double done, double total)
{
    if (b->rank != 0 || !isatty(2))
        return;
    double elapsed = bench_now_s() - t0, left = done > 0 ? elapsed * (total - done) / done : 0;
    fprintf(stderr, "\r%s %s: size %zu of %zu, %.0f s elapsed, about %.0f s left   ", b->name,
            bench_coll_name(c), k + 1, nsizes, elapsed, left);
    if (k + 1 == nsizes)
        fprintf(stderr, "\r%*s\r", 78, "");
}

static int fail(struct bench_backend *b, const char *what)
{
    fprintf(stderr, "%s bench, rank %d: %s failed: %s\n", b->name, b->rank, what, b->error(b));
    return -1;
}

/*
 * Testing: COLLIE_TEST_SLOW_ROUND=R makes every timed operation of round R
 * 2 ms slower, so that the tests can see bench flag rounds that disagree:
 * far past what an 8-byte allreduce takes in any build (200 us was not: a
 * clean-clone CI run saw the ASan build's first size take 262-302 us in
 * both rounds).
 */
static int test_slow_round(void)
{
    const char *v = getenv("COLLIE_TEST_SLOW_ROUND");
    return v && *v ? atoi(v) : -1;
}

/*
 * Testing: COLLIE_TEST_SLOW_MACHINE=R,B makes the machine probes taken after
 * a size of B bytes or more, in round R (-1: in every round), report 5x what
 * they measured, as when the host moves its vCPUs apart.
 */
static int test_slow_machine(int round, size_t bytes)
{
    const char *v = getenv("COLLIE_TEST_SLOW_MACHINE");
    int r;
    unsigned long long from;
    return v && sscanf(v, "%d,%llu", &r, &from) == 2 && (r < 0 || r == round) && bytes >= from;
}

/*
 * Rank 0 probes the machine's CPU-to-CPU latency (after timing bytes_timed,
 * or before the first size) while the others sleep through it
 * (bench_probe_handoff_ns).  Not with --noise: its threads hold the CPUs.
 * 0 elsewhere.
 */
static double probe_machine(const struct bench_backend *b, const struct bench_opts *o, int round,
                            size_t bytes_timed)
{
    if (o->noise)
        return 0;
    double ns = bench_probe_handoff_ns(b->rank);
    return test_slow_machine(round, bytes_timed) ? 5 * ns : ns;
}

#define ITERS_CAP 1000000 /* --min-time never asks for more operations per size */
#define MAX_ITERS(o) ((o)->min_time > 0 && (o)->iters < ITERS_CAP ? ITERS_CAP : (o)->iters)

/*
 * --min-time: enough iterations that a size is timed for at least that long
 * (a mean over 100 operations of 0.3 us is 30 us, and one timer interrupt
 * moves it by half), at least --iters.  From the slowest rank's warm-up, so
 * that every rank runs the same count.
 */
static int scaled_iters(struct bench_backend *b, const struct bench_opts *o, double per_op,
                        int *iters)
{
    if (b->max_double(b, &per_op))
        return -1;
    double want = per_op > 0 ? ceil(o->min_time / per_op) : ITERS_CAP;
    if (want > *iters)
        *iters = want > ITERS_CAP ? ITERS_CAP : (int)want;
    return 0;
}

/*
 * Operations shorter than BATCH_S are timed in batches of as many as fit in
 * it, one clock read a batch: a read costs about 27 ns here, a tenth of an
 * 8-byte allreduce on 2 ranks.  The median is then the batches' (each batch's
 * time over its operations), the mean still the whole loop's over --iters.
 */
#define BATCH_S 2e-6
#define BATCH_MAX 64

static int batch_for(double per_op)
{
    if (!(per_op > 0) || per_op >= BATCH_S)
        return 1;
    int k = (int)(BATCH_S / per_op);
    return k > BATCH_MAX ? BATCH_MAX : k;
}

/*
 * A zeroed buffer of `bytes`: calloc's, or with --offset `offset` bytes past
 * a page of a mapping of its own, or with --hugepages in a mapping of its
 * own that starts on a 2 MiB boundary and asks for huge pages (`offset`
 * past it, 0 without --offset).  Its pages fault in as each size's warm-up
 * first touches them, not all before the first size: a sweep to 1 GiB would
 * spend seconds there.  (The memset that was here never ran: GCC had made
 * malloc and memset one calloc.)
 */
#define HUGE_PAGE ((size_t)2 << 20)

struct buffer {
    unsigned char *at;
    void *mapped; /* the mapping, of `length` bytes; NULL: `at` is calloc's or the library's */
    size_t length;
    struct bench_backend *lib; /* --libmem: the library whose allocator `at` is from */
};

static int buffer_get(struct buffer *b, size_t bytes, int offset, int huge,
                      struct bench_backend *lib)
{
    *b = (struct buffer){0};
    if (lib) {
        if (!lib->mem_alloc || !(b->at = lib->mem_alloc(lib, bytes)))
            return -1;
        b->lib = lib;
        memset(b->at, 0, bytes);
        return 0;
    }
    if (offset < 0 && !huge)
        return (b->at = calloc(1, bytes)) ? 0 : -1;
    size_t past = offset < 0 ? 0 : (size_t)offset, align = huge ? HUGE_PAGE : 1;
    b->length = bytes + past + align - 1;
    b->mapped = mmap(NULL, b->length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->mapped == MAP_FAILED) {
        b->mapped = NULL;
        return -1;
    }
    uintptr_t start = ((uintptr_t)b->mapped + align - 1) & ~(uintptr_t)(align - 1);
    if (huge && madvise((void *)start, bytes + past, MADV_HUGEPAGE))
        fprintf(stderr, "bench: --hugepages: madvise: %s; the buffers stay on 4 KiB pages\n",
                strerror(errno));
    b->at = (unsigned char *)start + past;
    return 0;
}

/* --hugepages where the kernel grants none: said once, by rank 0 (madvise accepts it all the same). */
static void warn_if_no_huge_pages(void)
{
    static const char *setting = "/sys/kernel/mm/transparent_hugepage/enabled";
    char line[128] = "";
    FILE *f = fopen(setting, "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    if (!f || strstr(line, "[never]"))
        fprintf(stderr,
                "bench: --hugepages: transparent huge pages are off (%s: %s); the buffers "
                "stay on 4 KiB pages\n",
                setting, f ? "never" : "absent");
}

static void buffer_put(struct buffer *b)
{
    if (b->lib)
        b->lib->mem_free(b->lib, b->at);
    else if (b->mapped)
        munmap(b->mapped, b->length);
    else
        free(b->at);
}

static int sweep_one(struct bench_backend *b, const struct bench_opts *o, int c, int round,
                     struct bench_rows *rows)
{
    const double one_way = c == BENCH_PINGPONG ? 2 : 1; /* half the round trip, as osu_latency */
    size_t *sizes, nsizes = bench_sizes(o, c, b->size, &sizes), es = bench_dtype_size(o->dtype);
    size_t max_send = 0, max_recv = 0, count, sb, rb;
    double total = 0, done = 0, t0 = bench_now_s();
    for (size_t k = 0; k < nsizes; k++) {
        shape(c, sizes[k], es, b->size, &count, &sb, &rb);
        max_send = sb > max_send ? sb : max_send;
        max_recv = rb > max_recv ? rb : max_recv;
        total += (double)sizes[k] + 4096;
    }
    static int huge_pages_checked;
    if (o->hugepages && b->rank == 0 && !huge_pages_checked++)
        warn_if_no_huge_pages();
    struct buffer send_buf, recv_buf;
    int got_send =
        buffer_get(&send_buf, max_send + 64, o->offset[0], o->hugepages, o->libmem ? b : NULL) == 0;
    int got_recv =
        buffer_get(&recv_buf, max_recv + 64, o->offset[1], o->hugepages, o->libmem ? b : NULL) == 0;
    double *times = malloc(sizeof(double) * (size_t)MAX_ITERS(o));
    if (!got_send || !got_recv || !times) {
        fprintf(stderr, "bench: no memory for %zu + %zu bytes\n", max_send, max_recv);
        return -1;
    }
    unsigned char *send = send_buf.at, *recv = recv_buf.at;
    int ok = 0;
    int slow_round = test_slow_round();
    double handoff_before = probe_machine(b, o, round, 0);
    for (size_t k = 0; k < nsizes && ok == 0; k++) {
        shape(c, sizes[k], es, b->size, &count, &sb, &rb);
        const void *s = send;
        void *r = recv;
        /* broadcast has one buffer: the root's input; pingpong always has two */
        if ((o->inplace && c != BENCH_PINGPONG) || c == BENCH_BROADCAST)
            in_place(c, b, count, es, send, recv, &s, &r);
        fill(b, c, o, send, sb);
        if (o->inplace && c == BENCH_ALLGATHER)
            memcpy((void *)s, send, count * es);
        /* The warm-up's last operations estimate the time of one (the first ones fault pages in). */
        double warm = 0;
        int timed_warmup = o->warmup / 2;
        for (int i = 0; i < o->warmup && ok == 0; i++) {
            if (i == o->warmup - timed_warmup)
                warm = bench_now_s();
            ok = b->run(b, c, s, r, count, o->dtype, o->op, o->root);
        }
        double warm_end = bench_now_s();
        int iters = o->iters;
        if (ok == 0 && timed_warmup && o->min_time > 0) {
            ok = scaled_iters(b, o, (warm_end - warm) / timed_warmup, &iters);
            /*
             * A tenth more, untimed: the scheduler settles where the job's
             * threads run (and the library where its ranks wait) before the
             * clock starts, not during the first timed operations.
             */
            for (int i = 0; i < iters / 10 && ok == 0; i++)
                ok = b->run(b, c, s, r, count, o->dtype, o->op, o->root);
        }
        if (ok == 0)
            ok = b->barrier(b);
        int batch = batch_for(timed_warmup ? (warm_end - warm) / timed_warmup : 0), ntimes = 0;
        double start = bench_now_s(), prev = start;
        for (int i = 0; i < iters && ok == 0;) {
            int ops = iters - i < batch ? iters - i : batch;
            for (int j = 0; j < ops && ok == 0; j++) {
                ok = b->run(b, c, s, r, count, o->dtype, o->op, o->root);
                if (round == slow_round)
                    nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
            }
            i += ops;
            double now = bench_now_s();
            times[ntimes++] = (now - prev) / ops / one_way;
            prev = now;
        }
        if (ok)
            return fail(b, bench_coll_name(c));
        double mean = (prev - start) / iters / one_way;
        qsort(times, (size_t)ntimes, sizeof *times, by_value);
        double median = times[ntimes / 2];
        long long wrong = -1;
        if (o->check) { /* once more, on fresh inputs */
            fill(b, c, o, send, sb);
            if (o->inplace && c == BENCH_ALLGATHER)
                memcpy((void *)s, send, count * es);
            if (b->run(b, c, s, r, count, o->dtype, o->op, o->root))
                return fail(b, "the checked run");
            if (o->corrupt && b->rank == 0 && count)
                ((unsigned char *)r)[0] ^= 0x40;
            wrong = verify(b, c, o, r, count);
            if (b->sum_ll(b, &wrong))
                return fail(b, "summing #wrong");
        }
        if (b->max_double(b, &mean) || b->max_double(b, &median))
            return fail(b, "combining times");
        double handoff_after = probe_machine(b, o, round, sizes[k]);
        double handoff = handoff_after > handoff_before ? handoff_after : handoff_before;
        handoff_before = handoff_after;
        done += (double)sizes[k] + 4096;
        progress(b, c, k, nsizes, t0, done, total);
        if (b->rank != 0)
            continue;
        struct bench_row row = {.coll = c,
                                .round = round,
                                .ranks = b->size,
                                .local_size = b->local_size,
                                .bytes = sizes[k],
                                .count = sizes[k] / es,
                                .dtype = o->dtype,
                                .op = o->op,
                                .inplace = o->inplace,
                                .mean_us = mean * 1e6,
                                .median_us = median * 1e6,
                                .wrong = wrong,
                                .handoff_ns = handoff};
        snprintf(row.backend, sizeof row.backend, "%s", b->name);
        /* by the API's bytes, as the call chooses: one block of allgather, reduce_scatter, alltoall */
        snprintf(row.algo, sizeof row.algo, "%s", b->algo(b, (enum bench_coll)c, count * es));
        bench_rows_add(rows, &row);
    }
    buffer_put(&send_buf);
    buffer_put(&recv_buf);
    free(times);
    free(sizes);
    return ok;
}

int bench_sweep(struct bench_backend *b, const struct bench_opts *o, int round,
                struct bench_rows *rows)
{
    if (!b->supports(b, o->dtype, o->op)) {
        if (b->rank == 0)
            fprintf(stderr, "%s: %s %s is not supported; nothing measured\n", b->name,
                    bench_dtype_name(o->dtype), bench_op_name(o->op));
        return -1;
    }
    if (o->root >= b->size) {
        if (b->rank == 0)
            fprintf(stderr, "bench: --root %d is not a rank of %d\n", o->root, b->size);
        return -1;
    }
    if (bench_noise_start(o->noise)) {
        fprintf(stderr, "%s: rank %d could not start %d noise threads\n", b->name, b->rank,
                o->noise);
        return -1;
    }
    int rc = 0;
    for (int k = 0; k < o->ncolls && rc == 0; k++) {
        int c = o->colls[k];
        if (b->has_coll && !b->has_coll(b, (enum bench_coll)c)) {
            if (b->rank == 0)
                fprintf(stderr, "%s bench: %s has no %s; not measured\n", b->name, b->name,
                        bench_coll_name(c));
            continue;
        }
        if (c == BENCH_OVERLAP)
            rc = bench_overlap(b, o, round, rows);
        else if (c == BENCH_FUSION)
            rc = bench_fusion(b, o, round, rows);
        else
            rc = sweep_one(b, o, c, round, rows) ? -1 : 0;
    }
    bench_noise_stop();
    return rc;
}

void bench_rows_add(struct bench_rows *rows, const struct bench_row *r)
{
    if (rows->n == rows->cap) {
        rows->cap = rows->cap ? rows->cap * 2 : 64;
        rows->row = realloc(rows->row, rows->cap * sizeof *rows->row);
    }
    rows->row[rows->n++] = *r;
    if (rows->raw && bench_rows_append_raw(r, rows->raw))
        rows->raw_failed = 1;
}
