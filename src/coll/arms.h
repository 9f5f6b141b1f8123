/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * arms.h - which of two algorithms runs a collective of one size, learned
 * by timing both where they run (arms.c; adaptive.c is its user).
 */
#ifndef COLLIE_COLL_ARMS_H
#define COLLIE_COLL_ARMS_H

#include <stdint.h>

#define COLLIE__ARM_SAMPLES 3    /* timings kept per arm: the fastest of them is its estimate */
#define COLLIE__ARM_FIRST 1      /* timed calls of each arm before the faster runs */
#define COLLIE__ARM_GAP_MIN 16   /* calls between re-timings (two calls) of the slower, at first */
#define COLLIE__ARM_GAP_MAX 256  /* ... and at most, doubling while it stays slower */
#define COLLIE__ARM_TIME_EVERY 8 /* a settled winner is timed every this many of its calls */

/*
 * Two arms, 0 and 1, for one collective and size class: the last
 * timings of each, and the schedule that re-times the slower one.  All
 * zero is a fresh pair.  Kept by local rank 0 alone (adaptive.c).
 */
struct collie__arms {
    uint32_t ns[2][COLLIE__ARM_SAMPLES]; /* each arm's last timings, in nanoseconds */
    uint8_t kept[2];                     /* how many of them hold one */
    uint8_t at[2];                       /* where the next goes */
    uint8_t winner;                      /* the faster at the last call that ran it */
    uint16_t gap;                        /* calls between re-timings of the other (0: none yet) */
    uint16_t since;                      /* calls the winner ran since the other last did */
    uint8_t fresh;                       /* the winner's next calls timed, all of them */
    uint8_t fresh_call;                  /* the last call asked for was one of those */
    uint8_t untimed;                     /* the winner's calls since one was timed */
    uint8_t retiming;                    /* the loser runs until a timing of it is kept */
    uint8_t ran;                         /* 1 + the arm the last call ran (0: none yet) */
};

/*
 * The arm the next call runs: at first each until it holds
 * COLLIE__ARM_FIRST timings, arm 0's calls then arm 1's, back to back;
 * then the faster by its fastest kept timing, except that every
 * `gap` calls the slower runs until one of its calls is timed, gap
 * doubling from COLLIE__ARM_GAP_MIN to COLLIE__ARM_GAP_MAX while the
 * winner holds and starting over when it changes.  *timed says whether the
 * call is to be timed (and recorded): never a call that follows the other
 * arm's (it pays for the caches that arm left: arms.c), else every call
 * but a settled winner's, whose first COLLIE__ARM_SAMPLES calls after it
 * wins are timed and then one in COLLIE__ARM_TIME_EVERY.  A timing costs
 * its user a closing sync (adaptive.c), which is why not every call has
 * one.  Updates the schedule.
 */
int collie__arms_next(struct collie__arms *a, int *timed);
/*
 * After collie__arms_next() chose `arm` and said whether the call is
 * timed: how many of the calls that follow may run it too without asking,
 * at most `most`, counted as its calls (0: the next call asks).  Only a
 * settled winner's timed call is granted, up to the next re-timing of the
 * loser; a winner's call that asks after a grant, or after an untimed call
 * that could have been granted, is timed.  So the winner is timed at least
 * once between re-timings and refreshes its estimate as before.  Updates
 * the schedule.
 */
uint32_t collie__arms_batch(struct collie__arms *a, int arm, int timed, uint32_t most);
/* Keeps a timing of `arm` (0 or 1), replacing its oldest beyond COLLIE__ARM_SAMPLES. */
void collie__arms_record(struct collie__arms *a, int arm, uint64_t ns);
/* arm's estimate in nanoseconds, the fastest of its kept timings; UINT32_MAX while none. */
uint32_t collie__arms_estimate(const struct collie__arms *a, int arm);

#endif
