/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_neighbor.c - neighbour averaging across real ranks: every rank
 * computes, from every rank's input, the result the formula gives and
 * compares its own output with it bit for bit (the reference adds the same
 * terms in the same order and the same precision as the library promises).
 *   test_neighbor static|dynamic|compressed|hierarchical|consensus|schedule|hostsched|allgather|
 *                 straggler|mismatch|kill|badargs
 */
#include <math.h>
#include <signal.h>
#include <time.h>

#include "test_util.h"

static collie_comm *comm;
static int rank, size;

/* Small integers, different on every rank and element: exact in every dtype. */
static double input(int r, size_t i) { return (double)((r * 7 + (int)(i % 101) * 3) % 23) - 11; }

static uint16_t bf16_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float bf16_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double get(collie_dtype t, const void *buf, size_t i)
{
    switch (t) {
    case COLLIE_FLOAT32: return ((const float *)buf)[i];
    case COLLIE_FLOAT64: return ((const double *)buf)[i];
    case COLLIE_FLOAT16: {
        _Float16 h;
        memcpy(&h, (const char *)buf + 2 * i, 2);
        return (double)h;
    }
    default: {
        uint16_t b;
        memcpy(&b, (const char *)buf + 2 * i, 2);
        return bf16_float(b);
    }
    }
}

/*
 * Element i of rank me's result: self * x_me + sum_k w[k] x_{from[k]}, in
 * the library's order and precision (the neighbours' data as it travelled,
 * in wire), written into out as dtype.
 */
static void reference(collie_dtype t, collie_dtype wire, void *out, size_t i, int me, double self,
                      int n, const int *from, const double *w, const double *scale)
{
    if (t == COLLIE_FLOAT64) {
        double acc = self * input(me, i);
        for (int k = 0; k < n; k++)
            acc += w[k] * ((scale ? scale[k] : 1.0) * input(from[k], i));
        ((double *)out)[i] = acc;
        return;
    }
    float acc = (float)self * (float)input(me, i);
    for (int k = 0; k < n; k++) {
        /* what the sender scaled (in float32, then rounded to the wire's dtype) */
        float y = (float)(scale ? scale[k] : 1.0) * (float)input(from[k], i);
        if (wire == COLLIE_FLOAT16)
            y = (float)(_Float16)y;
        else if (wire == COLLIE_BFLOAT16)
            y = bf16_float(bf16_round(y));
        acc += (float)w[k] * y;
    }
    if (t == COLLIE_FLOAT32)
        ((float *)out)[i] = acc;
    else if (t == COLLIE_FLOAT16) {
        _Float16 h = (_Float16)acc;
        memcpy((char *)out + 2 * i, &h, 2);
    } else {
        uint16_t b = bf16_round(acc);
        memcpy((char *)out + 2 * i, &b, 2);
    }
}

static void *alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    CHECK(p, "malloc %zu", bytes);
    return p;
}

static void fill(collie_dtype t, void *buf, size_t count)
{
    for (size_t i = 0; i < count; i++)
        test_put(t, buf, i, input(rank, i));
}

static void compare(collie_dtype t, const void *got, const void *want, size_t count,
                    const char *what)
{
    size_t es = test_dtype_size(t);
    for (size_t i = 0; i < count; i++)
        CHECK(!memcmp((const char *)got + i * es, (const char *)want + i * es, es),
              "%s, %s, rank %d of %d, element %zu of %zu: got %.9g, want %.9g", what,
              test_dtype_name(t), rank, size, i, count, get(t, got, i), get(t, want, i));
}

static const collie_dtype dtypes[] = {COLLIE_FLOAT32, COLLIE_FLOAT64, COLLIE_FLOAT16,
                                      COLLIE_BFLOAT16};
/* 1, a few, and three chunks of float32 (chunks are 512 KiB on the wire) */
static const size_t counts[] = {1, 1000, 300001};

/* One call over topo checked against its formula: blocking or not, in place or not. */
static void check_topology(const collie_topology *topo, const char *name)
{
    int *from = alloc((size_t)size * sizeof *from);
    double *w = alloc((size_t)size * sizeof *w);
    int n = collie_topology_in(topo, rank, from, w, size);
    double self = collie_topology_self_weight(topo, rank);
    for (size_t ti = 0; ti < sizeof dtypes / sizeof *dtypes; ti++) {
        collie_dtype t = dtypes[ti];
        for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
            size_t count = counts[ci], bytes = count * test_dtype_size(t);
            void *x = alloc(bytes), *y = alloc(bytes), *want = alloc(bytes);
            for (size_t i = 0; i < count; i++)
                reference(t, t, want, i, rank, self, n, from, w, NULL);
            char what[160];
            for (int mode = 0; mode < 3; mode++) { /* out of place, in place, non-blocking */
                snprintf(what, sizeof what, "%s, count %zu, %s", name, count,
                         mode == 0   ? "out of place"
                         : mode == 1 ? "in place"
                                     : "non-blocking");
                fill(t, x, count);
                memset(y, 0x7f, bytes);
                if (mode == 0) {
                    CHECK_OK(comm, collie_neighbor_allreduce(comm, topo, x, y, count, t));
                } else if (mode == 1) {
                    CHECK_OK(comm, collie_neighbor_allreduce(comm, topo, x, x, count, t));
                    memcpy(y, x, bytes);
                } else {
                    collie_request *req;
                    CHECK_OK(comm, collie_ineighbor_allreduce(comm, topo, x, y, count, t, &req));
                    CHECK_OK(comm, collie_wait(req));
                }
                compare(t, y, want, count, what);
            }
            free(x), free(y), free(want);
        }
    }
    free(from), free(w);
}

