/* SPDX-License-Identifier: BSD-3-Clause */
/* clock.h - the one clock every deadline and measurement in libcollie reads. */
#ifndef COLLIE_CLOCK_H
#define COLLIE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic nanoseconds: deadlines never jump with the wall clock. */
static inline uint64_t collie__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The same clock in seconds, for reports. */
static inline double collie__now_s(void) { return (double)collie__now_ns() * 1e-9; }

/*
 * A poll() timeout that wakes no earlier than deadline_ns: the milliseconds
 * left from now, rounded up, at most cap_ms; 0 once the deadline has passed.
 */
static inline int collie__poll_ms(uint64_t now, uint64_t deadline_ns, int cap_ms)
{
    if (now >= deadline_ns)
        return 0;
    uint64_t ms = (deadline_ns - now + 999999) / 1000000;
    return ms < (uint64_t)cap_ms ? (int)ms : cap_ms;
}

#endif
