/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * adaptive.c - large messages on one host where the machine's placement of
 * CPUs decides the algorithm: the window (twoshot.c, the staged ones) while
 * the ranks' CPUs share a cache, single copies (the direct ones) while they
 * do not, chosen in the call from a measurement made in it.
 *
 * A virtual machine's vCPUs may run on cores that share a last-level cache
 * (a cache line moves between them in about 40 ns) or on cores that do not
 * (about 165 ns), and the host moves them at any time.  The window hands
 * every byte from core to core through the slots, and is 3x slower far
 * apart; single copies cross memory once and do not notice.  Measured at 2
 * ranks, allreduce of 16 and 64 MiB: twoshot 3.1 / 13.0 ms near and 9.5 /
 * 37.3 far, direct 4.1 / 17.8 in both.  Neither is right in both
 * placements, and a cost model on fixed rates cannot see which one the call
 * runs in.
 *
 * So the calls measure it.  Every COLLIE__ADAPTIVE_PROBE_NS (a millisecond)
 * at most, a call probes: every rank syncs COLLIE__ADAPTIVE_PROBES times,
 * local rank 0 timing each (the first also compares the descriptors).  The
 * fastest of them is a cache line's trip between the ranks' CPUs plus the
 * sync's own code: a rank preempted in one of them does not count.  The
 * calls between trust that finding; the host's moves of the vCPUs come
 * seconds apart, so a move costs at most a millisecond of calls in the
 * wrong placement.  The probe alone does not decide the algorithm: between
 * near and far lies a middle state the probe takes for far (a sync of
 * 105-140 ns where the threshold is 100), in which twoshot ran a 64 MiB
 * allreduce in 16.0 ms and direct in 24.7, and the rate of a cross-memory
 * read changes from day to day.  So local rank 0 times what each call
 * runs, per placement, collective and size (a power of two), and runs the
 * faster of the two as arms.c learns it, the slower again now and then;
 * the placement keeps each state's timings apart, so that a move back
 * finds its winner known.  Far apart at 2 ranks, the copies (broadcast,
 * allgather, alltoall) run direct without timing; with more, their window
 * streams its slots and is timed too: see learns_far().  Its verdict
 * rides with the call's sync (collie__win_carry()): the algorithm, the
 * placement, whether the next call probes, and how many calls of the same
 * bytes after it run the same without asking (a grant: a settled winner's
 * calls up to the next probe or re-timing, arms.c's collie__arms_batch();
 * a branch it does not learn, far apart, up to the next probe).  Every
 * rank runs the algorithm rank 0 chose, so all run the same one, and all
 * probe alike.  A call that asks costs one sync more than its branch; one
 * that probes, nine (at 2 ranks 1.3-2.9 us, measured when every call
 * probed); a granted call, none.  Asking every call cost 1-2 us a call at
 * 64 KiB on 4 ranks on 2 CPUs and 2-5 at 8 (allgather: 11.0-11.1 against
 * 9.3-10.0 granted, 20.9-21.1 against 16.5-19.4).  The verdict takes no
 * round of the slots: one would put every branch round on one parity, and
 * at 2 ranks a twoshot of 40-72 KiB ran 0.9-2.0 us slower so than alone
 * (adaptive's 64 KiB allreduce 8.5-8.8 us, against 6.7-7.0 carried).
 *
 * The two branches may order a reduction's sums differently: a float sum
 * of one input may differ in its last bits between calls, as it may in
 * NCCL between its algorithms.  COLLIE_ALGO fixes one algorithm where that
 * matters.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/log.h"
#include "../transport/shm.h"
#include "algo.h"
#include "arms.h"
#include "cost_terms.h"

/*
 * Per collective, adaptive's own descriptor and the algorithms it chooses
 * between: the window one it stands for (near), its single copy (direct),
 * and the window algorithm that costs less than near at some sizes
 * (other: an alltoall's pairwise exchange, an allreduce's oneshot).  Looked
 * up in the registry once: the selector asks for them on every choice.
 */
struct branches {
    const struct collie__algo *self[COLLIE_COLL_COUNT], *near[COLLIE_COLL_COUNT],
        *direct[COLLIE_COLL_COUNT], *other[COLLIE_COLL_COUNT];
};
static struct branches branches;
static pthread_once_t branches_once = PTHREAD_ONCE_INIT;

static void find_branches(void)
{
    for (int c = 0; c < COLLIE_COLL_COUNT; c++) {
        const char *near = c == COLLIE_COLL_ALLREDUCE ? "twoshot"
                           : c == COLLIE_COLL_REDUCE  ? "oneshot"
                                                      : "staged";
        branches.self[c] = collie__algo_find(c, "adaptive", 8);
        if (branches.self[c]) {
            branches.near[c] = collie__algo_find(c, near, strlen(near));
            branches.direct[c] = collie__algo_find(c, "direct", 6);
        }
    }
    branches.other[COLLIE_COLL_ALLTOALL] = collie__algo_find(COLLIE_COLL_ALLTOALL, "pairwise", 8);
    branches.other[COLLIE_COLL_ALLREDUCE] = collie__algo_find(COLLIE_COLL_ALLREDUCE, "oneshot", 7);
}

static const struct branches *branches_found(void)
{
    pthread_once(&branches_once, find_branches);
    return &branches;
}

const struct collie__algo *collie__adaptive_of(enum collie__coll coll)
{
    return (unsigned)coll < COLLIE_COLL_COUNT ? branches_found()->self[coll] : NULL;
}

const struct collie__algo *collie__adaptive_near(enum collie__coll coll)
{
    return (unsigned)coll < COLLIE_COLL_COUNT ? branches_found()->near[coll] : NULL;
}

const struct collie__algo *collie__adaptive_direct(enum collie__coll coll)
{
    return (unsigned)coll < COLLIE_COLL_COUNT ? branches_found()->direct[coll] : NULL;
}

const struct collie__algo *collie__adaptive_window(const struct collie__machine *m,
                                                   enum collie__coll coll, size_t bytes)
{
    const struct collie__algo *near = collie__adaptive_near(coll);
    const struct collie__algo *other = near ? branches_found()->other[coll] : NULL;
    if (other && other->cost(m, (double)bytes, 1) < near->cost(m, (double)bytes, 1))
        return other;
    return near;
}

double collie__adaptive_window_cost(const struct collie__machine *m, enum collie__coll coll,
                                    size_t bytes)
{
    const struct collie__algo *w = collie__adaptive_window(m, coll, bytes);
    if (!w)
        return HUGE_VAL;
    return (w->synced_cost ? w->synced_cost : w->cost)(m, (double)bytes, 1);
}

/* Local rank 0's fastest of the probing syncs, in seconds; every rank syncs alike. */
static collie_status probe(collie_comm *comm, double *fastest)
{
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < COLLIE__ADAPTIVE_PROBES; k++) {
        uint64_t t0 = collie__now_ns();
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;
        uint64_t t = collie__now_ns() - t0;
        best = t < best ? t : best;
    }
    *fastest = (double)best * 1e-9;
    return COLLIE_OK;
}