static collie_topology *make(collie_topology_kind kind, int param)
{
    collie_topology *t = NULL;
    CHECK_OK(NULL, collie_topology_create(kind, size, param, &t));
    return t;
}

static void static_scenario(void)
{
    for (size_t k = 0; k < TEST_NTOPOLOGIES; k++) {
        collie_topology *t = make(test_topologies[k].kind, test_topologies[k].param);
        check_topology(t, test_topologies[k].name);
        collie_topology_free(t);
    }
    /* The values: x_r = r over exponential-2. */
    if (size == 4 || size == 8) {
        static const double want4[] = {5.0 / 3, 4.0 / 3, 1, 2};
        static const double want8[] = {17.0 / 4, 13.0 / 4, 9.0 / 4,  13.0 / 4,
                                       9.0 / 4,  13.0 / 4, 17.0 / 4, 21.0 / 4};
        collie_topology *t = make(COLLIE_TOPO_EXPONENTIAL, 2);
        double x = rank, y;
        CHECK_OK(comm, collie_neighbor_allreduce(comm, t, &x, &y, 1, COLLIE_FLOAT64));
        double want = (size == 4 ? want4 : want8)[rank];
        CHECK(fabs(y - want) <= 1e-15 * want, "x_r = r, n = %d: rank %d got %.17g, want %.17g",
              size, rank, y, want);
        collie_topology_free(t);
    }
}

/*
 * Per-call lists: step s's graph is i -> i + 1 + (s mod (size - 1)) and
 * i -> i + 2 + ..., with sender weights (BlueFog's dst_weights) and
 * receiver weights that differ per rank; every rank derives the whole graph.
 */
static void dynamic_scenario(void)
{
    for (int s = 0; s < 6; s++) {
        int nb = size < 3 ? size - 1 : 2;
        int send[2], recv[2];
        double sw[2], rw[2], scale_in[2];
        for (int k = 0; k < nb; k++) {
            int off = 1 + (s + k) % (size - 1);
            send[k] = (rank + off) % size;
            recv[k] = (rank - off + size) % size;
            sw[k] = 0.5 + 0.25 * k;               /* what senders apply */
            rw[k] = 0.125 * (1 + (rank + k) % 3); /* what this rank applies */
            scale_in[k] = 0.5 + 0.25 * k;         /* = the sender's sw[k] */
        }
        /* uniform recv weights on odd steps (self_weight then ignored) */
        int uniform = s % 2;
        double uw[2] = {1.0 / (nb + 1), 1.0 / (nb + 1)};
        collie_neighbors n = {
            .nrecv = nb,
            .recv_ranks = recv,
            .recv_weights = uniform ? NULL : rw,
            .self_weight = uniform ? 42 : 0.25,
            .nsend = nb,
            .send_ranks = send,
            .send_weights = s >= 4 ? NULL : sw,
        };
        for (size_t ti = 0; ti < sizeof dtypes / sizeof *dtypes; ti++) {
            collie_dtype t = dtypes[ti];
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
                size_t count = counts[ci], bytes = count * test_dtype_size(t);
                void *x = alloc(bytes), *y = alloc(bytes), *want = alloc(bytes);
                for (size_t i = 0; i < count; i++)
                    reference(t, t, want, i, rank, uniform ? uw[0] : 0.25, nb, recv,
                              uniform ? uw : rw, s >= 4 ? NULL : scale_in);
                fill(t, x, count);
                collie_request *req;
                CHECK_OK(comm, collie_ineighbor_allreduce_dynamic(comm, &n, x, y, count, t, &req));
                CHECK_OK(comm, collie_wait(req));
                char what[80];
                snprintf(what, sizeof what, "dynamic step %d, count %zu", s, count);
                compare(t, y, want, count, what);
                free(x), free(y), free(want);
            }
        }
    }
}

/*
 * float32 data on a float16 / bfloat16 wire: exponential-2 steps against
 * the formula over the neighbours' data rounded to the wire, bit for bit.
 */
