/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ef.c - collie_[i]allreduce_ef on real ranks, every element checked.
 *   test_ef run       (COLLIE_EF_CODES=all on one host: the codes run there too)
 *                     INT8 and SIGN, SUM and AVG, at counts from 0 to past a
 *                     block per rank: every rank ends with the same bits; one
 *                     INT8 step is within the bound of its two roundings;
 *                     over many steps nothing is lost (the outputs' sum plus
 *                     every residual is the inputs' sum); non-blocking calls
 *                     on two compressors at once; a NaN spoils its block
 *                     only, and only for that step; bad arguments and a
 *                     second call on a busy compressor are refused at once
 *   test_ef exact     on one host by default nothing is coded: every step's
 *                     result is the float32 allreduce's, bit for bit
 *   test_ef kind      the last rank uses SIGN where the others use INT8:
 *                     MISMATCH on every rank (their codes differ in size: the
 *                     alltoall's check names the sizes)
 *   test_ef count     the last rank's count differs but its chunks are the
 *                     same size: MISMATCH on every rank, never a result
 */
#include <math.h>

#include "api/api.h"
#include "reduce/quantize.h"
#include "test_util.h"

static collie_comm *comm;
static int rank, size;

static uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

/* Rank r's input of step t: what every rank can compute for every other. */
static float input(int r, int t, size_t i)
{
    uint32_t s = (uint32_t)(r * 7919 + t * 104729) ^ (uint32_t)(i * 2654435761u);
    lcg(&s);
    return ((float)(lcg(&s) >> 8) / 16777216.0f - 0.5f) * (float)(1 + (i % 5)) * 0.1f;
}

/* Every rank holds the same bits as rank 0. */
static void check_same(const float *x, size_t n, const char *what)
{
    float *all = malloc((n * (size_t)size + 1) * sizeof *all);
    CHECK(all, "no memory");
    CHECK_OK(comm, collie_allgather(comm, x, all, n, COLLIE_FLOAT32));
    for (int r = 1; r < size; r++)
        CHECK(!memcmp(all, all + (size_t)r * n, n * sizeof *x), "%s: rank %d differs from rank 0",
              what, r);
    free(all);
}

/* One INT8 step from zero residuals: within the worker's and the owner's roundings. */
static void check_int8_step(size_t n, collie_op op)
{
    collie_compressor *c;
    CHECK_OK(comm, collie_compressor_create(comm, n, COLLIE_COMPRESS_INT8, &c));
    float *x = malloc((n + 1) * sizeof *x);
    CHECK(x, "no memory");
    for (size_t i = 0; i < n; i++)
        x[i] = input(rank, 0, i);
    CHECK_OK(comm, collie_allreduce_ef(comm, c, x, n, op));
    check_same(x, n, "int8 step");
    /* Element i's block, wherever the ranks' chunks put it, lies within 255 elements of it:
     * bound it by the largest values there (the worker's roundings, then the owner's). */
    double k = op == COLLIE_AVG ? 1.0 / size : 1.0;
    double *mag = malloc(((size_t)size * n + 1) * sizeof *mag), *exact = malloc((n + 1) * 8);
    CHECK(mag && exact, "no memory");
    for (size_t i = 0; i < n; i++) {
        exact[i] = 0;
        for (int r = 0; r < size; r++) {
            mag[(size_t)r * n + i] = fabs(input(r, 0, i));
            exact[i] += input(r, 0, i);
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t lo = i >= COLLIE_QUANT_BLOCK - 1 ? i - (COLLIE_QUANT_BLOCK - 1) : 0;
        size_t hi = i + COLLIE_QUANT_BLOCK < n ? i + COLLIE_QUANT_BLOCK : n;
        double worker = 0, big = 0;
        for (int r = 0; r < size; r++) {
            double m = 0;
            for (size_t j = lo; j < hi; j++)
                m = fmax(m, mag[(size_t)r * n + j]);
            worker += m / 254;
        }
        for (size_t j = lo; j < hi; j++)
            big = fmax(big, fabs(exact[j] * k) + worker * k);
        double bound = (worker * k + big / 254) * 1.001 + 1e-7;
        CHECK(fabs(x[i] - exact[i] * k) <= bound, "n %zu element %zu: %g, exact %g, bound %g", n, i,
              x[i], exact[i] * k, bound);
    }
    free(mag);
    free(exact);
    CHECK_OK(comm, collie_compressor_free(c));
    free(x);
}

/* T steps: the outputs' sum plus every rank's residual and every owner's is the inputs' sum. */
static void check_feedback(collie_compress_kind kind, size_t n, collie_op op)
{
    enum { T = 30 };
    collie_compressor *c;
    CHECK_OK(comm, collie_compressor_create(comm, n, kind, &c));
    float *x = malloc((n + 1) * sizeof *x);
    double *out = calloc(n + 1, sizeof *out), *in = calloc(n + 1, sizeof *in);
    CHECK(x && out && in, "no memory");
    double k = op == COLLIE_AVG ? 1.0 / size : 1.0, scale = 0;
    for (int t = 0; t < T; t++) {
        for (size_t i = 0; i < n; i++) {
            x[i] = input(rank, t, i);
            for (int r = 0; r < size; r++) {
                in[i] += input(r, t, i) * k;
                scale = fmax(scale, fabs(input(r, t, i)));
            }
        }
        CHECK_OK(comm, collie_allreduce_ef(comm, c, x, n, op));
        check_same(x, n, "feedback");
        for (size_t i = 0; i < n; i++)
            out[i] += x[i];
    }
    /* every rank's residuals, in the result's units, summed over the ranks */
    float *mine = calloc(n + 1, sizeof *mine), *left = calloc(n + 1, sizeof *left);
    CHECK(mine && left, "no memory");
    collie__ef_residual_total(c, op, mine);
    CHECK_OK(comm, collie_allreduce(comm, mine, left, n, COLLIE_FLOAT32, COLLIE_SUM));
    for (size_t i = 0; i < n; i++)
        CHECK(fabs(out[i] + left[i] - in[i]) <= 1e-5 * T * size * scale,
              "kind %d op %d n %zu element %zu: outputs %g + residuals %g, inputs %g", (int)kind,
              (int)op, n, i, out[i], left[i], in[i]);
    /* SIGN drops most of every block of unequal magnitudes: an empty residual ran no codes */
    int kept = 0;
    for (size_t i = 0; i < n; i++)
        kept |= left[i] != 0;
    CHECK(kept || kind != COLLIE_COMPRESS_SIGN || n < 5, "n %zu: no residual: were codes run?", n);
    CHECK_OK(comm, collie_compressor_free(c));
    free(x);
    free(out);
    free(in);
    free(mine);
    free(left);
}

/* Two compressors in flight at once, then a NaN on one rank: its block only, this step only. */
static void check_nonblocking_and_nan(void)
{
    size_t n = 3 * COLLIE_QUANT_BLOCK * (size_t)size;
    collie_compressor *a, *b;
    CHECK_OK(comm, collie_compressor_create(comm, n, COLLIE_COMPRESS_INT8, &a));
    CHECK_OK(comm, collie_compressor_create(comm, n, COLLIE_COMPRESS_SIGN, &b));
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    CHECK(x && y, "no memory");
    for (size_t i = 0; i < n; i++)
        x[i] = y[i] = input(rank, 1, i);
    collie_request *ra, *rb, *rc;
    /* held by the group until its end: `a` is in use for certain while the group is open */
    CHECK_OK(comm, collie_group_start(comm));
    CHECK_OK(comm, collie_iallreduce_ef(comm, a, x, n, COLLIE_AVG, &ra));
    CHECK_OK(comm, collie_iallreduce_ef(comm, b, y, n, COLLIE_SUM, &rb));
    collie_status st = collie_iallreduce_ef(comm, a, x, n, COLLIE_AVG, &rc);
    CHECK(st == COLLIE_ERR_INVALID_ARG && strstr(collie_last_error(comm), "one call at a time"),
          "a busy compressor: %s: %s", collie_strerror(st), collie_last_error(comm));
    CHECK(collie_compressor_free(a) == COLLIE_ERR_INVALID_ARG, "freed a busy compressor");
    CHECK_OK(comm, collie_group_end(comm));
    CHECK_OK(comm, collie_wait(ra));
    CHECK_OK(comm, collie_wait(rb));
    check_same(x, n, "non-blocking int8");
    check_same(y, n, "non-blocking sign");
    for (size_t i = 0; i < n; i++)
        CHECK(isfinite(x[i]) && isfinite(y[i]), "element %zu: %g %g", i, x[i], y[i]);

    size_t bad = COLLIE_QUANT_BLOCK + 3; /* in chunk 0's second block */
    for (size_t i = 0; i < n; i++)
        x[i] = input(rank, 2, i);
    if (rank == size - 1)
        x[bad] = NAN;
    CHECK_OK(comm, collie_allreduce_ef(comm, a, x, n, COLLIE_AVG));
    for (size_t i = 0; i < n; i++) {
        int spoiled = i / COLLIE_QUANT_BLOCK == bad / COLLIE_QUANT_BLOCK;
        CHECK(spoiled ? isnan(x[i]) : isfinite(x[i]), "NaN step, element %zu: %g", i, x[i]);
    }
    for (size_t i = 0; i < n; i++)
        x[i] = input(rank, 3, i);
    CHECK_OK(comm, collie_allreduce_ef(comm, a, x, n, COLLIE_AVG));
    for (size_t i = 0; i < n; i++)
        CHECK(isfinite(x[i]), "the step after the NaN, element %zu: %g", i, x[i]);
    CHECK_OK(comm, collie_compressor_free(a));
    CHECK_OK(comm, collie_compressor_free(b));
    free(x);
    free(y);
}

static void check_refused(void)
{
    collie_compressor *c;
    float x[4] = {0};
    CHECK(collie_compressor_create(comm, 4, (collie_compress_kind)9, &c) == COLLIE_ERR_INVALID_ARG,
          "kind 9");
    CHECK(strstr(collie_last_error(comm), "kind=9"), "%s", collie_last_error(comm));
    CHECK(collie_compressor_create(NULL, 4, COLLIE_COMPRESS_INT8, &c) == COLLIE_ERR_INVALID_ARG,
          "no comm");
    CHECK_OK(comm, collie_compressor_create(comm, 4, COLLIE_COMPRESS_INT8, &c));
    CHECK(collie_allreduce_ef(comm, c, x, 5, COLLIE_SUM) == COLLIE_ERR_INVALID_ARG, "count 5");
    CHECK(strstr(collie_last_error(comm), "count differs"), "%s", collie_last_error(comm));
    CHECK(collie_allreduce_ef(comm, c, x, 4, COLLIE_MAX) == COLLIE_ERR_INVALID_ARG, "MAX");
    CHECK(collie_allreduce_ef(comm, c, NULL, 4, COLLIE_SUM) == COLLIE_ERR_INVALID_ARG, "NULL");
    CHECK(collie_allreduce_ef(comm, NULL, x, 4, COLLIE_SUM) == COLLIE_ERR_INVALID_ARG, "no comm");
    collie_comm *sub;
    CHECK_OK(comm, collie_comm_split(comm, 0, rank, &sub));
    CHECK(collie_allreduce_ef(sub, c, x, 4, COLLIE_SUM) == COLLIE_ERR_INVALID_ARG, "other comm");
    CHECK(strstr(collie_last_error(sub), "another communicator"), "%s", collie_last_error(sub));
    CHECK_OK(sub, collie_finalize(sub));
    CHECK_OK(comm, collie_compressor_free(c));
    CHECK_OK(comm, collie_compressor_free(NULL));
}

/* The last rank disagrees: every rank fails with MISMATCH, and no buffer holds a result. */
static void check_mismatch(int by_kind)
{
    size_t n = 1000 + (by_kind ? 0 : (rank == size - 1)); /* 1000 and 1001: chunks alike at 2 */
    collie_compress_kind kind =
        by_kind && rank == size - 1 ? COLLIE_COMPRESS_SIGN : COLLIE_COMPRESS_INT8;
    collie_compressor *c;
    CHECK_OK(comm, collie_compressor_create(comm, n, kind, &c));
    float *x = malloc(n * sizeof *x);
    CHECK(x, "no memory");
    for (size_t i = 0; i < n; i++)
        x[i] = 1;
    collie_status st = collie_allreduce_ef(comm, c, x, n, COLLIE_SUM);
    CHECK(st == COLLIE_ERR_MISMATCH, "rank %d: %s: %s", rank, collie_strerror(st),
          collie_last_error(comm));
    printf("rank %d: %s\n", rank, collie_last_error(comm));
    /* codes of unlike size are told apart by the alltoall's own check, which names its sizes */
    const char *e = collie_last_error(comm);
    CHECK(by_kind ? strstr(e, "SIGN") || strstr(e, "alltoall") : strstr(e, "1001") != NULL, "%s",
          e);
    collie_compressor_free(c);
    free(x);
}

/* On one host (COLLIE_EF_CODES=auto): nothing is coded, the result is the exact allreduce's. */
static void check_exact(void)
{
    size_t n = 5000;
    float *x = malloc(n * sizeof *x), *want = malloc(n * sizeof *want);
    CHECK(x && want, "no memory");
    for (int op = COLLIE_SUM; op <= COLLIE_AVG; op += COLLIE_AVG - COLLIE_SUM) {
        collie_compressor *c;
        CHECK_OK(comm, collie_compressor_create(comm, n, COLLIE_COMPRESS_SIGN, &c));
        for (int t = 0; t < 3; t++) {
            for (size_t i = 0; i < n; i++)
                x[i] = want[i] = input(rank, t, i);
            CHECK_OK(comm, collie_allreduce(comm, want, want, n, COLLIE_FLOAT32, (collie_op)op));
            CHECK_OK(comm, collie_allreduce_ef(comm, c, x, n, (collie_op)op));
            CHECK(!memcmp(x, want, n * sizeof *x), "op %d step %d: not the exact allreduce", op, t);
        }
        CHECK_OK(comm, collie_compressor_free(c));
    }
    free(x);
    free(want);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "run";
    comm = test_init();
    rank = collie_rank(comm);
    size = collie_size(comm);
    if (!strcmp(what, "exact")) {
        check_exact();
        CHECK_OK(comm, collie_finalize(comm));
        printf("ef exact: ok on %d ranks\n", size);
        return 0;
    }
    if (!strcmp(what, "kind") || !strcmp(what, "count")) {
        check_mismatch(!strcmp(what, "kind"));
        collie_finalize(comm);
        printf("ef %s mismatch: ok on %d ranks\n", what, size);
        return 0;
    }
    static const size_t counts[] = {0, 1, 5, 255, 256, 257, 1000, 3 * COLLIE_QUANT_BLOCK + 17};
    int cases = 0;
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++, cases += 4) {
        size_t n = counts[k] * (counts[k] > 300 ? (size_t)size : 1);
        check_int8_step(n, COLLIE_SUM);
        check_int8_step(n, COLLIE_AVG);
        check_feedback(COLLIE_COMPRESS_INT8, n, COLLIE_AVG);
        check_feedback(COLLIE_COMPRESS_SIGN, n, COLLIE_SUM);
    }
    check_nonblocking_and_nan();
    check_refused();
    CHECK_OK(comm, collie_finalize(comm));
    if (rank == 0) /* the line tests/test_hosts.sh reads */
        printf("run on %d ranks: %d cases, 0 failures\n", size, cases + 2);
    return 0;
}
