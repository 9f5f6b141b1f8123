/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topology.c - virtual topologies for decentralized averaging: the builders
 * (include/collie.h names each graph), their default weights, and the check.
 *
 * A topology is two compressed adjacency lists over the same edges: by
 * receiver (in-neighbours, each with the weight the receiver gives it) and by
 * sender (out-neighbours, with the same weight), plus the self weights.  All
 * offsets are integers (b^k by repeated multiplication, never a floating log),
 * so every rank builds the same graph bit for bit.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "topology.h"

struct collie_topology {
    int size;
    int *in_start, *in_rank; /* in_rank[in_start[i] .. in_start[i+1]): i's in-neighbours */
    double *in_w;            /* W[i][in_rank[e]] */
    int *out_start, *out_rank;
    double *out_w;        /* W[out_rank[e]][j] for j's out-edge e */
    double *self;         /* W[i][i] */
    int exact;            /* W = J/size: one step is the mean */
    uint32_t fingerprint; /* of the edges and weights, never 0 (neighbour calls compare it) */
};

struct edge {
    int from, to;
    double w;
};

static int by_receiver(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    return x->to != y->to ? (x->to > y->to) - (x->to < y->to)
                          : (x->from > y->from) - (x->from < y->from);
}

static int by_sender(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    return x->from != y->from ? (x->from > y->from) - (x->from < y->from)
                              : (x->to > y->to) - (x->to < y->to);
}

void collie_topology_free(collie_topology *t)
{
    if (!t)
        return;
    free(t->in_start), free(t->in_rank), free(t->in_w);
    free(t->out_start), free(t->out_rank), free(t->out_w);
    free(t->self);
    free(t);
}

static collie_status refuse(const char *what)
{
    collie__api_error("collie_topology: %s", what);
    return COLLIE_ERR_INVALID_ARG;
}

/* NOMEM, saying for what (collie_last_error(NULL)). */
static collie_status no_memory(const char *what)
{
    collie__api_error("collie_topology: no memory for %s", what);
    return COLLIE_ERR_NOMEM;
}

enum weighting { GIVEN, UNIFORM, METROPOLIS, DEFAULT };

static uint32_t fnv1a(uint32_t h, const void *p, size_t n)
{
    for (const unsigned char *b = p; n--; b++)
        h = (h ^ *b) * 16777619u;
    return h;
}

/* FNV-1a over the size, the edges by receiver and every weight's bits: never 0. */
static uint32_t fingerprint(const collie_topology *t, size_t nedges)
{
    uint32_t h = fnv1a(2166136261u, &t->size, sizeof t->size);
    h = fnv1a(h, t->in_start, ((size_t)t->size + 1) * sizeof *t->in_start);
    h = fnv1a(h, t->in_rank, nedges * sizeof *t->in_rank);
    h = fnv1a(h, t->in_w, nedges * sizeof *t->in_w);
    h = fnv1a(h, t->self, (size_t)t->size * sizeof *t->self);
    return h ? h : 1;
}

/* Edges are counted in ints; this many take about 12 GiB to build. */
#define MAX_EDGES ((size_t)1 << 28)

/*
 * The topology of the n edges e (sorted by receiver on return).  DEFAULT
 * picks Metropolis-Hastings for a symmetric graph, uniform for one where every
 * rank's in- and out-degree are one d, and refuses the rest.
 */
