/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_link_rate.c - the bandwidth probe's decisions (src/coll/link_rate.c)
 * on series recorded on emulated hosts (tests/netns.sh, tc tbf, buckets of
 * 256 and 512 KB), their ranks stopped now and then as test_link_probe.sh does: a
 * quiet 1 Gbit/s link; the disturbed series that made the median of nine
 * read 0.072 GB/s; slow transfers alone; a disturbed series at 128 KB
 * that would end the doubling too early; a link that stays disturbed;
 * disturbed series then a slow one; 100 Mbit/s, whose
 * first series holds tbf's burst; a fast link, ended by the largest size.
 */
#include "coll/link_rate.h"
#include "test_util.h"

#define RTT_NS 20000 /* the fastest round trip of 8 bytes: 20 us */

/* ms[] in milliseconds, ascending, into a series in ns. */
static void series(uint64_t out[COLLIE__RATE_TIMED], const double ms[COLLIE__RATE_TIMED])
{
    for (int i = 0; i < COLLIE__RATE_TIMED; i++)
        out[i] = (uint64_t)(ms[i] * 1e6 + 0.5);
}

/* Records the series ms[] of r->size bytes, which must be `size`. */
static void record(struct collie__rate *r, uint64_t size, const double ms[COLLIE__RATE_TIMED])
{
    CHECK(r->size == size, "the probe sent %llu bytes where %llu were due",
          (unsigned long long)r->size, (unsigned long long)size);
    uint64_t timed[COLLIE__RATE_TIMED];
    series(timed, ms);
    collie__rate_record(r, timed);
}

/* The probe ended with a rate within [low, high] GB/s. */
static void expect_rate(const struct collie__rate *r, double low, double high, const char *what)
{
    CHECK(r->size == 0, "%s: the probe goes on with %llu bytes", what, (unsigned long long)r->size);
    CHECK(r->beta >= low * 1e9 && r->beta <= high * 1e9, "%s: %.4f GB/s, not %.4f-%.4f", what,
          r->beta * 1e-9, low, high);
}

/* A quiet 1 Gbit/s link's first two sizes (the 64 KB series holds tbf's burst). */
static const double quiet_64k[] = {0.05, 0.05, 0.06, 0.42, 0.54, 0.55, 0.55, 0.56, 0.56};
static const double quiet_128k[] = {1.00, 1.08, 1.08, 1.09, 1.09, 1.10, 1.10, 1.12, 1.12};
static const double quiet_256k[] = {2.15, 2.16, 2.19, 2.20, 2.21, 2.21, 2.26, 2.50, 2.85};

/* A fresh probe on a quiet 1 Gbit/s link, past 64 and 128 KB: its next series is 256 KB. */
static void up_to_256k(struct collie__rate *r)
{
    collie__rate_start(r, RTT_NS);
    record(r, 64 << 10, quiet_64k);
    record(r, 128 << 10, quiet_128k);
}

/* Past 64 and 128 KB, the 256 KB series ms[] ends the probe with a rate in [low, high] GB/s. */
static void last_series(const double ms[COLLIE__RATE_TIMED], double low, double high,
                        const char *what)
{
    struct collie__rate r;
    up_to_256k(&r);
    record(&r, 256 << 10, ms);
    expect_rate(&r, low, high, what);
}