static void compressed_scenario(void)
{
    collie_topology *topo = make(COLLIE_TOPO_EXPONENTIAL, 2);
    int from[64];
    double w[64];
    int n = collie_topology_in(topo, rank, from, w, 64);
    double self = collie_topology_self_weight(topo, rank);
    const collie_dtype wires[] = {COLLIE_FLOAT16, COLLIE_BFLOAT16};
    for (int k = 0; k < 2; k++) {
        for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
            size_t count = counts[ci];
            float *x = alloc(count * 4), *y = alloc(count * 4), *want = alloc(count * 4);
            /* thirds are not exact in 16 bits: the rounding on the wire shows */
            for (size_t i = 0; i < count; i++)
                x[i] = (float)input(rank, i) / 3;
            for (size_t i = 0; i < count; i++) { /* own value exact, the neighbours' rounded */
                float acc = (float)self * x[i];
                for (int d = 0; d < n; d++) {
                    float v = (float)input(from[d], i) / 3;
                    v = wires[k] == COLLIE_FLOAT16 ? (float)(_Float16)v : bf16_float(bf16_round(v));
                    acc += (float)w[d] * v;
                }
                want[i] = acc;
            }
            collie_request *req;
            CHECK_OK(comm, collie_ineighbor_allreduce_compressed(comm, topo, x, y, count, wires[k],
                                                                 &req));
            CHECK_OK(comm, collie_wait(req));
            compare(COLLIE_FLOAT32, y, want, count,
                    wires[k] == COLLIE_FLOAT16 ? "float16 wire" : "bfloat16 wire");
            CHECK_OK(comm, collie_neighbor_allreduce_compressed(comm, topo, x, x, count, wires[k]));
            compare(COLLIE_FLOAT32, x, want, count, "in place on a 16-bit wire");
            free(x), free(y), free(want);
        }
    }
    float v = 1;
    CHECK(collie_neighbor_allreduce_compressed(comm, topo, &v, &v, 1, COLLIE_INT8) ==
              COLLIE_ERR_INVALID_ARG,
          "an int8 wire accepted");
    CHECK(strstr(collie_last_error(comm), "wire_dtype"), "%s", collie_last_error(comm));
    collie_topology_free(topo);
}

/* Rounds a float32 value as dtype t would hold it. */
static float as_dtype(collie_dtype t, float v)
{
    if (t == COLLIE_FLOAT16)
        return (float)(_Float16)v;
    if (t == COLLIE_BFLOAT16)
        return bf16_float(bf16_round(v));
    return v;
}

/* Element i of host h's mean as the library computes it: summed in rank order, divided, rounded. */
static double host_mean(collie_dtype t, const int *host_of, int h, size_t i)
{
    int n = 0;
    double sum64 = 0;
    float sum32 = 0;
    for (int r = 0; r < size; r++) {
        if (host_of[r] != h)
            continue;
        if (n++) {
            sum64 += input(r, i);
            sum32 += (float)input(r, i);
        } else {
            sum64 = input(r, i);
            sum32 = (float)input(r, i);
        }
    }
    return t == COLLIE_FLOAT64 ? sum64 / n : as_dtype(t, sum32 / (float)n);
}

/*
 * Between hosts: each host's ranks are one node of a topology over the
 * hosts, and every rank gets its host's row of the formula over the hosts'
 * means.  Run on emulated hosts of uneven sizes (and on one host: the mean).
 */
static void hierarchical_scenario(void)
{
    int hosts = collie_host_count(comm), me = collie_host_index(comm);
    int *host_of = alloc((size_t)size * sizeof *host_of);
    CHECK_OK(comm, collie_allgather(comm, &me, host_of, 1, COLLIE_INT32));
    const collie_topology_kind kinds[] = {COLLIE_TOPO_EXPONENTIAL, COLLIE_TOPO_RING,
                                          COLLIE_TOPO_STAR, COLLIE_TOPO_FULL};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        collie_topology *t = NULL;
        CHECK_OK(NULL, collie_topology_create(kinds[k], hosts,
                                              kinds[k] == COLLIE_TOPO_EXPONENTIAL ? 2 : 0, &t));
        int from[64];
        double w[64];
        int n = collie_topology_in(t, me, from, w, 64);
        double self = collie_topology_self_weight(t, me);
        for (size_t ti = 0; ti < sizeof dtypes / sizeof *dtypes; ti++) {
            collie_dtype dt = dtypes[ti];
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
                size_t count = counts[ci], bytes = count * test_dtype_size(dt);
                void *x = alloc(bytes), *y = alloc(bytes);
                fill(dt, x, count);
                collie_request *req;
                CHECK_OK(comm,
                         collie_ihierarchical_neighbor_allreduce(comm, t, x, y, count, dt, &req));
                CHECK_OK(comm, collie_wait(req));
                CHECK_OK(comm, collie_hierarchical_neighbor_allreduce(comm, t, x, x, count, dt));
                for (size_t i = 0; i < count; i++) {
                    double want;
                    if (dt == COLLIE_FLOAT64) {
                        want = self * host_mean(dt, host_of, me, i);
                        for (int d = 0; d < n; d++)
                            want += w[d] * host_mean(dt, host_of, from[d], i);
                    } else {
                        float acc = (float)self * (float)host_mean(dt, host_of, me, i);
                        for (int d = 0; d < n; d++)
                            acc += (float)w[d] * (float)host_mean(dt, host_of, from[d], i);
                        want = as_dtype(dt, acc);
                    }
                    CHECK(get(dt, y, i) == want && get(dt, x, i) == want,
                          "hierarchical, kind %d, %s, count %zu, rank %d (host %d of %d), element "
                          "%zu: got %.9g (in place %.9g), want %.9g",
                          (int)kinds[k], test_dtype_name(dt), count, rank, me, hosts, i,
                          get(dt, y, i), get(dt, x, i), want);
                }
                free(x), free(y);
            }
        }
        collie_topology_free(t);
    }
    free(host_of);
}