static collie_status build(int size, struct edge *e, size_t n, enum weighting how,
                           collie_topology **out)
{
    collie_topology *t = calloc(1, sizeof *t);
    if (!t)
        return no_memory("a topology");
    t->size = size;
    size_t s1 = (size_t)size + 1;
    t->in_start = calloc(s1, sizeof(int)), t->out_start = calloc(s1, sizeof(int));
    t->in_rank = malloc((n ? n : 1) * sizeof(int)), t->out_rank = malloc((n ? n : 1) * sizeof(int));
    t->in_w = malloc((n ? n : 1) * sizeof(double)), t->out_w = malloc((n ? n : 1) * sizeof(double));
    t->self = malloc((size_t)size * sizeof(double));
    if (!t->in_start || !t->out_start || !t->in_rank || !t->out_rank || !t->in_w || !t->out_w ||
        !t->self) {
        collie_topology_free(t);
        return no_memory("a topology's adjacency lists");
    }
    qsort(e, n, sizeof *e, by_receiver);
    for (size_t k = 0; k < n; k++) {
        if (k && e[k].from == e[k - 1].from && e[k].to == e[k - 1].to) {
            collie_topology_free(t);
            return refuse("an edge appears twice");
        }
        t->in_start[e[k].to + 1]++;
        t->out_start[e[k].from + 1]++;
    }
    int regular = 1;
    for (int i = 0; i < size; i++) {
        int din = t->in_start[i + 1], dout = t->out_start[i + 1];
        regular &= din == dout && din == t->in_start[1];
        t->in_start[i + 1] += t->in_start[i];
        t->out_start[i + 1] += t->out_start[i];
    }
    if (how == DEFAULT) {
        /* symmetric: every edge's reverse is there (binary search in the receiver order) */
        int symmetric = 1;
        for (size_t k = 0; k < n && symmetric; k++) {
            struct edge rev = {.from = e[k].to, .to = e[k].from};
            symmetric = bsearch(&rev, e, n, sizeof *e, by_receiver) != NULL;
        }
        how = symmetric ? METROPOLIS : regular ? UNIFORM : GIVEN;
        if (how == GIVEN) {
            collie_topology_free(t);
            return refuse("the edges are neither symmetric nor regular, so no default weights "
                          "average exactly: give weights");
        }
    }
    for (size_t k = 0; k < n; k++) {
        int i = e[k].to, j = e[k].from;
        int di = t->in_start[i + 1] - t->in_start[i], dj = t->in_start[j + 1] - t->in_start[j];
        if (how == UNIFORM)
            e[k].w = 1.0 / (di + 1);
        else if (how == METROPOLIS)
            e[k].w = 1.0 / (1 + (di > dj ? di : dj));
        t->in_rank[k] = j;
        t->in_w[k] = e[k].w;
    }
    for (int i = 0; i < size; i++) {
        double sum = 0;
        for (int k = t->in_start[i]; k < t->in_start[i + 1]; k++)
            sum += t->in_w[k];
        t->self[i] = how == UNIFORM ? 1.0 / (t->in_start[i + 1] - t->in_start[i] + 1) : 1.0 - sum;
    }
    qsort(e, n, sizeof *e, by_sender);
    for (size_t k = 0; k < n; k++) {
        t->out_rank[k] = e[k].to;
        t->out_w[k] = e[k].w;
    }
    t->fingerprint = fingerprint(t, n);
    *out = t;
    return COLLIE_OK;
}

/*
 * Appends from -> to unless it is a self-edge or already among the edges
 * added since `since` (this rank's: circulant offsets can meet, as +s and -s
 * do when 2s = size).
 */
static void add(struct edge *e, size_t *n, size_t since, int from, int to)
{
    if (from == to)
        return;
    for (size_t k = since; k < *n; k++)
        if (e[k].from == from && e[k].to == to)
            return;
    e[(*n)++] = (struct edge){.from = from, .to = to};
}

/* The offsets m*b^k (1 <= m < b, m*b^k < size), in integers; returns how many. */
static int exponential_offsets(int size, int b, int *off)
{
    int n = 0;
    for (long long p = 1; p < size; p *= b)
        for (long long m = 1; m < b && m * p < size; m++)
            off[n++] = (int)(m * p);
    return n;
}

