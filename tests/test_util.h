/* SPDX-License-Identifier: BSD-3-Clause */
/* test_util.h - shared helpers of the multi-rank tests: init, checks, values. */
#ifndef COLLIE_TEST_UTIL_H
#define COLLIE_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collie.h"

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_OK(comm, call)                                                                       \
    do {                                                                                           \
        collie_status st_ = (call);                                                                \
        CHECK(st_ == COLLIE_OK, "%s: %s", collie_strerror(st_), collie_last_error(comm));          \
    } while (0)

static inline collie_comm *test_init(void)
{
    collie_comm *comm = NULL;
    collie_status st = collie_init(&comm);
    CHECK(st == COLLIE_OK, "collie_init: %s: %s", collie_strerror(st), collie_last_error(NULL));
    return comm;
}

static inline double test_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * A wall-clock bound of the suite: `seconds` times COLLIE_TEST_TIME_MULTIPLIER
 * (tests/CMakeLists.txt sets it: 1 in the release build, more under the
 * sanitizers), as UCX's test_time_multiplier().  Every "within N s" of a
 * test goes through it, and so does every wait that gives a peer time to
 * pass such a bound.
 */
static inline double test_time(double seconds)
{
    const char *m = getenv("COLLIE_TEST_TIME_MULTIPLIER");
    double k = m ? atof(m) : 1;
    return seconds * (k >= 1 ? k : 1);
}

/* Sleeps `seconds` (not scaled: pass test_time(...) where it should be). */
static inline void test_sleep(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static inline size_t test_dtype_size(collie_dtype t)
{
    static const size_t sizes[] = {4, 8, 2, 2, 1, 1, 4, 8};
    return sizes[t];
}

static inline const char *test_dtype_name(collie_dtype t)
{
    static const char *const names[] = {"float32", "float64", "float16", "bfloat16",
                                        "int8",    "uint8",   "int32",   "int64"};
    return names[t];
}

/* Writes v, exactly representable in t, as element i of buf. */
static inline void test_put(collie_dtype t, void *buf, size_t i, double v)
{
    switch (t) {
    case COLLIE_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case COLLIE_FLOAT64: ((double *)buf)[i] = v; break;
    case COLLIE_FLOAT16: {
        _Float16 h = (_Float16)v;
        memcpy((char *)buf + 2 * i, &h, 2);
        break;
    }
    case COLLIE_BFLOAT16: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t b = (uint16_t)(u >> 16); /* exact: v has no low mantissa bits */
        memcpy((char *)buf + 2 * i, &b, 2);
        break;
    }
    case COLLIE_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case COLLIE_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case COLLIE_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case COLLIE_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    }
}

/* Every kind of topology the neighbour tests run over, for size ranks. */
static const struct {
    collie_topology_kind kind;
    int param;
    const char *name;
} test_topologies[] = {
    {COLLIE_TOPO_EXPONENTIAL, 2, "exponential-2"},
    {COLLIE_TOPO_EXPONENTIAL, 3, "exponential-3"},
    {COLLIE_TOPO_SYMMETRIC_EXPONENTIAL, 2, "symmetric exponential-2"},
    {COLLIE_TOPO_RING, 0, "ring"},
    {COLLIE_TOPO_RING, 1, "one-way ring"},
    {COLLIE_TOPO_MESH, 0, "mesh"},
    {COLLIE_TOPO_STAR, 0, "star"},
    {COLLIE_TOPO_FULL, 0, "full"},
};
#define TEST_NTOPOLOGIES (sizeof test_topologies / sizeof *test_topologies)

#endif
