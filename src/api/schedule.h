/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * schedule.h - what the schedules' builders share (schedule.c: the one-peer
 * schedules and the names; schedule_hosts.c: the host-aware ones).
 */
#ifndef COLLIE_SCHEDULE_H
#define COLLIE_SCHEDULE_H

#include <stddef.h>

#include "collie.h"

/* The edges of one step under construction. */
struct collie__step_edges {
    int *from, *to;
    double *w;
    size_t n;
};

/* Appends the edge from -> to with weight w (W[to][from]). */
static inline void collie__edge(struct collie__step_edges *e, int from, int to, double w)
{
    e->from[e->n] = from, e->to[e->n] = to, e->w[e->n] = w;
    e->n++;
}

/* floor(log2 n) for n >= 1, in integers. */
static inline int collie__log2_floor(int n)
{
    int p = 0;
    while ((2 << p) <= n)
        p++;
    return p;
}

/* Writes step t's edges (at most 2 per rank), in order t = 0, 1, ... */
typedef void (*collie__step_fn)(void *ctx, struct collie__step_edges *e, int t);

/*
 * Makes a schedule of period steps over size ranks from step(ctx, ...);
 * `who` names the public call in errors.
 */
collie_status collie__schedule_build(const char *who, int size, int period, collie__step_fn step,
                                     void *ctx, collie_schedule **out);

#endif