/* Mean and largest distance from it, over every rank's value (one allreduce each). */
static void spread(double v, double *mean, double *dist)
{
    CHECK_OK(comm, collie_allreduce(comm, &v, mean, 1, COLLIE_FLOAT64, COLLIE_AVG));
    double d = fabs(v - *mean);
    CHECK_OK(comm, collie_allreduce(comm, &d, dist, 1, COLLIE_FLOAT64, COLLIE_MAX));
}

/*
 * Repeated averaging keeps the mean and contracts the spread at least as
 * fast as rho allows, on the regular graphs and (Metropolis-Hastings) on
 * the irregular ones: star and mesh reach the true mean, not a biased one.
 */
static void consensus_scenario(void)
{
    const collie_topology_kind kinds[] = {COLLIE_TOPO_EXPONENTIAL, COLLIE_TOPO_RING,
                                          COLLIE_TOPO_MESH, COLLIE_TOPO_STAR};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        collie_topology *t = make(kinds[k], kinds[k] == COLLIE_TOPO_EXPONENTIAL ? 2 : 0);
        collie_topology_props p;
        CHECK_OK(NULL, collie_topology_check(t, &p));
        CHECK(p.rho >= 0 && p.rho < 1, "kind %d: rho %g", (int)kinds[k], p.rho);
        double x = rank * rank + 0.5 * rank, mean0, dist0;
        spread(x, &mean0, &dist0);
        double bound = dist0 * sqrt(size); /* the 2-norm of the start, over all ranks */
        for (int step = 1; step <= 60; step++) {
            CHECK_OK(comm, collie_neighbor_allreduce(comm, t, &x, &x, 1, COLLIE_FLOAT64));
            double mean, dist;
            spread(x, &mean, &dist);
            CHECK(fabs(mean - mean0) <= 1e-12 * fabs(mean0) + 1e-12,
                  "kind %d step %d: mean %.17g, was %.17g", (int)kinds[k], step, mean, mean0);
            bound *= p.rho;
            CHECK(dist <= bound * (1 + 1e-9) + 1e-12, "kind %d step %d: spread %g above %g",
                  (int)kinds[k], step, dist, bound);
        }
        collie_topology_free(t);
    }
}

/*
 * The one-peer schedules: exponential reaches the exact mean in log2 n
 * steps when n is a power of two, bit for bit; the exact schedule does at
 * any n within its period (every rank the same bits, within 4 ulp of the
 * mean: its weights m/(m+m') are not all dyadic).
 */
static void schedule_scenario(void)
{
    double exact = 0;
    for (int r = 0; r < size; r++)
        exact += 3 * r + 1;
    exact /= size;
    for (int kind = 0; kind < 2; kind++) {
        int pow2 = !(size & (size - 1));
        if (kind == COLLIE_SCHED_ONE_PEER_EXPONENTIAL && !pow2)
            continue;
        collie_schedule *s = NULL;
        CHECK_OK(NULL, collie_schedule_create((collie_schedule_kind)kind, size, 0, &s));
        int period = collie_schedule_period(s), log2n = 0;
        while ((1 << log2n) < size)
            log2n++;
        CHECK(period == (pow2 || size == 1 ? (log2n ? log2n : 1) : log2n + 1),
              "kind %d: period %d at n = %d", kind, period, size);
        double x = 3 * rank + 1;
        for (int t = 0; t < period; t++) {
            const collie_topology *step = collie_schedule_step(s, t);
            collie_topology_props p;
            CHECK_OK(NULL, collie_topology_check(step, &p));
            CHECK(p.max_degree <= 1, "kind %d step %d: degree %d", kind, t, p.max_degree);
            CHECK(p.row_stochastic, "kind %d step %d is not row-stochastic", kind, t);
            CHECK_OK(comm, collie_neighbor_allreduce(comm, step, &x, &x, 1, COLLIE_FLOAT64));
        }
        double lo, hi;
        CHECK_OK(comm, collie_allreduce(comm, &x, &lo, 1, COLLIE_FLOAT64, COLLIE_MIN));
        CHECK_OK(comm, collie_allreduce(comm, &x, &hi, 1, COLLIE_FLOAT64, COLLIE_MAX));
        CHECK(lo == hi, "kind %d: ranks differ after %d steps: %.17g .. %.17g", kind, period, lo,
              hi);
        if (pow2)
            CHECK(x == exact, "kind %d: %.17g after %d steps, the mean is %.17g", kind, x, period,
                  exact);
        else
            CHECK(fabs(x - exact) <= 4 * 0x1p-52 * exact, "kind %d: %.17g, the mean is %.17g", kind,
                  x, exact);
        collie_schedule_free(s);
    }
}