/* The size class of a call of `bytes`: the power of two at or below them. */
static int size_class(size_t bytes)
{
    int c = 0;
    while (c < COLLIE__SIZE_CLASSES - 1 && (bytes >> (c + 1)))
        c++;
    return c;
}

/* Local rank 0's timings of op's two branches in one placement (far: 1); NULL without memory. */
static struct collie__arms *arms_of(collie_comm *comm, const struct collie__op *op, int far)
{
    if (!comm->coll->arms)
        comm->coll->arms =
            calloc(2 * COLLIE_COLL_COUNT * COLLIE__SIZE_CLASSES, sizeof *comm->coll->arms);
    if (!comm->coll->arms)
        return NULL;
    size_t coll = (size_t)(far ? COLLIE_COLL_COUNT : 0) + (size_t)op->desc.coll;
    int cls = size_class(op->count * op->elem_size);
    return &comm->coll->arms[coll * COLLIE__SIZE_CLASSES + (size_t)cls];
}

/*
 * Far apart, whether coll still times both branches, or runs direct.  A
 * reduction's window won in the middle state the probe takes for far
 * (allreduce 64 MiB: twoshot 16.0-17.7 ms, direct 24.6-25.1; reduce_scatter
 * 12.0-12.9 against 18.5-19.2).  At 2 ranks a copy's single copy moves each
 * byte once where its window moves it twice, and direct won there
 * (broadcast 16 MiB: 0.93 against 1.35 ms), where timing the window now and
 * then cost 0.9 -> 1.13-1.4 ms.  With more ranks the window streams its
 * slots far apart (stream_stage()) and its readers take them from memory:
 * measured at 4 ranks on 2 cores, a streamed staged broadcast of 16 MiB
 * took 2.2 ms and an allgather 2.1, where Intel MPI's took 6.2 and 6.4.
 */
