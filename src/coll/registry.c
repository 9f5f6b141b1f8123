/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * registry.c - every algorithm of every collective, one line each.  An
 * algorithm's file defines its descriptor (algo.h); the selector, the cost
 * model, `collie info`, `collie sim` and the numbers ranks compare read
 * them here.  The order is `collie info`'s, and the selector's among equal
 * prices: the first listed wins.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"

#define COLLIE__ALGOS(X)                                                                           \
    X(allreduce_oneshot)                                                                           \
    X(allreduce_twoshot)                                                                           \
    X(allreduce_direct)                                                                            \
    X(allreduce_adaptive)                                                                          \
    X(allreduce_ring)                                                                              \
    X(allreduce_rd)                                                                                \
    X(allreduce_rabenseifner)                                                                      \
    X(allreduce_hierarchical)                                                                      \
    X(reduce_oneshot)                                                                              \
    X(reduce_twoshot)                                                                              \
    X(reduce_direct)                                                                               \
    X(reduce_adaptive)                                                                             \
    X(reduce_ring)                                                                                 \
    X(reduce_rd)                                                                                   \
    X(reduce_tree)                                                                                 \
    X(broadcast_staged)                                                                            \
    X(broadcast_direct)                                                                            \
    X(broadcast_adaptive)                                                                          \
    X(broadcast_tree)                                                                              \
    X(allgather_staged)                                                                            \
    X(allgather_direct)                                                                            \
    X(allgather_adaptive)                                                                          \
    X(allgather_ring)                                                                              \
    X(reduce_scatter_staged)                                                                       \
    X(reduce_scatter_direct)                                                                       \
    X(reduce_scatter_adaptive)                                                                     \
    X(reduce_scatter_ring)                                                                         \
    X(reduce_scatter_halving)                                                                      \
    X(alltoall_staged)                                                                             \
    X(alltoall_direct)                                                                             \
    X(alltoall_adaptive)                                                                           \
    X(alltoall_pairwise)                                                                           \
    X(barrier_sync)                                                                                \
    X(barrier_dissemination)                                                                       \
    X(neighbor_allreduce)                                                                          \
    X(neighbor_allgather)                                                                          \
    X(hierarchical_neighbor_allreduce)

#define DECLARE(entry) extern const struct collie__algo collie__algo_##entry;
COLLIE__ALGOS(DECLARE)
#undef DECLARE

#define ENTRY(entry) &collie__algo_##entry,
const struct collie__algo *const collie__algos[] = {COLLIE__ALGOS(ENTRY)};
#undef ENTRY
const int collie__algo_count = (int)(sizeof collie__algos / sizeof collie__algos[0]);

int collie__algo_check(const struct collie__algo *const *list, int n, char *err, size_t errlen)
{
    const char *names[COLLIE__ALGO_WIRE_LIMIT] = {0};
    for (int i = 0; i < n; i++) {
        const struct collie__algo *a = list[i];
        const char *coll = collie__coll_name(a->coll);
        if (!a->name || !a->run || !a->cost) {
            snprintf(err, errlen, "entry %d of %s has no %s", i, coll,
                     !a->name  ? "name"
                     : !a->run ? "run"
                               : "cost");
            return -1;
        }
        if (a->wire == COLLIE__ALGO_NONE || a->wire >= COLLIE__ALGO_WIRE_LIMIT) {
            snprintf(err, errlen, "%s:%s has number %d, outside 1..%d", coll, a->name, a->wire,
                     COLLIE__ALGO_WIRE_LIMIT - 1);
            return -1;
        }
        if (names[a->wire] && strcmp(names[a->wire], a->name)) {
            snprintf(err, errlen, "number %d names both %s and %s", a->wire, names[a->wire],
                     a->name);
            return -1;
        }
        names[a->wire] = a->name;
        for (int j = 0; j < i; j++) {
            const struct collie__algo *b = list[j];
            if (!strcmp(b->name, a->name) && b->wire != a->wire) {
                snprintf(err, errlen, "%s has numbers %d and %d", a->name, b->wire, a->wire);
                return -1;
            }
            if (b->coll == a->coll && !strcmp(b->name, a->name)) {
                snprintf(err, errlen, "%s lists %s twice", coll, a->name);
                return -1;
            }
        }
    }
    return 0;
}

/* The registry by collective and number, and its check's verdict: made once. */
static const struct collie__algo *by_wire[COLLIE_COLL_COUNT][COLLIE__ALGO_WIRE_LIMIT];
static const char *by_name[COLLIE__ALGO_WIRE_LIMIT];
static char problem[256];
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static void build_index(void)
{
    if (collie__algo_check(collie__algos, collie__algo_count, problem, sizeof problem))
        return;
    for (int i = 0; i < collie__algo_count; i++) {
        const struct collie__algo *a = collie__algos[i];
        by_name[a->wire] = a->name;
        by_wire[a->coll][a->wire] = a;
    }
}

const char *collie__algo_registry_check(void)
{
    pthread_once(&index_once, build_index);
    return problem[0] ? problem : NULL;
}

const struct collie__algo *collie__algo_of_wire(int coll, int wire)
{
    pthread_once(&index_once, build_index);
    if (coll < 0 || coll >= COLLIE_COLL_COUNT || wire < 0 || wire >= COLLIE__ALGO_WIRE_LIMIT)
        return NULL;
    return by_wire[coll][wire];
}

const char *collie__algo_wire_name(int wire)
{
    pthread_once(&index_once, build_index);
    return wire >= 0 && wire < COLLIE__ALGO_WIRE_LIMIT ? by_name[wire] : NULL;
}

const struct collie__algo *collie__algo_find(int coll, const char *name, size_t len)
{
    for (int i = 0; i < collie__algo_count; i++) {
        const struct collie__algo *a = collie__algos[i];
        if ((int)a->coll == coll && strlen(a->name) == len && !strncmp(a->name, name, len))
            return a;
    }
    return NULL;
}
