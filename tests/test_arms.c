/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_arms.c - the learner behind adaptive (src/coll/arms.c) on timings
 * made up to the nanosecond: each arm timed once first, back to back, the
 * faster after, the slower re-timed on a doubling gap, a settled winner
 * timed one call in COLLIE__ARM_TIME_EVERY, a preempted call that changes
 * nothing, a change of state followed both ways, and no call timed that
 * follows the other arm's; the calls a settled winner is granted; and the
 * placement's verdict that picks which pair of arms learns.
 */
#include "coll/algo.h"
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

/*
 * Runs `calls` calls where arm k takes warm[k] after a call of its own and
 * cold[k] after the other's (the caches as that one left them), recording
 * those the learner asks to time; counts the runs of each in runs[].
 */
static void run_switching(struct collie__arms *a, int calls, const unsigned warm[2],
                          const unsigned cold[2], int runs[2])
{
    int last = -1;
    runs[0] = runs[1] = 0;
    for (int c = 0; c < calls; c++) {
        int timed;
        int arm = collie__arms_next(a, &timed);
        runs[arm]++;
        if (timed)
            collie__arms_record(a, arm, arm == last ? warm[arm] : cold[arm]);
        last = arm;
    }
}

/*
 * As run(), but each call that asks may be granted up to `most` calls more
 * of its arm (collie__arms_batch(), as adaptive.c asks), which run untimed;
 * counts the calls that asked in *asked and the largest grant in *largest.
 */
static void run_granted(struct collie__arms *a, int calls, const unsigned ns[2], uint32_t most,
                        int runs[2], int *asked, uint32_t *largest)
{
    runs[0] = runs[1] = timed_runs[0] = timed_runs[1] = *asked = 0;
    *largest = 0;
    for (int c = 0; c < calls; (*asked)++) {
        int timed;
        int arm = collie__arms_next(a, &timed);
        uint32_t granted = collie__arms_batch(a, arm, timed, most);
        if (granted > *largest)
            *largest = granted;
        runs[arm] += 1 + (int)granted;
        c += 1 + (int)granted;
        if (timed) {
            timed_runs[arm]++;
            collie__arms_record(a, arm, ns[arm]);
        }
    }
}

/*
 * Grants: none while the arms learn, nor to the loser; a settled winner's
 * run to its next re-timing of the loser, so that the loser runs as often
 * as without them, and no grant exceeds what the caller allows.
 */
static void grants(void)
{
    struct collie__arms a = {0};
    const unsigned one_faster[2] = {300, 100};
    int runs[2], asked;
    uint32_t largest;
    /* two calls of each arm, then the winner's three timed ones */
    run_granted(&a, 7, one_faster, 1000, runs, &asked, &largest);
    CHECK(largest == 0 && asked == 7, "granted %u calls while learning (%d asked)", largest, asked);
    run_granted(&a, 1000, one_faster, 1000, runs, &asked, &largest);
    CHECK(runs[0] == 12, "the slower arm ran %d times in 1000 calls with grants, not 12", runs[0]);
    CHECK(asked <= 40, "%d of 1000 calls asked", asked);
    /* the last gap's calls but the loser's two, the winner's cold one and its timed one */
    CHECK(largest == COLLIE__ARM_GAP_MAX - 2, "largest grant %u calls, not %d", largest,
          COLLIE__ARM_GAP_MAX - 2);
    /* a grant follows a timing of the winner: at least one between re-timings of the loser */
    CHECK(timed_runs[1] >= 6, "the winner was timed %d times in 1000 calls", timed_runs[1]);

    struct collie__arms b = {0};
    run_granted(&b, 1000, one_faster, 5, runs, &asked, &largest);
    /* its two calls while learning, then the same re-timings as above */
    CHECK(largest == 5 && runs[0] == 2 + 12, "allowed 5, granted %u (the slower arm ran %d times)",
          largest, runs[0]);

    /* The winner slows: its timings at the calls that ask find it out, and the other wins. */
    const unsigned one_slower[2] = {300, 500};
    run_granted(&a, 2000, one_slower, 1000, runs, &asked, &largest);
    int before = runs[1];
    run_granted(&a, 200, one_slower, 1000, runs, &asked, &largest);
    CHECK(runs[0] >= 190, "after the winner slowed, arm 0 ran %d of 200 (arm 1 %d of 2000 before)",
          runs[0], before);
}

/*
 * adaptive's placement (collie__adaptive_far): the first probe by the
 * threshold; later ones flip it only beyond 1.25x it either way, so syncs
 * that read either side of it keep one verdict (and one pair of arms).
 */
static void placement(void)
{
    const double limit = 100e-9;
    CHECK(!collie__adaptive_far(0, 0, 99e-9, limit), "a first probe of 99 ns against 100: far");
    CHECK(collie__adaptive_far(0, 0, 101e-9, limit), "a first probe of 101 ns against 100: near");
    const double inside[] = {81e-9, 99e-9, 101e-9, 124e-9};
    for (int k = 0; k < 4; k++)
        for (int was = 0; was < 2; was++)
            CHECK(collie__adaptive_far(1, was, inside[k], limit) == was,
                  "a probe of %.0f ns inside the band changed the verdict %s", inside[k] * 1e9,
                  was ? "far" : "near");
    CHECK(collie__adaptive_far(1, 0, 126e-9, limit), "126 ns, beyond the band, stayed near");
    CHECK(!collie__adaptive_far(1, 1, 79e-9, limit), "79 ns, below the band, stayed far");
}

