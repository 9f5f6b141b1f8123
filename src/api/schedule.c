/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * schedule.c - dynamic schedules: one topology per step, built once with
 * collie_topology_from_edges (include/collie.h describes each kind).  Every
 * offset and weight is computed with integers and halvings, so every rank
 * builds the same steps bit for bit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "schedule.h"

struct collie_schedule {
    int period;
    collie_topology **steps;
};

void collie_schedule_free(collie_schedule *s)
{
    if (!s)
        return;
    for (int t = 0; s->steps && t < s->period; t++)
        collie_topology_free(s->steps[t]);
    free(s->steps);
    free(s);
}

int collie_schedule_period(const collie_schedule *s) { return s ? s->period : -1; }

const collie_topology *collie_schedule_step(const collie_schedule *s, long long t)
{
    return s && t >= 0 ? s->steps[t % s->period] : NULL;
}

/* Step t of the one-peer exponential graph: i -> i + 2^t, half and half. */
static void one_peer_exponential(struct collie__step_edges *e, int size, int t)
{
    for (int i = 0; size > 1 && i < size; i++)
        collie__edge(e, i, (int)((i + (1LL << t)) % size), 0.5);
}

/*
 * Step t of the exact one-peer schedule over size = P + r ranks (P a power
 * of two, r < P).  mass[i] (i < P) is how many ranks' data rank i's value
 * stands for; the hypercube steps weight each side by it and update it.
 */
static void one_peer_exact(struct collie__step_edges *e, int size, int t, double *mass)
{
    int p = collie__log2_floor(size), big = 1 << p, r = size - big;
    if (r && t == 0) { /* fold: j and big + j both take their mean; j stands for 2 */
        for (int j = 0; j < r; j++) {
            collie__edge(e, big + j, j, 0.5), collie__edge(e, j, big + j, 0.5);
            mass[j] = 2;
        }
        return;
    }
    int s = t - (r > 0);
    if (s == p) { /* copy back: big + j takes j's value, the mean */
        for (int j = 0; j < r; j++)
            collie__edge(e, j, big + j, 1.0);
        return;
    }
    for (int i = 0; i < big; i++) {
        int j = i ^ (1 << s);
        collie__edge(e, j, i, mass[j] / (mass[i] + mass[j]));
    }
    for (int i = 0; i < big; i++) {
        int j = i ^ (1 << s);
        if (i < j)
            mass[i] = mass[j] = (mass[i] + mass[j]) / 2;
    }
}

static int period_of(collie_schedule_kind kind, int size)
{
    int p = collie__log2_floor(size);
    int tau = p + ((1 << p) < size); /* ceil(log2 size) */
    if (kind == COLLIE_SCHED_ONE_PEER_EXPONENTIAL)
        return tau ? tau : 1;
    return size == 1 ? 1 : p + ((1 << p) < size ? 2 : 0);
}

collie_status collie__schedule_build(const char *who, int size, int period, collie__step_fn step,
                                     void *ctx, collie_schedule **out)
{
    *out = NULL;
    collie_schedule *s = calloc(1, sizeof *s);
    struct collie__step_edges e = {
        .from = malloc(2 * (size_t)size * sizeof(int)),
        .to = malloc(2 * (size_t)size * sizeof(int)),
        .w = malloc(2 * (size_t)size * sizeof(double)),
    };
    collie_status st = s && e.from && e.to && e.w ? COLLIE_OK : COLLIE_ERR_NOMEM;
    if (st == COLLIE_OK) {
        s->period = period;
        s->steps = calloc((size_t)period, sizeof *s->steps);
        st = s->steps ? COLLIE_OK : COLLIE_ERR_NOMEM;
    }
    for (int t = 0; st == COLLIE_OK && t < period; t++) {
        e.n = 0;
        step(ctx, &e, t);
        st = collie_topology_from_edges(size, e.n, e.from, e.to, e.w, &s->steps[t]);
    }
    free(e.from), free(e.to), free(e.w);
    if (st != COLLIE_OK) {
        if (st == COLLIE_ERR_NOMEM)
            collie__api_error("%s: no memory for %d steps of %d ranks", who, period, size);
        collie_schedule_free(s);
        return st;
    }
    *out = s;
    return COLLIE_OK;
}

/* The one-peer schedules' state while their steps are built. */
struct one_peer {
    collie_schedule_kind kind;
    int size;
    double *mass;
};

static void one_peer_step(void *ctx, struct collie__step_edges *e, int t)
{
    struct one_peer *o = ctx;
    if (o->kind == COLLIE_SCHED_ONE_PEER_EXPONENTIAL)
        one_peer_exponential(e, o->size, t);
    else if (o->size > 1)
        one_peer_exact(e, o->size, t, o->mass);
}

