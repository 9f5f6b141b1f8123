/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_registry.c - the algorithms' registry (src/coll/registry.c): every
 * descriptor is whole, numbers and names agree one to one and match the
 * numbers earlier builds put on the wire, lookups by number and by name
 * find each entry, and a list that breaks a rule is refused with a
 * message that names the entry.
 */
#include <math.h>

#include "coll/algo.h"
#include "coll/cost.h"
#include "test_util.h"

/*
 * The numbers ranks compare in every call's descriptor, as released: a
 * job whose ranks run different builds relies on them.  Append, never edit.
 */
static const struct {
    const char *name;
    int wire;
} released[] = {{"oneshot", 1},      {"twoshot", 2},      {"ring", 3},           {"rd", 4},
                {"rabenseifner", 5}, {"hierarchical", 6}, {"staged", 7},         {"tree", 8},
                {"pairwise", 9},     {"sync", 10},        {"dissemination", 11}, {"neighbor", 12},
                {"direct", 13},      {"adaptive", 14}};
#define N_RELEASED (int)(sizeof released / sizeof released[0])

static void registry_whole(void)
{
    CHECK(!strcmp(collie__algo_name(3), "algo(3)"), "named before the namer: %s",
          collie__algo_name(3));
    collie__algo_set_namer(collie__algo_wire_name); /* as collie__select_init does */
    const char *problem = collie__algo_registry_check();
    CHECK(!problem, "the registry: %s", problem);
    for (int i = 0; i < collie__algo_count; i++) {
        const struct collie__algo *a = collie__algos[i];
        int known = 0;
        for (int k = 0; k < N_RELEASED; k++)
            if (!strcmp(released[k].name, a->name)) {
                CHECK(a->wire == released[k].wire, "%s:%s is number %d, released as %d",
                      collie__coll_name(a->coll), a->name, a->wire, released[k].wire);
                known = 1;
            }
        CHECK(known || a->wire > 14, "%s is new but reuses number %d", a->name, a->wire);
        CHECK(collie__algo_of_wire(a->coll, a->wire) == a, "%s:%s not found by its number",
              collie__coll_name(a->coll), a->name);
        CHECK(collie__algo_find(a->coll, a->name, strlen(a->name)) == a,
              "%s:%s not found by its name", collie__coll_name(a->coll), a->name);
        CHECK(!strcmp(collie__algo_name(a->wire), a->name), "number %d prints as %s, not %s",
              a->wire, collie__algo_name(a->wire), a->name);
    }
    for (int k = 0; k < N_RELEASED; k++)
        CHECK(collie__algo_wire_name(released[k].wire), "released %s (%d) is gone",
              released[k].name, released[k].wire);
    CHECK(!strcmp(collie__algo_name(COLLIE__ALGO_NONE), "none"), "number 0");
    CHECK(!strcmp(collie__algo_name(31), "algo(31)"), "a number no algorithm has: %s",
          collie__algo_name(31));
    CHECK(!collie__algo_of_wire(COLLIE_COLL_ALLREDUCE, COLLIE__ALGO_WIRE_LIMIT), "out of range");
    CHECK(!collie__algo_find(COLLIE_COLL_BARRIER, "ring", 4), "barrier has no ring");
}

/* Every collective an algorithm serves runs on one host and across hosts, at every size. */
static void every_collective_served(void)
{
    struct collie__machine one = {.ranks = 4, .hosts = 1, .ranks_per_host = 4, .cores = 2},
                           many = {.ranks = 8, .hosts = 4, .ranks_per_host = 2, .cores = 2};
    collie__machine_default_rates(&one);
    collie__machine_default_rates(&many);
    one.slot_bytes = many.slot_bytes = 256 << 10;
    one.ring_bytes = many.ring_bytes = 64 << 10;
    for (int c = 0; c < COLLIE_COLL_COUNT; c++) {
        int any = 0;
        for (int i = 0; i < collie__algo_count; i++)
            any |= (int)collie__algos[i]->coll == c;
        if (!any)
            continue;
        for (size_t bytes = 4; bytes <= (64u << 20); bytes *= 16)
            for (int h = 0; h < 2; h++) {
                const struct collie__machine *m = h ? &many : &one;
                const struct collie__algo *a = collie__select_on(m, c, bytes);
                CHECK(a && (int)a->coll == c, "%s of %zu bytes on %d hosts: no algorithm",
                      collie__coll_name((enum collie__coll)c), bytes, m->hosts);
                double t = a->cost(m, (double)bytes, 1);
                CHECK(isfinite(t) && t > 0, "%s:%s of %zu bytes on %d hosts costs %g",
                      collie__coll_name((enum collie__coll)c), a->name, bytes, m->hosts, t);
            }
    }
}

static collie_status run_nothing(collie_comm *comm, const struct collie__op *op)
{
    (void)comm;
    (void)op;
    return COLLIE_OK;
}

static double free_of_cost(const struct collie__machine *m, double bytes, int degree)
{
    (void)m;
    (void)bytes;
    (void)degree;
    return 0;
}

#define ALGO(n, w, c)                                                                              \
    {                                                                                              \
        .name = n, .wire = w, .coll = c, .run = run_nothing, .cost = free_of_cost                  \
    }

static void expect_refused(const struct collie__algo *a, const struct collie__algo *b,
                           const char *want)
{
    const struct collie__algo *list[] = {a, b};
    char err[256] = "";
    CHECK(collie__algo_check(list, 2, err, sizeof err) == -1, "accepted (want '%s')", want);
    CHECK(strstr(err, want), "'%s' does not say '%s'", err, want);
}

/* A list that breaks a rule is refused, naming the rule and the entry. */
static void bad_lists_refused(void)
{
    const struct collie__algo ring = ALGO("ring", 3, COLLIE_COLL_ALLREDUCE),
                              ring_reduce = ALGO("ring", 3, COLLIE_COLL_REDUCE),
                              other_name = ALGO("loop", 3, COLLIE_COLL_REDUCE),
                              other_number = ALGO("ring", 4, COLLIE_COLL_REDUCE),
                              zero = ALGO("zero", 0, COLLIE_COLL_REDUCE),
                              high = ALGO("high", COLLIE__ALGO_WIRE_LIMIT, COLLIE_COLL_REDUCE),
                              twice = ALGO("ring", 3, COLLIE_COLL_ALLREDUCE);
    struct collie__algo priceless = ALGO("tree", 8, COLLIE_COLL_BROADCAST);
    priceless.cost = NULL;
    const struct collie__algo *fine[] = {&ring, &ring_reduce};
    char err[256] = "";
    CHECK(collie__algo_check(fine, 2, err, sizeof err) == 0, "a good list refused: %s", err);
    expect_refused(&ring, &other_name, "number 3 names both ring and loop");
    expect_refused(&ring, &other_number, "ring has numbers 3 and 4");
    expect_refused(&ring, &zero, "reduce:zero has number 0, outside 1..31");
    expect_refused(&ring, &high, "reduce:high has number 32");
    expect_refused(&ring, &twice, "allreduce lists ring twice");
    expect_refused(&ring, &priceless, "has no cost");
}

int main(void)
{
    registry_whole();
    every_collective_served();
    bad_lists_refused();
    printf("registry: %d algorithms\n", collie__algo_count);
    return 0;
}