/* recvbuf of a gather from the n ranks in from: each one's input, count elements each. */
static void check_gathered(collie_dtype t, const void *got, int n, const int *from, size_t count,
                           const char *what)
{
    size_t es = test_dtype_size(t);
    unsigned char *want = alloc((size_t)n * count * es + 1);
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < count; i++)
            test_put(t, want + (size_t)k * count * es, i, input(from[k], i));
    for (size_t b = 0; b < (size_t)n * count * es; b++)
        CHECK(((const unsigned char *)got)[b] == want[b],
              "%s, %s, rank %d of %d: byte %zu (block %zu, from rank %d) differs", what,
              test_dtype_name(t), rank, size, b, b / (count * es), from[b / (count * es)]);
    free(want);
}

/*
 * neighbor_allgather over every topology (blocking and not, every dtype,
 * one to three chunks), over per-call lists, and pair gossip between
 * ranks 2k and 2k+1 (the last of an odd count sits out).
 */
static void allgather_scenario(void)
{
    static const collie_dtype all[] = {COLLIE_FLOAT32,  COLLIE_FLOAT64, COLLIE_FLOAT16,
                                       COLLIE_BFLOAT16, COLLIE_INT8,    COLLIE_INT32,
                                       COLLIE_INT64,    COLLIE_UINT8};
    int *from = alloc((size_t)size * sizeof *from);
    for (size_t k = 0; k < TEST_NTOPOLOGIES; k++) {
        collie_topology *topo = make(test_topologies[k].kind, test_topologies[k].param);
        int n = collie_topology_in(topo, rank, from, NULL, size);
        for (size_t ti = 0; ti < sizeof all / sizeof *all; ti++) {
            collie_dtype t = all[ti];
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
                size_t count = counts[ci], es = test_dtype_size(t);
                void *x = alloc(count * es), *y = alloc((size_t)n * count * es);
                fill(t, x, count);
                memset(y, 0x7f, (size_t)n * count * es);
                char what[120];
                snprintf(what, sizeof what, "neighbor_allgather over %s, count %zu%s",
                         test_topologies[k].name, count, ci == 1 ? ", non-blocking" : "");
                if (ci == 1) {
                    collie_request *req;
                    CHECK_OK(comm, collie_ineighbor_allgather(comm, topo, x, y, count, t, &req));
                    CHECK_OK(comm, collie_wait(req));
                } else {
                    CHECK_OK(comm, collie_neighbor_allgather(comm, topo, x, y, count, t));
                }
                check_gathered(t, y, n, from, count, what);
                free(x), free(y);
            }
        }
        collie_topology_free(topo);
    }
    /* Per-call lists: from rank - 1 - s and rank - 2 - s, in that order. */
    for (int s = 0; s < 3 && size > 1; s++) {
        int nb = size < 3 ? 1 : 2, send[2], recv[2];
        for (int k = 0; k < nb; k++) {
            int off = 1 + (s + k) % (size - 1);
            send[k] = (rank + off) % size;
            recv[k] = (rank - off + size) % size;
        }
        collie_neighbors lists = {.nrecv = nb, .recv_ranks = recv, .nsend = nb, .send_ranks = send};
        size_t count = counts[s];
        int32_t *x = alloc(count * 4), *y = alloc((size_t)nb * count * 4);
        fill(COLLIE_INT32, x, count);
        CHECK_OK(comm, collie_neighbor_allgather_dynamic(comm, &lists, x, y, count, COLLIE_INT32));
        check_gathered(COLLIE_INT32, y, nb, recv, count, "dynamic neighbor_allgather");
        free(x), free(y);
    }
    /* Pair gossip, weights 0.25 / 0.75, blocking then not, in place. */
    int peer = rank ^ 1;
    for (int mode = 0; mode < 2 && peer < size; mode++) {
        size_t count = counts[2];
        float *x = alloc(count * 4);
        fill(COLLIE_FLOAT32, x, count);
        if (mode == 0) {
            CHECK_OK(comm, collie_pair_gossip(comm, peer, x, x, count, COLLIE_FLOAT32, 0.25, 0.75));
        } else {
            collie_request *req;
            CHECK_OK(comm, collie_ipair_gossip(comm, peer, x, x, count, COLLIE_FLOAT32, 0.25, 0.75,
                                               &req));
            CHECK_OK(comm, collie_wait(req));
        }
        for (size_t i = 0; i < count; i++) {
            float want = 0.25f * (float)input(rank, i) + 0.75f * (float)input(peer, i);
            CHECK(x[i] == want, "pair_gossip with rank %d, element %zu: %g, want %g", peer, i, x[i],
                  want);
        }
        free(x);
    }
    free(from);
}