static int learns_far(const collie_comm *comm, enum collie__coll coll)
{
    return coll == COLLIE_COLL_ALLREDUCE || coll == COLLIE_COLL_REDUCE ||
           coll == COLLIE_COLL_REDUCE_SCATTER || comm->local_size > 2;
}

/*
 * Whether a window branch streams its staging slots (collie__stage()): as
 * COLLIE_STAGE_STREAM says, by default far apart with more than 2 ranks.
 * At 2 ranks an exchange's slots change hands in place, each line read
 * from the core that wrote it (collie__win_exchange()), and stay there.
 */
static int stream_stage(const collie_comm *comm, int far)
{
    return comm->stage_stream < 0 ? far && comm->local_size > 2 : comm->stage_stream > 0;
}

/*
 * The band about the threshold inside which a probe keeps the last verdict
 * (collie__adaptive_far()).  Each placement learns its own winner
 * (arms_of()), so a probe that flaps across the threshold learns both
 * twice: on a Xeon whose syncs read 92-134 ns against 100, a 2-rank
 * allreduce of 1 MiB, 100 calls, ran twoshot (1.6x slower there) in 14 of
 * them, and 8 with the band; 512 KiB took 32.9-35.5 us a call against
 * 34.4-52.9 without (5 pairs).  The EPYC's placements lie outside it (syncs
 * of 40-60 ns near, 140-290 far); its middle state (105-140) keeps the
 * placement it came from, and there the window won as it does near.
 */
#define FAR_BAND 1.25

int collie__adaptive_far(int probed, int was_far, double sync_s, double limit)
{
    if (!probed)
        return sync_s > limit;
    if (sync_s > FAR_BAND * limit)
        return 1;
    return sync_s * FAR_BAND < limit ? 0 : was_far;
}

/*
 * Local rank 0's verdict word: the algorithm every rank runs, whether the
 * next call probes, and how many calls of the same bytes after this one
 * run the same without asking (collie__arms_batch()).
 */
#define VERDICT_ALGO 0xffu /* its number: below COLLIE__ALGO_WIRE_LIMIT */
#define VERDICT_SKIP_PROBE (1u << 8)
#define VERDICT_TIMED (1u << 9) /* the call ends with a sync, and local rank 0 times it */
#define VERDICT_FAR (1u << 10)  /* local rank 0 last found the CPUs far apart */
#define VERDICT_BATCH_SHIFT 16  /* the calls granted */

/* Runs `branch` in the placement given (far: 1); times it, closing with a sync, where timed. */
static collie_status run_branch(collie_comm *comm, const struct collie__op *op,
                                const struct collie__algo *branch, int far, int timed,
                                struct collie__arms *arms, int arm)
{
    /*
     * A timed call ends with a sync: a rank's own time misses its peers'
     * work after it leaves (a broadcast's root leaves staged as soon as its
     * slot is full), and learning from the root's time alone took a 64 KiB
     * broadcast from 3.0 to 8.4-9.2 us.  Syncing every call would cost one
     * more sync each; arms.c asks for one in COLLIE__ARM_TIME_EVERY once
     * settled, and before each grant.
     */
    struct collie__op placed_op = *op;
    placed_op.stream_stage = stream_stage(comm, far);
    uint64_t t0 = collie__now_ns();
    collie_status st = branch->run(comm, &placed_op);
    if (timed) { /* a failed rank syncs too: its peers then learn at once */
        collie_status last = collie__win_sync(comm);
        if (arms && st == COLLIE_OK && last == COLLIE_OK)
            collie__arms_record(arms, arm, collie__now_ns() - t0);
        st = st != COLLIE_OK ? st : last;
    }
    return st;
}