int main(void)
{
    placement();
    grants();
    struct collie__arms a = {0};
    int runs_short[2];
    /*
     * Each arm back to back until it holds a timing, arm 0's first: the
     * first call of each follows no call of its own and is not timed.
     */
    const int order[4] = {0, 0, 1, 1}, timed_at[4] = {0, 1, 0, 1};
    const unsigned warming[2] = {50, 100};
    for (int c = 0; c < 4; c++) {
        int timed;
        int arm = collie__arms_next(&a, &timed);
        CHECK(arm == order[c], "call %d of the first four ran arm %d, not %d", c, arm, order[c]);
        CHECK(timed == timed_at[c], "call %d of the first four timed: %d", c, timed);
        if (timed)
            collie__arms_record(&a, arm, warming[arm]);
    }
    CHECK(collie__arms_estimate(&a, 0) == 50 && collie__arms_estimate(&a, 1) == 100,
          "estimates %u and %u after a timing each", collie__arms_estimate(&a, 0),
          collie__arms_estimate(&a, 1));
    int timed;
    CHECK(collie__arms_next(&a, &timed) == 0 && !timed,
          "arm 0 did not win, or its call after arm 1's was timed");

    /*
     * A short job (IMB-MPI1 makes 6 calls of 16 MiB and times the last two)
     * runs the faster arm from its fifth call, whichever it is.
     */
    for (int faster = 0; faster < 2; faster++) {
        struct collie__arms s = {0};
        const unsigned ns[2] = {faster ? 300u : 100u, faster ? 100u : 300u};
        run(&s, 4, ns, runs_short);
        run(&s, 2, ns, runs_short);
        CHECK(runs_short[faster] == 2, "calls 5 and 6 ran arm %d %d times", faster,
              runs_short[faster]);
    }

    /* Then arm 0 slows to 300 (its timings replaced): arm 1 wins, its schedule starts over. */
    for (int k = 0; k < COLLIE__ARM_SAMPLES; k++)
        collie__arms_record(&a, 0, 300);

    /*
     * Arm 1 faster: the gap between re-timings of arm 0 runs 16, 32, 64,
     * 128, 256, 256, ...; each runs arm 0 twice, the first warming it up:
     * in 1000 calls at calls 17-18, 51-52, 117-118, 247-248, 505-506 and
     * 763-764.
     */
    int runs[2];
    const unsigned one_faster[2] = {300, 100};
    run(&a, 1000, one_faster, runs);
    CHECK(runs[0] == 12 && runs[1] == 988, "the slower arm ran %d times in 1000 calls, not 12",
          runs[0]);
    /* the slower timed once a re-timing; the winner two of its first three (the first follows
     * arm 0's), then one in eight */
    CHECK(timed_runs[0] == 6 && timed_runs[1] == 2 + (988 - 3) / COLLIE__ARM_TIME_EVERY,
          "timed %d of the slower arm's 12 calls and %d of the winner's 988", timed_runs[0],
          timed_runs[1]);

    /* One preempted call of the winner (4 ms) does not move the choice. */
    collie__arms_record(&a, 1, 4000000);
    const unsigned still[2] = {300, 100};
    run(&a, 100, still, runs);
    CHECK(runs[1] >= 98, "a preempted call moved %d calls to the slower arm", runs[0]);

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
    CHECK(runs[0] >= 92 && runs[1] >= 2 && runs[1] <= 8,
          "after the change arm 0 ran %d of 100, arm 1 %d (re-timed twice a gap from 16)", runs[0],
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
    /* arm 1's switch and three timed calls, then re-timings of two calls from a gap of 16 */
    CHECK(runs[1] <= 4 + 2 * 5, "arm 1 ran %d of 200 calls after both slowed", runs[1]);
    run(&b, 100, after, runs);
    CHECK(runs[0] >= 95, "arm 0 ran %d of the next 100", runs[0]);

    /*
     * Each arm pays for the caches the other left (at 4 ranks on 2 cores,
     * allreduce of 256 KiB: direct 58 us after itself and 98 after
     * twoshot, twoshot 65 and 83): the faster back to back wins, whichever
     * ran first, and keeps winning as its rival is re-timed.  Timing each
     * rival's single call between the winner's, twoshot won for good.
     */
    const unsigned warm[2] = {65, 58}, cold[2] = {83, 98};
    struct collie__arms d = {0};
    run_switching(&d, 1000, warm, cold, runs);
    CHECK(runs[1] >= 980, "the arm faster back to back ran %d of 1000 calls", runs[1]);
    CHECK(collie__arms_estimate(&d, 0) == 65 && collie__arms_estimate(&d, 1) == 58,
          "estimates %u and %u: a call after the other arm's was kept",
          collie__arms_estimate(&d, 0), collie__arms_estimate(&d, 1));

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