/*
 * The host-aware schedules over this job's hosts (COLLIE_HOST emulates
 * them): every step doubly stochastic, one peer in and out per rank, one
 * gateway per host talking across hosts (to one on another host), the
 * rest within their host; two steps against the formula; and repeated
 * steps keep the mean and contract the spread.
 */
static void hostsched_scenario(void)
{
    int *host_of = alloc((size_t)size * sizeof *host_of);
    for (int r = 0; r < size; r++)
        host_of[r] = collie_host_of(comm, r);
    int nhosts = collie_host_count(comm);
    int pairs = nhosts > 1;
    for (int h = 0; h < nhosts; h++) {
        int members = 0;
        for (int r = 0; r < size; r++)
            members += host_of[r] == h;
        pairs &= members == 2;
    }
    static const collie_host_schedule_kind kinds[] = {COLLIE_SCHED_INNER_OUTER_RING,
                                                      COLLIE_SCHED_INNER_OUTER_EXPONENTIAL};
    int *nb = alloc(((size_t)size + 1) * sizeof *nb),
        *gateways = alloc((size_t)nhosts * sizeof(int));
    for (size_t k = 0; k < 2; k++) {
        collie_schedule *s = NULL;
        CHECK_OK(NULL, collie_schedule_create_hosts(kinds[k], size, host_of, &s));
        int period = collie_schedule_period(s);
        for (int t = 0; t < period; t++) {
            const collie_topology *g = collie_schedule_step(s, t);
            collie_topology_props props;
            CHECK_OK(NULL, collie_topology_check(g, &props));
            CHECK(props.row_stochastic && props.column_stochastic,
                  "kind %zu step %d is not doubly stochastic", k, t);
            memset(gateways, 0, (size_t)nhosts * sizeof(int));
            for (int r = 0; r < size; r++) {
                int nout = collie_topology_out(g, r, nb, NULL, size);
                CHECK(nout <= 1 && collie_topology_in(g, r, NULL, NULL, 0) <= 1,
                      "kind %zu step %d: rank %d has %d out-neighbours", k, t, r, nout);
                if (nout == 1 && host_of[nb[0]] != host_of[r])
                    gateways[host_of[r]]++;
            }
            /* (hosts of two ranks each: odd steps pair them, none crosses) */
            int across = nhosts > 1 && !(pairs && t % 2);
            for (int h = 0; h < nhosts; h++)
                CHECK(gateways[h] == across, "kind %zu step %d: host %d sends across %d times", k,
                      t, h, gateways[h]);
            if (t < 2)
                check_topology(g, k ? "inner-outer-exp2" : "inner-outer-ring");
        }
        double x = 10.0 * host_of[rank] + rank, mean = 0, spread0, after, m;
        spread(x, &mean, &spread0);
        int steps = 40 * period < 400 ? 400 : 40 * period < 4000 ? 40 * period : 4000;
        for (int t = 0; t < steps; t++)
            CHECK_OK(comm, collie_neighbor_allreduce(comm, collie_schedule_step(s, t), &x, &x, 1,
                                                     COLLIE_FLOAT64));
        spread(x, &m, &after);
        CHECK(fabs(m - mean) <= 1e-9 * (fabs(mean) + 1),
              "kind %zu: the mean moved from %.17g to %.17g", k, mean, m);
        CHECK(size == 1 || after <= 1e-3 * spread0, "kind %zu: spread %.3g of %.3g after %d steps",
              k, after, spread0, steps);
        collie_schedule_free(s);
    }
    collie_schedule *byname = NULL;
    CHECK_OK(NULL, collie_schedule_from_name_hosts("inner-outer-exp2", size, host_of, &byname));
    collie_schedule_free(byname);
    free(host_of), free(nb), free(gateways);
}

/*
 * Rank 0 averages over a one-way ring, the others over exponential-2: the
 * first message between ranks of different graphs fails the receiver with
 * MISMATCH naming both calls; no rank hangs.
 */