int main(void)
{
    struct collie__rate r;

    /* quiet: 64, 128 and 256 KB, one series each; a 44 ms stop in the last changes nothing */
    last_series(quiet_256k, 0.118, 0.121, "a quiet 1 Gbit/s link");
    static const double stopped_once[] = {0.77, 1.66, 2.17, 2.19, 2.19, 2.21, 2.22, 2.25, 43.99};
    last_series(stopped_once, 0.119, 0.122, "one stop in the last series");

    /*
     * A stop, the burst after it, then slower transfers: the median of
     * this series read 0.072 GB/s.  It goes again, and the
     * steady series after it counts.
     */
    static const double after_stop[] = {0.27, 0.30, 0.31, 2.12, 3.69, 3.88, 3.94, 5.00, 47.28};
    uint64_t timed[COLLIE__RATE_TIMED];
    series(timed, after_stop);
    double dip = collie__rate_dip(timed);
    CHECK(dip > 0.91 && dip < 0.92, "a first quartile of 0.31 ms and median of 3.69 dip %.3f", dip);
    up_to_256k(&r);
    record(&r, 256 << 10, after_stop);
    CHECK(r.size == 256 << 10 && r.beta == 0, "a disturbed last series was taken");
    record(&r, 256 << 10, quiet_256k);
    expect_rate(&r, 0.118, 0.121, "a disturbed series, then a steady one");

    /*
     * Slow transfers alone (ranks that lost their CPU) leave the median and
     * the dip: the series counts at once.  Going again here, on a busy
     * machine, ran at one scheduler tick a transfer (4.0 ms) and read 0.064.
     */
    static const double slow_only[] = {1.95, 2.10, 2.19, 2.21, 2.24, 2.90, 3.67, 3.80, 4.11};
    last_series(slow_only, 0.117, 0.119, "slow transfers alone");

    /*
     * At 128 KB a disturbed series takes over 2 ms: it goes again, takes
     * 1.1 ms steadily, and the doubling goes on to 256 KB.
     */
    static const double slow_128k[] = {0.23, 0.25, 0.28, 1.05, 2.18, 2.60, 2.90, 3.40, 40.10};
    collie__rate_start(&r, RTT_NS);
    record(&r, 64 << 10, quiet_64k);
    record(&r, 128 << 10, slow_128k);
    CHECK(r.size == 128 << 10, "after a disturbed 128 KB series over 2 ms: %llu bytes next",
          (unsigned long long)r.size);
    record(&r, 128 << 10, quiet_128k);
    record(&r, 256 << 10, quiet_256k);
    expect_rate(&r, 0.118, 0.121, "a disturbed series that ended the doubling");

    /* disturbed four times: the fastest median of the four counts, and the probe ends */
    static const double wide[][COLLIE__RATE_TIMED] = {
        {0.30, 0.31, 1.61, 2.61, 2.76, 2.76, 3.14, 3.96, 4.69},  /* dip 0.42, counts */
        {0.34, 1.07, 1.34, 2.22, 3.64, 4.00, 4.00, 4.04, 49.54}, /* 0.63 */
        {0.36, 2.07, 2.20, 2.20, 3.99, 3.99, 4.02, 5.38, 46.59}, /* 0.45 */
        {0.27, 0.30, 0.31, 2.12, 3.69, 3.88, 3.94, 5.00, 47.28}, /* 0.92 */
    };
    up_to_256k(&r);
    for (int i = 0; i < COLLIE__RATE_SERIES; i++)
        record(&r, 256 << 10, wide[i]);
    expect_rate(&r, 0.2621 / (2.76 - 0.02) - 0.0005, 0.2621 / (2.76 - 0.02) + 0.0005,
                "four disturbed series");

    /*
     * Three series dipped by the burst after a 44 ms stop, right in their
     * median, then a steady one in a slow while (a busy machine): the fastest
     * median counts.  Taking the least dipped series read 0.098 GB/s.
     */
    static const double dipped_then_slow[][COLLIE__RATE_TIMED] = {
        {0.34, 1.07, 1.13, 2.19, 2.19, 2.19, 2.20, 2.20, 44.00}, /* dip 0.48 */
        {0.23, 0.78, 1.53, 2.17, 2.19, 2.20, 2.22, 2.22, 45.02}, /* 0.30 */
        {0.36, 0.57, 1.59, 2.14, 2.19, 2.20, 2.20, 2.24, 44.88}, /* 0.27 */
        {0.27, 0.40, 2.18, 2.21, 2.70, 3.79, 4.06, 4.10, 5.18},  /* 0.19: steady, the last */
    };
    up_to_256k(&r);
    for (int i = 0; i < 4; i++)
        record(&r, 256 << 10, dipped_then_slow[i]);
    expect_rate(&r, 0.120, 0.121, "dipped series, then a slow steady one");

    /*
     * 100 Mbit/s: the first 64 KB series holds tbf's burst (three of nine at
     * the veth's speed); it goes again, and the faster median of the two
     * counts (the burst's three do not reach the median).
     */
    static const double burst_100m[] = {0.06, 0.07, 0.67, 5.34, 5.35, 5.44, 5.59, 5.59, 5.75};
    static const double steady_100m[] = {5.40, 5.41, 5.45, 5.47, 5.48, 5.49, 5.50, 5.51, 5.52};
    collie__rate_start(&r, RTT_NS);
    record(&r, 64 << 10, burst_100m);
    CHECK(r.size == 64 << 10, "100 Mbit/s: the burst's series was taken");
    record(&r, 64 << 10, steady_100m);
    expect_rate(&r, 0.0122, 0.0124, "100 Mbit/s, 5.35 ms");

    /* a fast link: 8 MiB in under 2 ms ends the doubling */
    static const double fast[] = {0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03};
    static const double fast_8m[] = {1.50, 1.52, 1.55, 1.56, 1.57, 1.58, 1.60, 1.62, 1.70};
    collie__rate_start(&r, RTT_NS);
    for (uint64_t size = 64 << 10; size < COLLIE__RATE_LAST_BYTES; size *= 2)
        record(&r, size, fast);
    record(&r, COLLIE__RATE_LAST_BYTES, fast_8m);
    expect_rate(&r, 5.40, 5.45, "a fast link, 8 MiB in 1.57 ms");

    /* transfers no longer than a round trip: no rate (the model keeps its default) */
    static const double instant[] = {0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01};
    collie__rate_start(&r, RTT_NS);
    for (uint64_t size = 64 << 10; size <= COLLIE__RATE_LAST_BYTES; size *= 2)
        record(&r, size, instant);
    CHECK(r.size == 0 && r.beta == 0, "transfers under a round trip gave %.3f GB/s", r.beta * 1e-9);
    printf("link_rate: ok\n");
    return 0;
}