static collie_status adaptive(collie_comm *comm, const struct collie__op *op)
{
    const enum collie__coll coll = (enum collie__coll)op->desc.coll;
    const size_t bytes = op->count * op->elem_size;
    /*
     * A granted call runs the branch of the verdict that granted it, with
     * no sync of its own: every rank holds the same grant, counts the same
     * calls down and runs the same branch, whose first sync compares the
     * ranks' descriptors.  A call of other bytes in the size class asks,
     * on every rank alike, and its verdict replaces the grant.
     */
    struct collie__batch *granted = &comm->coll->batches[coll][size_class(bytes)];
    if (granted->left && granted->bytes == bytes) {
        granted->left--;
        return run_branch(comm, op, granted->branch, granted->far, 0, NULL, 0);
    }
    struct collie__placement *placed = &comm->coll->placement;
    double sync_s = 0;
    const int probing = !placed->skip_probe; /* the same on every rank: the last verdict's */
    if (probing) {
        collie_status st = probe(comm, &sync_s);
        if (st != COLLIE_OK)
            return st;
    }

    struct collie__arms *arms = NULL;
    int arm = 1, timed = 0; /* local rank 0's: 0 the window, 1 direct; whether it times this call */
    if (comm->local_rank == 0) {
        struct collie__machine m;
        collie__select_machine(comm, &m);
        uint64_t now = collie__now_ns();
        if (probing) {
            double limit = m.host_far_sync * (comm->local_size - 1); /* a line from each peer */
            placed->far = collie__adaptive_far(placed->probed_ns != 0, placed->far, sync_s, limit);
            placed->probed_ns = now;
            COLLIE_TRACE("coll", "%s: a sync in %.0f ns (far above %.0f): %s",
                         collie__coll_name(coll), sync_s * 1e9, limit * 1e9,
                         placed->far ? "far" : "near");
        }
        arms = placed->far && !learns_far(comm, coll) ? NULL : arms_of(comm, op, placed->far);
        arm = arms ? collie__arms_next(arms, &timed) : 1;
        const struct collie__algo *run =
            arm ? collie__adaptive_direct(coll) : collie__adaptive_window(&m, coll, bytes);
        /*
         * A settled winner runs the calls until the next probe falls due
         * (at its own time a call) without asking: a call that asks costs
         * a sync of every rank, dear on a crowded host (above).  So does a
         * branch run unlearned (far apart, a copy's direct at 2 ranks), at
         * the time local rank 0 took for its last call of these bytes.
         */
        uint64_t since_probe = now - placed->probed_ns, each = 0;
        uint32_t grant = 0, most = 0;
        if (arms)
            each = collie__arms_estimate(arms, arm);
        else if (granted->bytes == bytes)
            each = granted->untimed_ns;
        if (each && since_probe < COLLIE__ADAPTIVE_PROBE_NS)
            most = (uint32_t)((COLLIE__ADAPTIVE_PROBE_NS - since_probe) / each);
        if (arms)
            grant = collie__arms_batch(arms, arm, timed, most);
        else
            grant = most < COLLIE__ARM_GAP_MAX ? most : COLLIE__ARM_GAP_MAX;
        int skip = since_probe + (grant ? (grant + 1) * each : 0) < COLLIE__ADAPTIVE_PROBE_NS;
        uint32_t verdict = (uint32_t)run->wire | (skip ? VERDICT_SKIP_PROBE : 0) |
                           (timed ? VERDICT_TIMED : 0) | (placed->far ? VERDICT_FAR : 0) |
                           grant << VERDICT_BATCH_SHIFT;
        memcpy(collie__win_carry(comm), &verdict, sizeof verdict);
        if (arms)
            COLLIE_TRACE("coll",
                         "%s of %zu bytes (%s): window %.1f us, direct %.1f us: runs %s, "
                         "%u more calls granted",
                         collie__coll_name(coll), bytes, placed->far ? "far" : "near",
                         collie__arms_estimate(arms, 0) * 1e-3,
                         collie__arms_estimate(arms, 1) * 1e-3, run->name, grant);
        else
            COLLIE_TRACE("coll", "%s of %zu bytes (%s): runs %s, %u more calls granted",
                         collie__coll_name(coll), bytes, placed->far ? "far" : "near", run->name,
                         grant);
    }
    /* a call that does not probe compares the ranks' descriptors here */
    collie_status st = collie__win_sync(comm);
    if (st != COLLIE_OK)
        return st;
    /* local rank 0's verdict, the algorithm included: every rank runs the same, and probes alike */
    uint32_t verdict;
    memcpy(&verdict, collie__win_carried(comm, 0), sizeof verdict);
    placed->skip_probe = (verdict & VERDICT_SKIP_PROBE) != 0;
    const struct collie__algo *branch = collie__algo_of_wire(coll, (int)(verdict & VERDICT_ALGO));
    if (!branch)
        return collie__fail(comm, COLLIE_ERR_INTERNAL,
                            "%s: local rank 0 chose algorithm %u, which it has not",
                            collie__coll_name(coll), verdict & VERDICT_ALGO);
    granted->bytes = bytes;
    granted->left = (uint16_t)(verdict >> VERDICT_BATCH_SHIFT);
    granted->branch = branch;
    granted->far = (verdict & VERDICT_FAR) != 0;
    uint64_t t0 = collie__now_ns();
    st = run_branch(comm, op, branch, granted->far, (verdict & VERDICT_TIMED) != 0, arms, arm);
    uint64_t took = collie__now_ns() - t0; /* rank 0's, for a grant where no arm is learnt */
    granted->untimed_ns = took < UINT32_MAX ? (uint32_t)took : UINT32_MAX;
    return st;
}