collie_status collie_schedule_create(collie_schedule_kind kind, int size, int param,
                                     collie_schedule **out)
{
    const char *bad = NULL;
    if (!out)
        bad = "sched (the output pointer) is NULL";
    else if (kind != COLLIE_SCHED_ONE_PEER_EXPONENTIAL && kind != COLLIE_SCHED_ONE_PEER_EXACT)
        bad = "kind is not a collie_schedule_kind";
    else if (size < 1 || size > (1 << 28))
        bad = "size must be in [1, 2^28]";
    else if (param != 0)
        bad = "param must be 0 for this kind";
    if (bad) {
        collie__api_error("collie_schedule_create: %s", bad);
        if (out)
            *out = NULL;
        return COLLIE_ERR_INVALID_ARG;
    }
    struct one_peer o = {.kind = kind, .size = size, .mass = malloc((size_t)size * sizeof(double))};
    if (!o.mass) {
        *out = NULL;
        collie__api_error("collie_schedule_create: no memory for %d ranks", size);
        return COLLIE_ERR_NOMEM;
    }
    for (int i = 0; i < size; i++)
        o.mass[i] = 1;
    collie_status st = collie__schedule_build("collie_schedule_create", size, period_of(kind, size),
                                              one_peer_step, &o, out);
    free(o.mass);
    return st;
}

/* A static topology as a schedule of one step; takes t. */
static collie_status single(collie_topology *t, collie_schedule **out)
{
    collie_schedule *s = calloc(1, sizeof *s);
    collie_topology **steps = calloc(1, sizeof *steps);
    if (!s || !steps) {
        free(s), free(steps);
        collie_topology_free(t);
        collie__api_error("collie_schedule_from_name: no memory");
        return COLLIE_ERR_NOMEM;
    }
    steps[0] = t;
    *s = (collie_schedule){.period = 1, .steps = steps};
    *out = s;
    return COLLIE_OK;
}

static const struct {
    const char *name;
    collie_topology_kind kind;
    int param;
} static_names[] = {
    {"sym-exp2", COLLIE_TOPO_SYMMETRIC_EXPONENTIAL, 2},
    {"ring", COLLIE_TOPO_RING, 0},
    {"ring1", COLLIE_TOPO_RING, 1},
    {"mesh", COLLIE_TOPO_MESH, 0},
    {"star", COLLIE_TOPO_STAR, 0},
    {"full", COLLIE_TOPO_FULL, 0},
};

collie_status collie_schedule_from_name(const char *name, int size, collie_schedule **out)
{
    return collie_schedule_from_name_hosts(name, size, NULL, out);
}

/* All ranks on host 0: what the host-aware names mean without a host table. */
static int *one_host(int size) { return size > 0 ? calloc((size_t)size, sizeof(int)) : NULL; }

/* A host-aware schedule by name, over host_of or one host. */
static collie_status hosts_by_name(collie_host_schedule_kind kind, int size, const int *host_of,
                                   collie_schedule **out)
{
    int *alone = host_of ? NULL : one_host(size);
    if (!host_of && !alone) {
        collie__api_error("collie_schedule_from_name: no memory (or size %d < 1)", size);
        return size < 1 ? COLLIE_ERR_INVALID_ARG : COLLIE_ERR_NOMEM;
    }
    collie_status st = collie_schedule_create_hosts(kind, size, host_of ? host_of : alone, out);
    free(alone);
    return st;
}

collie_status collie_schedule_from_name_hosts(const char *name, int size, const int *host_of,
                                              collie_schedule **out)
{
    if (!out || !name) {
        collie__api_error("collie_schedule_from_name: %s is NULL", out ? "name" : "sched");
        return COLLIE_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (!strcmp(name, "inner-outer-ring"))
        return hosts_by_name(COLLIE_SCHED_INNER_OUTER_RING, size, host_of, out);
    if (!strcmp(name, "inner-outer-exp2"))
        return hosts_by_name(COLLIE_SCHED_INNER_OUTER_EXPONENTIAL, size, host_of, out);
    if (!strcmp(name, "onepeer-exp2"))
        return collie_schedule_create(COLLIE_SCHED_ONE_PEER_EXPONENTIAL, size, 0, out);
    if (!strcmp(name, "onepeer-exact"))
        return collie_schedule_create(COLLIE_SCHED_ONE_PEER_EXACT, size, 0, out);
    collie_topology_kind kind = COLLIE_TOPO_EXPONENTIAL;
    int param = -1, end = 0;
    if (sscanf(name, "exp%d%n", &param, &end) == 1 && !name[end] && param >= 2)
        kind = COLLIE_TOPO_EXPONENTIAL;
    for (size_t k = 0; param < 0 && k < sizeof static_names / sizeof *static_names; k++)
        if (!strcmp(name, static_names[k].name))
            kind = static_names[k].kind, param = static_names[k].param;
    if (param < 0) {
        collie__api_error("collie_schedule_from_name: no topology '%s' (known: exp2, exp3, ..., "
                          "sym-exp2, ring, ring1, mesh, star, full, onepeer-exp2, onepeer-exact, "
                          "inner-outer-ring, inner-outer-exp2)",
                          name);
        return COLLIE_ERR_INVALID_ARG;
    }
    collie_topology *t;
    collie_status st = collie_topology_create(kind, size, param, &t);
    return st == COLLIE_OK ? single(t, out) : st;
}
