/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_rate.h - the bandwidth of a link from series of timed transfers:
 * which size the probe sends next and when it has its rate (link_rate.c;
 * link_probe.c sends the transfers and is its user).
 */
#ifndef COLLIE_COLL_LINK_RATE_H
#define COLLIE_COLL_LINK_RATE_H

#include <stdint.h>

#define COLLIE__RATE_FIRST_BYTES (64u << 10) /* the first series' transfers */
#define COLLIE__RATE_LAST_BYTES (8u << 20)   /* ... and the largest */
#define COLLIE__RATE_ENOUGH_NS 2000000ull    /* a median this long ends the doubling */
#define COLLIE__RATE_TIMED 9                 /* timed transfers in a series */
#define COLLIE__RATE_STEADY 0.25             /* a steady series' dip: see collie__rate_dip() */
#define COLLIE__RATE_SERIES 4                /* series of the last size at most */

/*
 * The probe's state, kept by the measuring rank.  collie__rate_start()
 * begins it; then each series of `size` bytes goes to collie__rate_record()
 * until size is 0, when beta holds the rate.
 */
struct collie__rate {
    uint64_t size;    /* the transfers of the next series; 0: done */
    uint64_t rtt_ns;  /* the fastest round trip of 8 bytes, subtracted */
    uint64_t best_ns; /* the fastest median of this size's series */
    int tries;        /* series of this size that could have been the last */
    double beta;      /* bytes per second, once size is 0; 0: none measurable */
};

/* A fresh probe whose round trips of 8 bytes took rtt_ns at fastest. */
void collie__rate_start(struct collie__rate *r, uint64_t rtt_ns);

/*
 * A series of r->size bytes: its COLLIE__RATE_TIMED times in ns, sorted
 * ascending.  A median under COLLIE__RATE_ENOUGH_NS below the last size
 * doubles the size.  Otherwise this size is the last if the series is
 * steady (its dip at most COLLIE__RATE_STEADY) or COLLIE__RATE_SERIES have
 * gone; else it goes again.  The last sets size to 0 and beta to bytes /
 * (the fastest median of this size's series - rtt_ns).
 */
void collie__rate_record(struct collie__rate *r, const uint64_t timed[COLLIE__RATE_TIMED]);

/*
 * A sorted series' dip: how far its first quartile lies below its median,
 * over the median.  Transfers a refilled bucket sped make it deep; slow
 * ones (a rank that lost its CPU) do not move it.
 */
double collie__rate_dip(const uint64_t timed[COLLIE__RATE_TIMED]);

#endif
