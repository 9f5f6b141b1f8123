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

#endif
