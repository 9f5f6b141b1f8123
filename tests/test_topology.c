/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_topology.c - the virtual topologies: neighbours and weights of every
 * builder, exact one-step averages, the check (regular, stochastic, rho), and
 * consensus by repeated averaging, simulated here in one process (W applied
 * to every rank's value): the mean is kept and the spread contracts by rho.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie.h"
#include "test_util.h"

static collie_topology *make(collie_topology_kind kind, int size, int param)
{
    collie_topology *t = NULL;
    collie_status st = collie_topology_create(kind, size, param, &t);
    CHECK(st == COLLIE_OK && t, "kind %d size %d param %d: %s", kind, size, param,
          collie_strerror(st));
    return t;
}

/* One averaging step over every rank: y_i = W_ii x_i + sum_j W_ij x_j. */
static void step(const collie_topology *t, const double *x, double *y)
{
    int n = collie_topology_size(t), ranks[4096];
    double w[4096];
    for (int i = 0; i < n; i++) {
        int d = collie_topology_in(t, i, ranks, w, 4096);
        y[i] = collie_topology_self_weight(t, i) * x[i];
        for (int k = 0; k < d; k++)
            y[i] += w[k] * x[ranks[k]];
    }
}

static collie_topology_props props_of(const collie_topology *t)
{
    collie_topology_props p;
    CHECK(collie_topology_check(t, &p) == COLLIE_OK, "check");
    return p;
}

/* x_r = r, one step of exponential-2: the exact values. */
static void test_exponential_values(void)
{
    const double want4[] = {5.0 / 3, 4.0 / 3, 1, 2};
    const double want8[] = {17.0 / 4, 13.0 / 4, 9.0 / 4,  13.0 / 4,
                            9.0 / 4,  13.0 / 4, 17.0 / 4, 21.0 / 4};
    for (int n = 4; n <= 8; n += 4) {
        collie_topology *t = make(COLLIE_TOPO_EXPONENTIAL, n, 2);
        double x[8], y[8];
        for (int r = 0; r < n; r++)
            x[r] = r;
        step(t, x, y);
        for (int r = 0; r < n; r++)
            CHECK(fabs(y[r] - (n == 4 ? want4 : want8)[r]) < 1e-12, "n=%d rank %d: %g", n, r, y[r]);
        int out[8], in[8];
        double w[8];
        int dout = collie_topology_out(t, 0, out, NULL, 8),
            din = collie_topology_in(t, 0, in, w, 8);
        CHECK(dout == (n == 4 ? 2 : 3) && din == dout, "degrees %d %d", dout, din);
        CHECK(out[0] == 1 && out[1] == 2 && (n == 4 || out[2] == 4), "out-neighbours of 0");
        CHECK(in[0] == n / 2 && in[din - 1] == n - 1, "in-neighbours of 0: %d..%d", in[0],
              in[din - 1]);
        CHECK(fabs(w[0] - 1.0 / (din + 1)) < 1e-15, "uniform weight %g", w[0]);
        collie_topology_free(t);
    }
}

/* rho of exponential-2 with uniform weights: 1/3, 1/2, 3/5 at 4, 8, 16 ranks. */
static void test_rho(void)
{
    const int sizes[] = {4, 8, 16};
    const double want[] = {1.0 / 3, 1.0 / 2, 3.0 / 5};
    for (int k = 0; k < 3; k++) {
        collie_topology *t = make(COLLIE_TOPO_EXPONENTIAL, sizes[k], 2);
        collie_topology_props p = props_of(t);
        CHECK(p.regular && p.row_stochastic && p.column_stochastic, "n=%d props", sizes[k]);
        CHECK(fabs(p.rho - want[k]) < 1e-9, "n=%d: rho %.12f, want %.12f", sizes[k], p.rho,
              want[k]);
        collie_topology_free(t);
    }
    collie_topology *ring = make(COLLIE_TOPO_RING, 5, 0);
    collie_topology_props p = props_of(ring);
    CHECK(fabs(p.rho - (1 + 2 * cos(2 * M_PI / 5)) / 3) < 1e-9, "ring of 5: rho %.12f", p.rho);
    CHECK(p.max_degree == 2, "ring degree %d", p.max_degree);
    collie_topology_free(ring);
    collie_topology *full = make(COLLIE_TOPO_FULL, 7, 0);
    p = props_of(full);
    CHECK(p.rho == 0 && p.max_degree == 6, "full: rho %g degree %d", p.rho, p.max_degree);
    collie_topology_free(full);
}

/*
 * Repeated averaging from random values: the mean stays, every rank
 * converges to it (the irregular graphs too, thanks to Metropolis-Hastings),
 * and the spread after t steps is at most rho^t times the first spread.
 */
static void test_consensus(void)
{
    struct {
        collie_topology_kind kind;
        int size, param;
    } cases[] = {
        {COLLIE_TOPO_STAR, 8, 0},
        {COLLIE_TOPO_STAR, 5, 3},
        {COLLIE_TOPO_MESH, 9, 0},
        {COLLIE_TOPO_MESH, 10, 0},
        {COLLIE_TOPO_MESH, 7, 2},
        {COLLIE_TOPO_RING, 6, 0},
        {COLLIE_TOPO_RING, 6, 1},
        {COLLIE_TOPO_EXPONENTIAL, 12, 3},
        {COLLIE_TOPO_SYMMETRIC_EXPONENTIAL, 10, 2},
        {COLLIE_TOPO_EXPONENTIAL, 16, 2},
        {COLLIE_TOPO_FULL, 5, 0},
        {COLLIE_TOPO_EXPONENTIAL, 1, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        collie_topology *t = make(cases[c].kind, cases[c].size, cases[c].param);
        int n = cases[c].size;
        collie_topology_props p = props_of(t);
        CHECK(p.row_stochastic && p.column_stochastic && p.rho >= 0 && p.rho < 1,
              "case %zu: not doubly stochastic or rho %g", c, p.rho);
        double x[16], y[16], mean = 0, spread0 = 0;
        unsigned seed = 12345u + (unsigned)c;
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            x[i] = (double)(seed >> 8 & 0xffff) / 65536.0 - 0.3;
            mean += x[i] / n;
        }
        for (int i = 0; i < n; i++)
            spread0 += (x[i] - mean) * (x[i] - mean);
        spread0 = sqrt(spread0);
        for (int s = 1; s <= 60; s++) {
            step(t, x, y);
            double m = 0, spread = 0;
            for (int i = 0; i < n; i++)
                x[i] = y[i], m += y[i] / n;
            for (int i = 0; i < n; i++)
                spread += (x[i] - m) * (x[i] - m);
            spread = sqrt(spread);
            CHECK(fabs(m - mean) < 1e-12, "case %zu step %d: the mean moved %g -> %g", c, s, mean,
                  m);
            CHECK(spread <= pow(p.rho, s) * spread0 * (1 + 1e-9) + 1e-14,
                  "case %zu step %d: spread %g above rho^t bound %g", c, s, spread,
                  pow(p.rho, s) * spread0);
        }
        for (int i = 0; i < n; i++)
            CHECK(fabs(x[i] - mean) < 1e-3, "case %zu: rank %d at %g, the mean is %g", c, i, x[i],
                  mean);
        collie_topology_free(t);
    }
}

static void test_weights(void)
{
    /* star of 8, Metropolis-Hastings: leaves give the center 1/8 and keep 7/8 */
    collie_topology *star = make(COLLIE_TOPO_STAR, 8, 0);
    double w[8];
    int r[8];
    CHECK(collie_topology_in(star, 3, r, w, 8) == 1 && r[0] == 0 && fabs(w[0] - 1.0 / 8) < 1e-15,
          "leaf weights");
    CHECK(fabs(collie_topology_self_weight(star, 3) - 7.0 / 8) < 1e-15, "leaf self weight");
    CHECK(collie_topology_in(star, 0, r, w, 8) == 7 &&
              fabs(collie_topology_self_weight(star, 0) - 1.0 / 8) < 1e-15,
          "center");
    CHECK(!props_of(star).regular, "a star is not regular");
    collie_topology_free(star);
    /* base 3 over 10 ranks: offsets 1, 2, 3, 6, 9 */
    collie_topology *b3 = make(COLLIE_TOPO_EXPONENTIAL, 10, 3);
    CHECK(collie_topology_out(b3, 0, r, NULL, 8) == 5 && r[0] == 1 && r[1] == 2 && r[2] == 3 &&
              r[3] == 6 && r[4] == 9,
          "base-3 offsets");
    collie_topology_free(b3);
    /* a ring of 2 both ways has one neighbour each way, not two */
    collie_topology *ring2 = make(COLLIE_TOPO_RING, 2, 0);
    CHECK(collie_topology_in(ring2, 0, NULL, NULL, 0) == 1, "ring of 2");
    collie_topology_free(ring2);
    /* one rank: nobody to average with */
    collie_topology *one = make(COLLIE_TOPO_FULL, 1, 0);
    CHECK(collie_topology_in(one, 0, NULL, NULL, 0) == 0 &&
              collie_topology_self_weight(one, 0) == 1,
          "one rank");
    collie_topology_free(one);
}

static void test_edges(void)
{
    collie_topology *t = NULL;
    /* a symmetric path 0-1-2: Metropolis-Hastings */
    int from[] = {0, 1, 1, 2}, to[] = {1, 0, 2, 1};
    CHECK(collie_topology_from_edges(3, 4, from, to, NULL, &t) == COLLIE_OK, "path");
    collie_topology_props p = props_of(t);
    CHECK(p.row_stochastic && p.column_stochastic && !p.regular && p.rho > 0 && p.rho < 1,
          "path props");
    collie_topology_free(t);
    /* a directed cycle 0->1->2->0: regular, uniform */
    int cf[] = {0, 1, 2}, ct[] = {1, 2, 0};
    CHECK(collie_topology_from_edges(3, 3, cf, ct, NULL, &t) == COLLIE_OK, "cycle");
    CHECK(fabs(collie_topology_self_weight(t, 1) - 0.5) < 1e-15, "cycle self weight");
    collie_topology_free(t);
    /* directed and irregular: no default averages exactly */
    int df[] = {0, 0}, dt[] = {1, 2};
    CHECK(collie_topology_from_edges(3, 2, df, dt, NULL, &t) == COLLIE_ERR_INVALID_ARG && !t,
          "an irregular directed graph without weights must be refused");
    CHECK(strstr(collie_last_error(NULL), "give weights") != NULL, "detail: %s",
          collie_last_error(NULL));
    /* with weights it is accepted, and the check says what they make */
    double w[] = {0.5, 0.5};
    CHECK(collie_topology_from_edges(3, 2, df, dt, w, &t) == COLLIE_OK, "given weights");
    p = props_of(t);
    CHECK(p.row_stochastic && !p.column_stochastic && p.rho == -1, "given weights: props");
    CHECK(fabs(collie_topology_self_weight(t, 1) - 0.5) < 1e-15 &&
              collie_topology_self_weight(t, 0) == 1,
          "self weights are what the row leaves");
    collie_topology_free(t);
    /* refusals */
    int dup_f[] = {0, 0}, dup_t[] = {1, 1}, self_f[] = {1}, self_t[] = {1}, out_f[] = {0},
        out_t[] = {3};
    CHECK(collie_topology_from_edges(3, 2, dup_f, dup_t, NULL, &t) == COLLIE_ERR_INVALID_ARG,
          "duplicate");
    CHECK(collie_topology_from_edges(3, 1, self_f, self_t, NULL, &t) == COLLIE_ERR_INVALID_ARG,
          "self-edge");
    CHECK(collie_topology_from_edges(3, 1, out_f, out_t, NULL, &t) == COLLIE_ERR_INVALID_ARG,
          "rank 3 of 3");
    CHECK(collie_topology_from_edges(3, 1, NULL, out_t, NULL, &t) == COLLIE_ERR_INVALID_ARG,
          "NULL from");
}

static void test_refusals(void)
{
    collie_topology *t = (collie_topology *)1;
    CHECK(collie_topology_create(COLLIE_TOPO_RING, 0, 0, &t) == COLLIE_ERR_INVALID_ARG && !t,
          "size 0");
    CHECK(collie_topology_create((collie_topology_kind)99, 4, 0, &t) == COLLIE_ERR_INVALID_ARG,
          "kind");
    CHECK(collie_topology_create(COLLIE_TOPO_EXPONENTIAL, 4, 1, &t) == COLLIE_ERR_INVALID_ARG,
          "base 1");
    CHECK(collie_topology_create(COLLIE_TOPO_STAR, 4, 4, &t) == COLLIE_ERR_INVALID_ARG,
          "center 4 of 4");
    CHECK(collie_topology_create(COLLIE_TOPO_MESH, 4, 5, &t) == COLLIE_ERR_INVALID_ARG,
          "5 columns of 4");
    CHECK(collie_topology_create(COLLIE_TOPO_RING, 4, 2, &t) == COLLIE_ERR_INVALID_ARG,
          "ring param 2");
    CHECK(collie_topology_create(COLLIE_TOPO_RING, 4, 0, NULL) == COLLIE_ERR_INVALID_ARG,
          "NULL out");
    CHECK(collie_topology_in(NULL, 0, NULL, NULL, 0) == -1 && collie_topology_size(NULL) == -1 &&
              isnan(collie_topology_self_weight(NULL, 0)),
          "NULL topology queries");
    collie_topology_props p;
    CHECK(collie_topology_check(NULL, &p) == COLLIE_ERR_INVALID_ARG, "check NULL");
    collie_topology_free(NULL);
}

/* A large graph: exponential-2 over 4096 ranks still gets its rho (log2: 12 neighbours, 1/13 * ...). */
static void test_large(void)
{
    collie_topology *t = make(COLLIE_TOPO_EXPONENTIAL, 4096, 2);
    collie_topology_props p = props_of(t);
    CHECK(p.max_degree == 12 && p.rho > 0.5 && p.rho < 1, "4096 ranks: degree %d rho %g",
          p.max_degree, p.rho);
    collie_topology_free(t);
    t = make(COLLIE_TOPO_EXPONENTIAL, 65536, 2);
    p = props_of(t);
    CHECK(p.max_degree == 16 && p.rho == -1 && p.column_stochastic, "65536 ranks: %d %g",
          p.max_degree, p.rho);
    collie_topology_free(t);
}

int main(void)
{
    test_exponential_values();
    test_rho();
    test_consensus();
    test_weights();
    test_edges();
    test_refusals();
    test_large();
    printf("topology: every builder, its weights, rho and consensus checked\n");
    return 0;
}
