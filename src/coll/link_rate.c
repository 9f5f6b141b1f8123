/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_rate.c - the bandwidth probe's decisions (link_rate.h), apart from
 * its transfers so that they can be tested on series recorded where they
 * went wrong (tests/test_link_rate.c).  Why a series that dips goes again:
 * link_probe.c.
 */
#include "link_rate.h"

#define QUARTER (COLLIE__RATE_TIMED / 4)

void collie__rate_start(struct collie__rate *r, uint64_t rtt_ns)
{
    *r = (struct collie__rate){.size = COLLIE__RATE_FIRST_BYTES, .rtt_ns = rtt_ns};
}

double collie__rate_dip(const uint64_t timed[COLLIE__RATE_TIMED])
{
    uint64_t median = timed[COLLIE__RATE_TIMED / 2];
    return median ? (double)(median - timed[QUARTER]) / (double)median : 0;
}

void collie__rate_record(struct collie__rate *r, const uint64_t timed[COLLIE__RATE_TIMED])
{
    uint64_t median = timed[COLLIE__RATE_TIMED / 2];
    if (median < COLLIE__RATE_ENOUGH_NS && r->size < COLLIE__RATE_LAST_BYTES) {
        r->size *= 2;
        r->tries = 0;
        return;
    }
    if (!r->tries++ || median < r->best_ns)
        r->best_ns = median;
    if (collie__rate_dip(timed) > COLLIE__RATE_STEADY && r->tries < COLLIE__RATE_SERIES)
        return; /* the same size again */
    r->beta =
        r->best_ns > r->rtt_ns ? (double)r->size / ((double)(r->best_ns - r->rtt_ns) * 1e-9) : 0;
    r->size = 0;
}
