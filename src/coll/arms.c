/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * arms.c - two algorithms for one collective and size, timed where they run,
 * and the one the next call should run.
 *
 * Why learn at all: on one host the choice between the window (twoshot,
 * staged) and single copies (direct) turns on rates the host changes under
 * the job.  A virtual machine's vCPUs move between cores that share a cache
 * and cores that do not (adaptive.c tells those two apart in the call), and
 * between them sits a middle state the probe cannot see, where the window
 * ran 1.2-1.6x faster than direct for the reductions at 64 KiB-4 MiB on 2
 * ranks while direct won by 1.5x in the near state.
 * A cross-memory read moved 7-19 GB/s on this machine on different days.
 * No fixed rate predicts that; the call's own time does.
 *
 * The policy is the simplest that stays right as the machine changes: an
 * estimate per arm that one preemption cannot spoil (the fastest of its last
 * three timings: a rank that loses the CPU only ever runs slower), and a
 * loser re-timed on a doubling gap, so that a change of state is noticed
 * within a few hundred calls at worst and costs at most two of the loser's
 * calls in COLLIE__ARM_GAP_MAX once settled.  A stale fast timing of the
 * loser is corrected by running it: it then runs every call, its timings
 * refresh within three, and the winner returns if it was one.
 *
 * Each arm is timed once before the faster runs, and the winner's next
 * calls fill its estimate.  Three timings each first (8 calls with the
 * untimed ones after each switch) were the calls a short job measured:
 * IMB-MPI1 makes 6 calls of 16 MiB, and with libcollie-mpi.so preloaded
 * at 2 ranks its two timed ones were direct's first, 5.7-5.8 ms, where
 * the window, the winner, took 2.7.  A first timing that was slow (the
 * size's first calls fault in the user's pages) is redone at the loser's
 * first re-timing, COLLIE__ARM_GAP_MIN calls on.
 *
 * Only calls that follow a call of the same arm are timed.  The first call
 * after a switch finds the caches as the other arm left them: at 4 ranks
 * on 2 cores, allreduce of 256 KiB, direct took 98 us after twoshot and 58
 * after itself, twoshot 83 after direct and 65-70 after itself.  Timing
 * the loser alone between the winner's calls kept it at its cold time, and
 * the first arm to run back to back won for good, whichever was faster.
 */
#include "arms.h"

uint32_t collie__arms_estimate(const struct collie__arms *a, int arm)
{
    uint32_t best = UINT32_MAX;
    for (int k = 0; k < a->kept[arm]; k++)
        best = a->ns[arm][k] < best ? a->ns[arm][k] : best;
    return best;
}

/* The arm the next call runs, before the switch rule of collie__arms_next(). */
static int pick(struct collie__arms *a, int *timed)
{
    *timed = 1;
    if (a->kept[0] < COLLIE__ARM_FIRST || a->kept[1] < COLLIE__ARM_FIRST)
        return a->kept[0] < COLLIE__ARM_FIRST ? 0 : 1; /* back to back: warm timings */
    int winner = collie__arms_estimate(a, 1) < collie__arms_estimate(a, 0);
    if (!a->gap || winner != a->winner) {
        a->winner = (uint8_t)winner;
        a->gap = COLLIE__ARM_GAP_MIN;
        a->since = 0;
        a->retiming = 0;
        a->fresh = COLLIE__ARM_SAMPLES; /* a stale fast estimate is found out within these */
    }
    if (a->retiming)
        return !winner; /* until collie__arms_record() keeps its timing */
    if (a->since >= a->gap) {
        a->since = 0;
        a->gap = a->gap < COLLIE__ARM_GAP_MAX / 2 ? (uint16_t)(2 * a->gap) : COLLIE__ARM_GAP_MAX;
        a->retiming = 1;
        return !winner;
    }
    a->since++;
    a->fresh_call = a->fresh != 0;
    if (a->fresh) {
        a->fresh--;
        return winner;
    }
    a->untimed = (uint8_t)((a->untimed + 1) % COLLIE__ARM_TIME_EVERY);
    *timed = a->untimed == 0;
    return winner;
}

int collie__arms_next(struct collie__arms *a, int *timed)
{
    int arm = pick(a, timed);
    if (a->ran != arm + 1) { /* a switch: this call warms the arm up, and is not timed */
        a->ran = (uint8_t)(arm + 1);
        *timed = 0;
    }
    return arm;
}

uint32_t collie__arms_batch(struct collie__arms *a, int arm, int timed, uint32_t most)
{
    if (!most || arm != a->winner || !a->gap || a->fresh_call || a->retiming || a->since >= a->gap)
        return 0;
    /* the winner's next call that asks is timed, and the grant comes after a timing */
    a->untimed = COLLIE__ARM_TIME_EVERY - 1;
    if (!timed)
        return 0;
    uint32_t n = (uint32_t)(a->gap - a->since);
    n = n < most ? n : most;
    a->since = (uint16_t)(a->since + n);
    return n;
}

void collie__arms_record(struct collie__arms *a, int arm, uint64_t ns)
{
    a->ns[arm][a->at[arm]] = ns < UINT32_MAX ? (uint32_t)ns : UINT32_MAX - 1;
    a->at[arm] = (uint8_t)((a->at[arm] + 1) % COLLIE__ARM_SAMPLES);
    if (a->kept[arm] < COLLIE__ARM_SAMPLES)
        a->kept[arm]++;
    if (arm != a->winner)
        a->retiming = 0;
}