static void mismatch_scenario(void)
{
    CHECK(size >= 4, "mismatch needs 4 ranks");
    collie_topology *t =
        make(rank == 0 ? COLLIE_TOPO_RING : COLLIE_TOPO_EXPONENTIAL, rank == 0 ? 1 : 2);
    float x[100] = {0};
    double t0 = test_seconds();
    collie_status st = collie_neighbor_allreduce(comm, t, x, x, 100, COLLIE_FLOAT32);
    const char *msg = collie_last_error(comm);
    /* Ranks whose neighbours share their graph may finish (or see the failure spread). */
    CHECK(test_seconds() - t0 < test_time(20), "rank %d returned only after %.1f s", rank,
          test_seconds() - t0);
    if (rank <= 1) /* 0 receives from 3 (ring), 1 from 0: each sees the other graph */
        CHECK(st == COLLIE_ERR_MISMATCH && strstr(msg, "neighbor_allreduce") &&
                  strstr(msg, "graph"),
              "rank %d: %s: %s", rank, collie_strerror(st), msg);
    collie_topology_free(t);
}

/*
 * A straggler does not hold up the others: rank 0 sends 8 MiB (far past a
 * ring) to ranks 1 and 2; rank 1 comes late.  Rank 2 must get its
 * copy meanwhile -- rank 0 must not sleep on the full ring to rank 1 while
 * the one to rank 2 has room (a wait that did, across hosts, closed a
 * cycle of such waits into a deadlock).
 */
static void straggler_scenario(void)
{
    CHECK(size >= 3, "straggler needs 3 ranks");
    size_t count = (size_t)2 << 20;
    float *x = alloc(count * sizeof *x), *y = alloc(count * sizeof *y);
    for (size_t i = 0; i < count; i++)
        x[i] = (float)(rank + 1);
    int to[2] = {1, 2}, from = 0;
    collie_neighbors sends = {.nsend = 2, .send_ranks = to};
    collie_neighbors recv = {.nrecv = 1, .recv_ranks = &from};
    collie_neighbors none = {0};
    const collie_neighbors *nb = rank == 0 ? &sends : rank <= 2 ? &recv : &none;
    const double bound = test_time(0.5); /* rank 2's wait; rank 1 comes twice that late */
    if (rank == 1)
        test_sleep(2 * bound);
    double t0 = test_seconds();
    CHECK_OK(comm, collie_neighbor_allreduce_dynamic(comm, nb, x, y, count, COLLIE_FLOAT32));
    double took = test_seconds() - t0;
    float want = rank == 1 || rank == 2 ? (float)(rank + 1) / 2 + 0.5f : (float)(rank + 1);
    for (size_t i = 0; i < count; i++)
        CHECK(y[i] == want, "rank %d element %zu: %g, want %g", rank, i, y[i], want);
    if (rank == 2)
        CHECK(took < bound, "rank 2 waited %.2f s for the straggler rank 1", took);
    free(x), free(y);
}

/* The last rank dies: its neighbours fail in time, with PEER_LOST. */
static void kill_scenario(void)
{
    CHECK(size >= 2, "kill needs 2 ranks");
    collie_topology *t = make(COLLIE_TOPO_RING, 0);
    if (rank == size - 1) {
        struct timespec nap = {0, 200000000};
        nanosleep(&nap, NULL);
        raise(SIGKILL);
    }
    float x[1000] = {0};
    double t0 = test_seconds();
    collie_status st = collie_neighbor_allreduce(comm, t, x, x, 1000, COLLIE_FLOAT32);
    int neighbour = rank == 0 || rank == size - 2;
    if (neighbour)
        CHECK(st == COLLIE_ERR_PEER_LOST || st == COLLIE_ERR_ABORTED, "rank %d: %s (%s)", rank,
              collie_strerror(st), collie_last_error(comm));
    CHECK(test_seconds() - t0 < test_time(10), "rank %d took %.1f s", rank, test_seconds() - t0);
    collie_topology_free(t);
}

static void expect_invalid(collie_status st, const char *needle, const char *what)
{
    CHECK(st == COLLIE_ERR_INVALID_ARG, "%s: %s", what, collie_strerror(st));
    CHECK(strstr(collie_last_error(comm), needle), "%s: message '%s' lacks '%s'", what,
          collie_last_error(comm), needle);
}

