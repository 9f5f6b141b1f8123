/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_arms.c - the learner behind adaptive (src/coll/arms.c) on timings
 * made up to the nanosecond: each arm three times first, the faster after, the
 * slower re-timed on a doubling gap, a settled winner timed one call in
 * COLLIE__ARM_TIME_EVERY, a preempted call that changes nothing, and a
 * change of state followed both ways.
 */
#include "coll/arms.h"
#include "test_util.h"

/* How many of the last run()'s calls of each arm were timed. */
static int timed_runs[2];

/*
 * Runs `calls` calls where arm k takes ns[k], recording those the learner
 * asks to time, as adaptive.c does; counts the runs of each in runs[].
 */
static void run(struct collie__arms *a, int calls, const unsigned ns[2], int runs[2])
{
    runs[0] = runs[1] = timed_runs[0] = timed_runs[1] = 0;
    for (int c = 0; c < calls; c++) {
        int timed;
        int arm = collie__arms_next(a, &timed);
        runs[arm]++;
        if (timed) {
            timed_runs[arm]++;
            collie__arms_record(a, arm, ns[arm]);
        }
    }
}

int main(void)
{
    struct collie__arms a = {0};
    /*
     * Each arm three times, alternating, before any choice: arm 0's first
     * two calls are cold (1000 ns, slower than arm 1's 100), its third warm.
     */
    int first[2 * COLLIE__ARM_SAMPLES];
    const unsigned warming[2 * COLLIE__ARM_SAMPLES] = {1000, 100, 1000, 100, 50, 100};
    for (int c = 0; c < 2 * COLLIE__ARM_SAMPLES; c++) {
        int timed;
        first[c] = collie__arms_next(&a, &timed);
        CHECK(timed, "call %d of the first six not timed", c);
        CHECK(first[c] == c % 2, "call %d of the first six ran arm %d, not %d", c, first[c], c % 2);
        collie__arms_record(&a, first[c], warming[c]);
    }
    CHECK(collie__arms_estimate(&a, 0) == 50 && collie__arms_estimate(&a, 1) == 100,
          "estimates %u and %u after three timings each", collie__arms_estimate(&a, 0),
          collie__arms_estimate(&a, 1));
    int timed;
    CHECK(collie__arms_next(&a, &timed) == 0, "the warm arm 0 did not win");

    /* Then arm 0 slows to 300 (its timings replaced): arm 1 wins, its schedule starts over. */
    for (int k = 0; k < COLLIE__ARM_SAMPLES; k++)
        collie__arms_record(&a, 0, 300);

    /*
     * Arm 1 faster: the gap between re-timings of arm 0 runs 8, 16, 32,
     * 64, 128, 256, 256, ...: in 1000 calls arm 0 runs at calls 9, 26, 59,
     * 124, 253, 510 and 767 of them.
     */
    int runs[2];
    const unsigned one_faster[2] = {300, 100};
    run(&a, 1000, one_faster, runs);
    CHECK(runs[0] == 7 && runs[1] == 993, "the slower arm ran %d times in 1000 calls, not 7",
          runs[0]);
    /* every call of the slower timed; the winner's first three, then one in eight */
    CHECK(timed_runs[0] == 7 && timed_runs[1] == 3 + (993 - 3) / COLLIE__ARM_TIME_EVERY,
          "timed %d of the slower arm's 7 calls and %d of the winner's 993", timed_runs[0],
          timed_runs[1]);

    /* One preempted call of the winner (4 ms) does not move the choice. */
    collie__arms_record(&a, 1, 4000000);
    const unsigned still[2] = {300, 100};
    run(&a, 100, still, runs);
    CHECK(runs[1] >= 99, "a preempted call moved %d calls to the slower arm", runs[0]);

    /*
     * The state changes: arm 1 now takes 500.  Its next three timings, one
     * in eight of its calls, replace the fast ones; from then arm 0's 300
     * wins, and arm 0 runs.
     */
    const unsigned one_slower[2] = {300, 500};
    run(&a, 3 * COLLIE__ARM_TIME_EVERY, one_slower, runs);
    CHECK(timed_runs[1] == 3 && runs[1] >= 2 * COLLIE__ARM_TIME_EVERY + 1,
          "arm 1 ran %d of the %d calls after the change, %d of them timed", runs[1],
          3 * COLLIE__ARM_TIME_EVERY, timed_runs[1]);
    run(&a, 100, one_slower, runs);
    CHECK(runs[0] >= 95 && runs[1] >= 1 && runs[1] <= 5,
          "after the change arm 0 ran %d of 100, arm 1 %d (re-timed from a gap of 8)", runs[0],
          runs[1]);

    /*
     * A stale fast timing of the loser: arm 1 was fast (100) while arm 0
     * won at 50; both slow down (arm 0 to 400, arm 1 to 600).  Arm 1's
     * stale 100 wins once arm 0's timings refresh, runs, and within its
     * three timings arm 0 is back.
     */
    struct collie__arms b = {0};
    const unsigned before[2] = {50, 100}, after[2] = {400, 600};
    run(&b, 20, before, runs);
    run(&b, 200, after, runs);
    CHECK(runs[1] <= 3 + 8, "arm 1 ran %d of 200 calls after both slowed", runs[1]);
    run(&b, 100, after, runs);
    CHECK(runs[0] >= 95, "arm 0 ran %d of the next 100", runs[0]);

    /* Timings beyond 4 s are kept as the longest. */
    struct collie__arms c = {0};
    collie__arms_record(&c, 0, 10000000000ull);
    CHECK(collie__arms_estimate(&c, 0) == 4294967294u, "10 s kept as %u ns",
          collie__arms_estimate(&c, 0));
    CHECK(collie__arms_estimate(&c, 1) == 4294967295u, "no timing: %u",
          collie__arms_estimate(&c, 1));

    printf("arms: ok\n");
    return 0;
}