collie_status collie_topology_create(collie_topology_kind kind, int size, int param,
                                     collie_topology **topo)
{
    if (!topo)
        return refuse("topo (the output pointer) is NULL");
    *topo = NULL;
    if (size < 1)
        return refuse("size must be at least 1");
    int offsets[64 * 64], noff = 0, cols = 0;
    size_t cap;
    switch (kind) {
    case COLLIE_TOPO_EXPONENTIAL:
    case COLLIE_TOPO_SYMMETRIC_EXPONENTIAL:
        if (param < 2)
            return refuse("an exponential graph's base (param) must be at least 2");
        if (param > (int)(sizeof offsets / sizeof offsets[0]) / 32 + 1) /* 31 powers at most */
            return refuse("an exponential graph's base (param) is too large");
        noff = exponential_offsets(size, param, offsets);
        cap = (size_t)size * (size_t)noff * 2;
        break;
    case COLLIE_TOPO_RING:
        if (param != 0 && param != 1)
            return refuse("a ring's param is 0 (both ways) or 1 (one way)");
        cap = (size_t)size * 2;
        break;
    case COLLIE_TOPO_MESH:
        if (param < 0 || param > size)
            return refuse("a mesh's columns (param) must be 0 (the squarest) to size");
        cols = param;
        if (!cols)
            while ((long long)cols * cols < size)
                cols++;
        cap = (size_t)size * 4;
        break;
    case COLLIE_TOPO_STAR:
        if (param < 0 || param >= size)
            return refuse("a star's center (param) must be a rank of the topology");
        cap = (size_t)size * 2;
        break;
    case COLLIE_TOPO_FULL: cap = (size_t)size * (size_t)size; break;
    default: return refuse("kind is not a collie_topology_kind");
    }
    if (cap > MAX_EDGES)
        return refuse("the graph would have over 2^28 edges (a full graph of over 16384 ranks: "
                      "use allreduce)");
    struct edge *e = malloc((cap ? cap : 1) * sizeof *e);
    if (!e)
        return no_memory("the edges");
    size_t n = 0;
    enum weighting how = UNIFORM;
    for (int i = 0; i < size; i++) {
        size_t since = n;
        switch (kind) {
        case COLLIE_TOPO_EXPONENTIAL:
        case COLLIE_TOPO_SYMMETRIC_EXPONENTIAL:
            for (int k = 0; k < noff; k++) {
                add(e, &n, since, i, (i + offsets[k]) % size);
                if (kind == COLLIE_TOPO_SYMMETRIC_EXPONENTIAL)
                    add(e, &n, since, i, ((i - offsets[k]) % size + size) % size);
            }
            break;
        case COLLIE_TOPO_RING:
            add(e, &n, since, i, (i + 1) % size);
            if (!param)
                add(e, &n, since, i, (i + size - 1) % size);
            break;
        case COLLIE_TOPO_MESH:
            how = METROPOLIS;
            if (i % cols && i - 1 >= 0)
                add(e, &n, since, i, i - 1);
            if ((i + 1) % cols && i + 1 < size)
                add(e, &n, since, i, i + 1);
            if (i - cols >= 0)
                add(e, &n, since, i, i - cols);
            if (i + cols < size)
                add(e, &n, since, i, i + cols);
            break;
        case COLLIE_TOPO_STAR:
            how = METROPOLIS;
            add(e, &n, since, i, param);
            add(e, &n, since, param, i);
            break;
        case COLLIE_TOPO_FULL: /* distinct by construction: nothing to look back at */
            for (int j = 0; j < size; j++)
                add(e, &n, n, i, j);
            break;
        }
    }
    collie_status st = build(size, e, n, how, topo);
    free(e);
    if (st == COLLIE_OK && kind == COLLIE_TOPO_FULL)
        (*topo)->exact = 1;
    return st;
}

collie_status collie_topology_from_edges(int size, size_t nedges, const int *from, const int *to,
                                         const double *weights, collie_topology **topo)
{
    if (!topo)
        return refuse("topo (the output pointer) is NULL");
    *topo = NULL;
    if (size < 1)
        return refuse("size must be at least 1");
    if (nedges && (!from || !to))
        return refuse("from or to is NULL but nedges > 0");
    if (nedges > MAX_EDGES)
        return refuse("over 2^28 edges");
    struct edge *e = malloc((nedges ? nedges : 1) * sizeof *e);
    if (!e)
        return no_memory("the edges");
    for (size_t k = 0; k < nedges; k++) {
        if (from[k] < 0 || from[k] >= size || to[k] < 0 || to[k] >= size || from[k] == to[k]) {
            free(e);
            return refuse(from[k] == to[k] ? "a self-edge (a rank's own weight is what the "
                                             "others leave)"
                                           : "an edge names a rank outside 0..size-1");
        }
        e[k] = (struct edge){.from = from[k], .to = to[k], .w = weights ? weights[k] : 0};
    }
    collie_status st = build(size, e, nedges, weights ? GIVEN : DEFAULT, topo);
    free(e);
    return st;
}

int collie_topology_size(const collie_topology *t) { return t ? t->size : -1; }

static int list(const int *start, const int *rank, const double *w, int i, int *ranks,
                double *weights, int max)
{
    int n = start[i + 1] - start[i];
    for (int k = 0; k < n && k < max; k++) {
        if (ranks)
            ranks[k] = rank[start[i] + k];
        if (weights)
            weights[k] = w[start[i] + k];
    }
    return n;
}

int collie_topology_in(const collie_topology *t, int rank, int *ranks, double *weights, int max)
{
    if (!t || rank < 0 || rank >= t->size)
        return -1;
    return list(t->in_start, t->in_rank, t->in_w, rank, ranks, weights, max);
}

int collie_topology_out(const collie_topology *t, int rank, int *ranks, double *weights, int max)
{
    if (!t || rank < 0 || rank >= t->size)
        return -1;
    return list(t->out_start, t->out_rank, t->out_w, rank, ranks, weights, max);
}

double collie_topology_self_weight(const collie_topology *t, int rank)
{
    return t && rank >= 0 && rank < t->size ? t->self[rank] : NAN;
}