static void badargs_scenario(void)
{
    float x[4] = {1, 2, 3, 4};
    collie_topology *other = NULL;
    CHECK_OK(NULL, collie_topology_create(COLLIE_TOPO_RING, size + 1, 0, &other));
    expect_invalid(collie_neighbor_allreduce(comm, other, x, x, 4, COLLIE_FLOAT32), "communicator",
                   "a topology of another size");
    expect_invalid(collie_neighbor_allreduce(comm, NULL, x, x, 4, COLLIE_FLOAT32), "topo",
                   "no topology");
    collie_topology *t = make(COLLIE_TOPO_RING, 0);
    expect_invalid(collie_neighbor_allreduce(comm, t, x, x, 4, COLLIE_INT32), "dtype",
                   "an integer dtype");
    expect_invalid(collie_neighbor_allreduce(comm, t, NULL, x, 4, COLLIE_FLOAT32), "sendbuf",
                   "no sendbuf");
    expect_invalid(collie_neighbor_allreduce_dynamic(comm, NULL, x, x, 4, COLLIE_FLOAT32), "nb",
                   "no lists");
    int me = rank, twice[2] = {(rank + 1) % size, (rank + 1) % size}, far = size;
    collie_neighbors self = {.nrecv = 1, .recv_ranks = &me};
    if (size >= 2)
        expect_invalid(collie_neighbor_allreduce_dynamic(comm, &self, x, x, 4, COLLIE_FLOAT32),
                       "this rank", "itself as a neighbour");
    collie_neighbors dup = {.nsend = 2, .send_ranks = twice};
    if (size >= 3)
        expect_invalid(collie_neighbor_allreduce_dynamic(comm, &dup, x, x, 4, COLLIE_FLOAT32),
                       "twice", "a rank twice");
    collie_neighbors out = {.nsend = 1, .send_ranks = &far};
    expect_invalid(collie_neighbor_allreduce_dynamic(comm, &out, x, x, 4, COLLIE_FLOAT32),
                   "outside", "a rank out of range");
    if (size >= 2) {
        float wide[8] = {0};
        expect_invalid(collie_neighbor_allgather(comm, t, wide, wide, 4, COLLIE_FLOAT32),
                       "overlaps", "a gather in place");
        expect_invalid(collie_pair_gossip(comm, rank, x, x, 4, COLLIE_FLOAT32, .5, .5), "this rank",
                       "gossip with itself");
    }
    collie_request *req = (collie_request *)x;
    expect_invalid(collie_ineighbor_allreduce(comm, t, x, x, 4, COLLIE_INT8, &req), "dtype",
                   "non-blocking, integer dtype");
    CHECK(req == NULL, "a refused call left a request");
    /* Refusals fail nothing: the communicator still averages. */
    CHECK_OK(comm, collie_neighbor_allreduce(comm, t, x, x, 4, COLLIE_FLOAT32));
    collie_schedule *s = NULL;
    CHECK(collie_schedule_create(COLLIE_SCHED_ONE_PEER_EXACT, 0, 0, &s) == COLLIE_ERR_INVALID_ARG &&
              !s,
          "a schedule of 0 ranks");
    CHECK(collie_schedule_create((collie_schedule_kind)9, 4, 0, &s) == COLLIE_ERR_INVALID_ARG,
          "an unknown schedule");
    int bad_hosts[3] = {0, 2, 0}, far_host[2] = {0, 5};
    CHECK(collie_schedule_create_hosts(COLLIE_SCHED_INNER_OUTER_RING, 3, bad_hosts, &s) ==
                  COLLIE_ERR_INVALID_ARG &&
              strstr(collie_last_error(NULL), "no rank is on host 1"),
          "a host numbering with a gap: %s", collie_last_error(NULL));
    CHECK(collie_schedule_create_hosts(COLLIE_SCHED_INNER_OUTER_RING, 2, far_host, &s) ==
                  COLLIE_ERR_INVALID_ARG &&
              strstr(collie_last_error(NULL), "host_of[1]=5"),
          "a host out of range: %s", collie_last_error(NULL));
    CHECK(collie_schedule_from_name_hosts("inner-outer-ring", 2, NULL, &s) == COLLIE_OK &&
              collie_schedule_period(s) == 1,
          "one host of two: one ring step");
    collie_schedule_free(s);
    collie_topology_free(t);
    collie_topology_free(other);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2,
          "usage: test_neighbor "
          "static|dynamic|compressed|hierarchical|consensus|schedule|hostsched|allgather|straggler|"
          "mismatch|"
          "kill|badargs");
    comm = test_init();
    rank = collie_rank(comm);
    size = collie_size(comm);
    const char *s = argv[1];
    if (!strcmp(s, "static"))
        static_scenario();
    else if (!strcmp(s, "dynamic"))
        dynamic_scenario();
    else if (!strcmp(s, "compressed"))
        compressed_scenario();
    else if (!strcmp(s, "hierarchical"))
        hierarchical_scenario();
    else if (!strcmp(s, "consensus"))
        consensus_scenario();
    else if (!strcmp(s, "schedule"))
        schedule_scenario();
    else if (!strcmp(s, "hostsched"))
        hostsched_scenario();
    else if (!strcmp(s, "allgather"))
        allgather_scenario();
    else if (!strcmp(s, "mismatch"))
        mismatch_scenario();
    else if (!strcmp(s, "straggler"))
        straggler_scenario();
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