/*
 * Adaptive (adaptive.c): the faster of `window` (collie__adaptive_window_cost) and
 * `direct`, as it learns them by timing both (arms.c), so the faster as
 * these rates see them; select.c runs it where the rates may be wrong
 * about which.  Its own cost: the verdict's sync, local rank 0's
 * bookkeeping and its tries of the slower branch, measured at 2 ranks,
 * 16 KiB, as 0.25-0.9 us over the window it ran, about three syncs, while
 * every call asked.  Granted calls ask no more, but a size's first calls
 * learn, running both branches and asking each time, so the price stays.
 * Its probe's syncs come once a millisecond (COLLIE__ADAPTIVE_PROBE_NS): no
 * call's share of them counts.  Where the model does not price direct (a
 * host with more ranks than cores: collie__cost_attach_offered()), the
 * window's time stands for both: adaptive times direct before it runs it.
 */
#define ADAPTIVE_SYNCS 3
static double adaptive_cost(machine *m, double window, double direct)
{
    if (!collie__cost_attach_offered_alltoall(m)) /* direct cannot run */
        return HUGE_VAL;
    return ADAPTIVE_SYNCS * collie__cost_sync(m) + (window < direct ? window : direct);
}

static double adaptive_of(machine *m, enum collie__coll coll, double s)
{
    return adaptive_cost(m, collie__adaptive_window_cost(m, coll, (size_t)s),
                         collie__adaptive_direct(coll)->cost(m, s, 1));
}

/* One descriptor a collective: adaptive stands for the window one of each. */
#define ADAPTIVE(coll_, COLL)                                                                      \
    static double coll_##_cost(machine *m, double s, int degree)                                   \
    {                                                                                              \
        (void)degree;                                                                              \
        return adaptive_of(m, COLLIE_COLL_##COLL, s);                                              \
    }                                                                                              \
    const struct collie__algo collie__algo_##coll_##_adaptive = {                                  \
        .name = "adaptive",                                                                        \
        .wire = 14,                                                                                \
        .coll = COLLIE_COLL_##COLL,                                                                \
        .scope = COLLIE_SCOPE_HOST,                                                                \
        .flags = COLLIE__ALGO_ATTACH | COLLIE__ALGO_PLACEMENT,                                     \
        .run = adaptive,                                                                           \
        .cost = coll_##_cost,                                                                      \
    };
ADAPTIVE(allreduce, ALLREDUCE)
ADAPTIVE(reduce, REDUCE)
ADAPTIVE(broadcast, BROADCAST)
ADAPTIVE(allgather, ALLGATHER)
ADAPTIVE(reduce_scatter, REDUCE_SCATTER)
ADAPTIVE(alltoall, ALLTOALL)
#undef ADAPTIVE