/* y = (W - J/n) x, or its transpose: W's rows or columns, then the mean taken off. */
static void apply(const collie_topology *t, int transpose, const double *x, double *y)
{
    const int n = t->size;
    const int *start = transpose ? t->out_start : t->in_start;
    const int *rank = transpose ? t->out_rank : t->in_rank;
    const double *w = transpose ? t->out_w : t->in_w;
    double mean = 0;
    for (int i = 0; i < n; i++)
        mean += x[i];
    mean /= n;
    for (int i = 0; i < n; i++) {
        double s = t->self[i] * x[i];
        for (int k = start[i]; k < start[i + 1]; k++)
            s += w[k] * x[rank[k]];
        y[i] = s - mean;
    }
}

/* ||A^power||_2, by power iteration on (A^power)^T A^power from a fixed start. */
static double norm_of_power(const collie_topology *t, int power, double *v, double *u)
{
    const int n = t->size;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
    }
    double lambda = 0;
    for (int it = 0; it < 500; it++) {
        double norm = 0;
        for (int i = 0; i < n; i++)
            norm += v[i] * v[i];
        norm = sqrt(norm);
        if (norm < 1e-300)
            return 0; /* A^power v vanished */
        for (int i = 0; i < n; i++)
            v[i] /= norm;
        for (int p = 0; p < 2 * power; p++) {
            apply(t, p >= power, v, u);
            memcpy(v, u, (size_t)n * sizeof *v);
        }
        double next = 0; /* the Rayleigh quotient at the unit vector: v is B^T B of it */
        for (int i = 0; i < n; i++)
            next += v[i] * v[i];
        next = sqrt(next);
        int done = it > 10 && fabs(next - lambda) <= 1e-13 * lambda;
        lambda = next;
        if (done)
            break;
    }
    return sqrt(lambda);
}

/*
 * The spectral radius of A = W - J/n.  Every ||A^k||^(1/k) bounds it from
 * above and tends to it; ||A|| is it for a normal W (every builder's:
 * circulant or symmetric), ||A^8||^(1/8) is close for the others.  The
 * smaller of the two.
 */
static double spectral_radius(const collie_topology *t)
{
    const int n = t->size;
    double *v = malloc((size_t)n * sizeof *v), *u = malloc((size_t)n * sizeof *u);
    double rho = -1;
    if (v && u) {
        double one = norm_of_power(t, 1, v, u), eight = pow(norm_of_power(t, 8, v, u), 1.0 / 8);
        rho = one < eight ? one : eight;
    }
    free(v), free(u);
    return rho;
}

collie_status collie_topology_check(const collie_topology *t, collie_topology_props *props)
{
    if (!t || !props)
        return refuse(t ? "props is NULL" : "topo is NULL");
    const int n = t->size;
    memset(props, 0, sizeof *props);
    props->regular = props->row_stochastic = props->column_stochastic = 1;
    double *column = calloc((size_t)n, sizeof *column);
    if (!column)
        return no_memory("the check's column sums");
    for (int i = 0; i < n; i++) {
        int in = t->in_start[i + 1] - t->in_start[i], out = t->out_start[i + 1] - t->out_start[i];
        props->regular &=
            in == t->in_start[1] - t->in_start[0] && out == t->out_start[1] - t->out_start[0];
        props->max_degree = in > props->max_degree ? in : props->max_degree;
        props->max_degree = out > props->max_degree ? out : props->max_degree;
        double row = t->self[i];
        column[i] += t->self[i];
        for (int k = t->in_start[i]; k < t->in_start[i + 1]; k++) {
            row += t->in_w[k];
            column[t->in_rank[k]] += t->in_w[k];
        }
        props->row_stochastic &= fabs(row - 1) <= 1e-9;
    }
    for (int j = 0; j < n; j++)
        props->column_stochastic &= fabs(column[j] - 1) <= 1e-9;
    free(column);
    size_t edges = (size_t)t->in_start[n];
    if (!props->row_stochastic || !props->column_stochastic)
        props->rho = -1;
    else if (t->exact || n == 1)
        props->rho = 0;
    else
        props->rho = n <= 4096 && edges <= (1u << 20) ? spectral_radius(t) : -1;
    return COLLIE_OK;
}

void collie__topology_plan(const collie_topology *t, int rank, struct collie__nbr_plan *p)
{
    int in = t->in_start[rank], out = t->out_start[rank];
    *p = (struct collie__nbr_plan){
        .nrecv = t->in_start[rank + 1] - in,
        .nsend = t->out_start[rank + 1] - out,
        .recv = t->in_rank + in,
        .send = t->out_rank + out,
        .recv_w = t->in_w + in,
        .self_w = t->self[rank],
        .fingerprint = t->fingerprint,
    };
}
