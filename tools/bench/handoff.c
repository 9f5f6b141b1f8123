/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handoff.c - the machine's CPU-to-CPU latency, probed between the sizes of
 * a sweep.  On a virtual machine the host may run the vCPUs on cores that
 * share a last-level cache (a cache line moves between them in about 30 ns)
 * or on cores that do not (about 150 ns), and switch at any time: every
 * shared-memory figure moves 3-5x with it, for any library.  Rows carry the probe, so that a figure
 * taken while the machine was slow says so.
 *
 * Two threads pinned to two CPUs pass one cache line back and forth; one
 * handoff is half a round trip, the median over blocks of round trips (a
 * block that another thread interrupted is an outlier, not the answer).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define ROUND_TRIPS 32 /* per block */
#define BLOCKS 63      /* an odd count: the median is one block's */

struct probe {
    _Alignas(64) _Atomic unsigned ball; /* odd: the answerer's turn; even: the asker's */
    _Alignas(64) atomic_int stop;
    int cpu[2];
    double block_s[BLOCKS];
    int blocks; /* how many were timed before the budget ran out */
};

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *answer(void *arg)
{
    struct probe *p = arg;
    if (pin(p->cpu[1]) != 0)
        return NULL; /* the asker sees no answer and gives up at the budget */
    while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
        unsigned v = atomic_load_explicit(&p->ball, memory_order_acquire);
        if (v & 1)
            atomic_store_explicit(&p->ball, v + 1, memory_order_release);
    }
    return NULL;
}

static void *ask(void *arg)
{
    struct probe *p = arg;
    if (pin(p->cpu[0]) != 0)
        return NULL;
    double deadline = bench_now_s() + BENCH_PROBE_BUDGET_S;
    unsigned v = 0;
    for (p->blocks = 0; p->blocks < BLOCKS; p->blocks++) {
        double t0 = bench_now_s();
        for (int i = 0; i < ROUND_TRIPS; i++) {
            atomic_store_explicit(&p->ball, ++v, memory_order_release);
            for (unsigned spins = 1; atomic_load_explicit(&p->ball, memory_order_acquire) == v;
                 spins++)
                if (!(spins & 1023) && bench_now_s() > deadline)
                    return NULL;
            v++;
        }
        double t1 = bench_now_s();
        p->block_s[p->blocks] = t1 - t0;
        if (t1 > deadline)
            return NULL;
    }
    return NULL;
}

/*
 * The two CPUs to probe: the first two this process may use, or, where it
 * is bound to one (as mpirun binds its ranks), the first two of the machine
 * that a thread may be pinned to.  0 if there are not two.
 */
static int choose_cpus(int cpu[2])
{
    cpu_set_t mine;
    int n = 0;
    if (sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) >= 2) {
        for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
            if (CPU_ISSET(c, &mine))
                cpu[n++] = c;
        return n == 2;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < online && c < CPU_SETSIZE && n < 2; c++)
        cpu[n++] = c; /* pinning fails on a CPU the cgroup forbids: the probe then says 0 */
    return n == 2;
}

/*
 * Testing: COLLIE_TEST_PROBE_NS=N makes the machine probes read N ns instead
 * of measuring, so that tests checking the marks and the fast-state medians
 * do not see the host move its vCPUs in the middle of them (a clean-clone CI
 * run read 48-169 ns and merged the rounds a test wanted flagged).
 */
double bench_probe_handoff_ns(int rank)
{
    if (rank != 0) { /* a rank that polled would hold a CPU the probe needs */
        nanosleep(&(struct timespec){.tv_nsec = (long)(1.5 * BENCH_PROBE_BUDGET_S * 1e9)}, NULL);
        return 0;
    }
    const char *v = getenv("COLLIE_TEST_PROBE_NS");
    return v && *v ? atof(v) : bench_handoff_ns();
}

double bench_handoff_ns(void)
{
    struct probe *p = aligned_alloc(64, sizeof *p);
    if (!p)
        return 0;
    atomic_init(&p->ball, 0);
    atomic_init(&p->stop, 0);
    p->blocks = 0;
    double ns = 0;
    pthread_t asker, answerer;
    if (choose_cpus(p->cpu) && pthread_create(&answerer, NULL, answer, p) == 0) {
        if (pthread_create(&asker, NULL, ask, p) == 0)
            pthread_join(asker, NULL);
        atomic_store_explicit(&p->stop, 1, memory_order_relaxed);
        pthread_join(answerer, NULL);
        if (p->blocks >= 3)
            ns = bench_median(p->block_s, p->blocks) / (2.0 * ROUND_TRIPS) * 1e9;
    }
    free(p);
    return ns;
}
