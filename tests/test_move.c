/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_move.c - two ranks that the scheduler put on one CPU are split again
 * every time, not once per 10 ms.
 *
 * Run as `collie run -n 2 --bind none test_move` on a machine with 2 CPUs
 * or more.  Each round sleeps (as a training step's data loading or a
 * benchmark's probe between sizes does), then merges both ranks on one CPU
 * the way the scheduler can: each pins itself there and puts its mask back,
 * which leaves it where it is.  Then 64 allreduces, every element checked,
 * and the ranks compare where they ended.  The library must have moved the
 * higher rank off the shared CPU in (nearly) every round: rounds are
 * ROUND_MS apart, so a library that moved at most once per 10 ms (as it did
 * until a benchmark's sizes showed it) splits them in one round of four.
 * Exits 77 (skipped) with fewer than 2 CPUs.
 */
#include <sched.h>

#include "test_util.h"

#define ROUNDS 12
#define ROUND_MS 3
#define CALLS 64

/* Pins this thread to cpu, then gives it its mask back: it stays on cpu until something moves it. */
static void merge_on(int cpu, const cpu_set_t *mask)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "pinning to CPU %d", cpu);
    CHECK(sched_setaffinity(0, sizeof *mask, mask) == 0, "restoring the mask");
}

int main(void)
{
    cpu_set_t mask;
    CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0, "sched_getaffinity");
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &mask))
            first = c;
    if (CPU_COUNT(&mask) < 2) {
        printf("skipped: %d CPU\n", CPU_COUNT(&mask));
        return 77;
    }
    collie_comm *comm = test_init();
    int rank = collie_rank(comm), n = collie_size(comm);
    CHECK(n == 2 && collie_local_size(comm) == 2, "run me as 2 ranks on one host, not %d", n);

    int apart = 0;
    for (int round = 0; round < ROUNDS; round++) {
        nanosleep(&(struct timespec){.tv_nsec = ROUND_MS * 1000000L}, NULL);
        merge_on(first, &mask);
        CHECK_OK(comm, collie_barrier(comm));
        for (int i = 0; i < CALLS; i++) {
            int64_t v[2] = {rank + i, 3 * rank}, sum[2];
            CHECK_OK(comm, collie_allreduce(comm, v, sum, 2, COLLIE_INT64, COLLIE_SUM));
            CHECK(sum[0] == 1 + 2 * i && sum[1] == 3, "round %d call %d: %lld %lld", round, i,
                  (long long)sum[0], (long long)sum[1]);
        }
        int64_t cpu[2] = {0, 0}, where[2];
        cpu[rank] = sched_getcpu();
        CHECK_OK(comm, collie_allreduce(comm, cpu, where, 2, COLLIE_INT64, COLLIE_SUM));
        apart += where[0] != where[1];
    }
    if (rank == 0)
        printf("move: the ranks ended %d of %d rounds on different CPUs\n", apart, ROUNDS);
    CHECK(apart >= ROUNDS - 2,
          "merged on one CPU every %d ms, the ranks were split in only %d of %d rounds", ROUND_MS,
          apart, ROUNDS);
    CHECK_OK(comm, collie_finalize(comm));
    return 0;
}
