/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cost.c - the cost model (src/coll/cost.c) against hand-computed
 * values, the choice against every candidate's cost, and the machine
 * description's file: round trip and errors that name the line and key.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/cost.h"
#include "transport/shm.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/*
 * Round numbers: 1 us a sync (0.5 carrying its call), 2 us a switch, 1 GB/s memory, 2 GB/s
 * cache, 10 us and 0.1 GB/s a link.  The cache holds the window's slots (two 256 KiB a rank)
 * twice over and 1 MiB more: the host's buffers stay resident up to 512 KiB.
 */
#define SLOT_BYTES (256 << 10)
static struct collie__machine machine(int ranks, int hosts, int per_host, int cores)
{
    return (struct collie__machine){.ranks = ranks,
                                    .hosts = hosts,
                                    .ranks_per_host = per_host,
                                    .cores = cores,
                                    .slot_bytes = SLOT_BYTES,
                                    .ring_bytes = 1 << 10, /* two messages of 472 bytes */
                                    .host_alpha = 1e-6,
                                    .host_carry = 0.5e-6,
                                    .host_switch = 2e-6,
                                    .host_beta = 1e9,
                                    .host_cache_beta = 2e9,
                                    .host_resident_beta = 1e9, /* as memory: no residency */
                                    .host_alone_gain = 1,
                                    .host_cache_bytes = (1 << 20) + 4 * per_host * SLOT_BYTES,
                                    .host_attach_beta = 4e9,
                                    .host_attach_mem_beta = 2e9,
                                    .host_attach_call = 1e-6,
                                    .host_core_cache_bytes = 1, /* no exchange of two fits */
                                    .host_pair_beta = 1e9,
                                    .host_pair_ramp_bytes = 1,
                                    .host_far_sync = 0.1e-6,
                                    .host_far_cache_beta = 0.5e9,
                                    .link_alpha = 10e-6,
                                    .link_beta = 1e8,
                                    .links = 1,
                                    .int8_code_beta = 1e9,
                                    .sign_code_beta = 1e9};
}

/* The predicted seconds of algorithm `name` of collective coll; HUGE_VAL where coll has none. */
static double cost_of(const struct collie__machine *m, int coll, const char *name, size_t bytes,
                      int degree)
{
    const struct collie__algo *a = collie__algo_find(coll, name, strlen(name));
    return a ? a->cost(m, (double)bytes, degree) : HUGE_VAL;
}

static void expect_us(const struct collie__machine *m, enum collie__coll c, const char *a,
                      size_t bytes, double want_us, const char *what)
{
    double got = cost_of(m, c, a, bytes, 1) * 1e6;
    CHECK(fabs(got - want_us) <= 1e-9 * fmax(1, want_us), "%s: %.9g us, want %.9g", what, got,
          want_us);
}

/* Fails with `what` unless both machines price algorithm `a` of c at `bytes` alike. */
static void expect_same(const struct collie__machine *m, const struct collie__machine *plain,
                        enum collie__coll c, const char *a, size_t bytes, const char *what)
{
    CHECK(cost_of(m, c, a, bytes, 1) == cost_of(plain, c, a, bytes, 1), "%s", what);
}

/*
 * An allreduce's exchange of two ranks (cost.c's collie__cost_pair) while
 * it fits in a core's own cache: its buffers at host_pair_beta, and each
 * phase's first bytes from the peer at the ramp's.
 */
static void pair(void)
{
    struct collie__machine two = machine(2, 1, 2, 2);
    two.host_core_cache_bytes = 6 << 20;
    two.host_pair_beta = 2e9;
    two.host_pair_ramp = 1e-6;
    two.host_pair_ramp_bytes = 2000;
    /* sync 1 + 4 x 1000 B at 2 GB/s + 1000 B of the slot at 2 GB/s + the ramp's 1000 of 2000 B */
    expect_us(&two, COLLIE_COLL_ALLREDUCE, "oneshot", 1000, 1 + 2 + 0.5 + 0.5, "pair oneshot");
    /* 2 syncs + 2500 B + 1500 B of the slots (the own slice stored twice from the reduce's
     * block) + two phases that each read 500 B */
    expect_us(&two, COLLIE_COLL_ALLREDUCE, "twoshot", 1000, 2 + 1.25 + 0.75 + 2 * 0.25,
              "pair twoshot");
    /* beyond the ramp's bytes a phase pays it whole: 1 + 8 + 2 + 1 and 2 + 5 + 3 + 2 x 1 */
    expect_us(&two, COLLIE_COLL_ALLREDUCE, "oneshot", 4000, 12, "pair oneshot, the whole ramp");
    expect_us(&two, COLLIE_COLL_ALLREDUCE, "twoshot", 4000, 12, "pair twoshot, the whole ramp");
    /* 1 MiB through 256 KiB slots (3 MiB a core): four rounds, a sync and a ramp each */
    expect_us(&two, COLLIE_COLL_ALLREDUCE, "oneshot", 1 << 20,
              4 * 1 + 4 * 1048576 / 2e3 + 1048576 / 2e3 + 4 * 1, "pair oneshot, four rounds");
    /* a reduce is no exchange (collie__win_round): the root alone, as without the pair */
    struct collie__machine plain = machine(2, 1, 2, 2);
    expect_same(&two, &plain, COLLIE_COLL_REDUCE, "oneshot", 1000,
                "a reduce's oneshot is priced as an exchange of two");
    /* nor are 3 ranks, a crowded host, the far placement, or a call beyond the core's cache */
    struct collie__machine three = machine(3, 1, 3, 3), crowded = machine(2, 1, 2, 1), far = two,
                           spilled = two, three_plain = three, crowded_plain = crowded;
    three.host_core_cache_bytes = crowded.host_core_cache_bytes = 6 << 20;
    three.host_pair_beta = crowded.host_pair_beta = 2e9;
    far.far = 1;
    spilled.host_core_cache_bytes = 6 * 4000 - 1;
    expect_same(&three, &three_plain, COLLIE_COLL_ALLREDUCE, "oneshot", 1000,
                "3 ranks priced as an exchange of two");
    expect_same(&crowded, &crowded_plain, COLLIE_COLL_ALLREDUCE, "oneshot", 1000,
                "2 ranks on one core priced as an exchange of two");
    plain.far = 1;
    expect_same(&far, &plain, COLLIE_COLL_ALLREDUCE, "twoshot", 1000,
                "the far placement priced as an exchange of two");
    /* 2 x 4000 B of buffers + 4 slots of 4000 B: one byte over; sync 1 + 16 + 2 at memory's rate */
    expect_us(&spilled, COLLIE_COLL_ALLREDUCE, "oneshot", 4000, 1 + 16 + 2,
              "an exchange of two beyond the core's cache");

    /*
     * Two ranks' staged copies, 1000 B blocks: a sync + 3000 B copied at 2 GB/s, no ramp, and
     * beyond a core's own cache too while the host's holds both ranks' buffers.
     */
    expect_us(&two, COLLIE_COLL_ALLGATHER, "staged", 1000, 1 + 1.5, "pair staged allgather");
    expect_us(&two, COLLIE_COLL_ALLTOALL, "staged", 1000, 1 + 1.5, "pair staged alltoall");
    expect_us(&spilled, COLLIE_COLL_ALLTOALL, "staged", 4000, 1 + 6, "pair copies, a core spilled");
    /* 1 MiB blocks through 256 KiB slots in a host's cache of 64 MiB: 8 rounds, 3 MiB copied */
    struct collie__machine roomy = two;
    roomy.host_cache_bytes = 64 << 20;
    expect_us(&roomy, COLLIE_COLL_ALLTOALL, "staged", 1 << 20, 8 * 1 + 3 * 1048576 / 2e3,
              "pair copies, eight rounds");
    struct collie__machine copies_far = two, copies_spilled = two,
                           plain_spilled = machine(2, 1, 2, 2);
    copies_far.far = 1; /* plain.far is set above */
    expect_same(&copies_far, &plain, COLLIE_COLL_ALLGATHER, "staged", 1000,
                "the far placement's copies priced as a pair's");
    expect_same(&three, &three_plain, COLLIE_COLL_ALLTOALL, "staged", 1000,
                "3 ranks' copies priced as a pair's");
    expect_same(&crowded, &crowded_plain, COLLIE_COLL_ALLGATHER, "staged", 1000,
                "2 ranks on one core: copies priced as a pair's");
    /* both ranks' 4 x 1000 B of buffers and 4 slots, doubled, one byte over the host's cache */
    copies_spilled.host_cache_bytes = plain_spilled.host_cache_bytes =
        2 * (8000 + 4 * SLOT_BYTES) - 1;
    expect_same(&copies_spilled, &plain_spilled, COLLIE_COLL_ALLTOALL, "staged", 1000,
                "copies beyond the host's cache priced as a pair's");

    /*
     * A broadcast of two near ranks: the other's reads of the bytes the root has just written
     * (here 4 GB/s) set staged's pace, one sync a round; a tree's message beyond the ring's head
     * pays the root's copy in (1 GB/s, resident) and then the other's reads, a step half a sync.
     */
    struct collie__machine fresh = two, fresh_far = two, fresh_spilled = spilled;
    fresh.host_pair_fresh_beta = fresh_far.host_pair_fresh_beta = 4e9;
    fresh_spilled.host_pair_fresh_beta = 4e9;
    expect_us(&fresh, COLLIE_COLL_BROADCAST, "staged", 8000, 1 + 2, "fresh staged broadcast");
    expect_us(&fresh, COLLIE_COLL_BROADCAST, "tree", 8000, 0.5 + 8 + 2, "fresh broadcast tree");
    /* as adaptive runs it, synced first: the root's copy of the first round alone besides */
    CHECK(fabs(collie__adaptive_window_cost(&fresh, COLLIE_COLL_BROADCAST, 8000) * 1e6 -
               (1 + 2 + 8)) < 1e-9,
          "fresh staged broadcast from a synced start");
    /* messages within the ring's head, the far placement and a call beyond the core's cache
     * keep the rates without it (`two`'s rate is 0) */
    expect_same(&fresh, &two, COLLIE_COLL_BROADCAST, "tree", COLLIE__RING_HOT_BYTES / 4,
                "a broadcast tree within the ring's head priced at the fresh rate");
    fresh_far.far = 1;
    struct collie__machine two_far = two;
    two_far.far = 1;
    expect_same(&fresh_far, &two_far, COLLIE_COLL_BROADCAST, "staged", 8000,
                "the far placement's staged broadcast priced at the fresh rate");
    expect_same(&fresh_spilled, &spilled, COLLIE_COLL_BROADCAST, "staged", 8000,
                "a broadcast beyond the core's cache priced at the fresh rate");
    /*
     * A reduce's oneshot root reads its peer's slot just as fresh: a sync and 8000 B at
     * 4 GB/s; from a synced start (adaptive's) the peer's copy in first, 2 x 8000 B at 2 GB/s.
     */
    expect_us(&fresh, COLLIE_COLL_REDUCE, "oneshot", 8000, 1 + 2, "fresh oneshot reduce");
    CHECK(fabs(collie__adaptive_window_cost(&fresh, COLLIE_COLL_REDUCE, 8000) * 1e6 - (1 + 2 + 8)) <
              1e-9,
          "fresh oneshot reduce from a synced start");
    expect_same(&fresh_far, &two_far, COLLIE_COLL_REDUCE, "oneshot", 8000,
                "the far placement's oneshot reduce priced at the fresh rate");
    expect_same(&fresh_spilled, &spilled, COLLIE_COLL_REDUCE, "oneshot", 8000,
                "a reduce beyond the core's cache priced at the fresh rate");
}

static void hand_computed(void)
{
    struct collie__machine two = machine(2, 1, 2, 2), four = machine(4, 1, 4, 2);
    /* sync 1 + (4 * 1000 B at 1 GB/s + 1000 B at 2 GB/s) */
    expect_us(&two, COLLIE_COLL_ALLREDUCE, "oneshot", 1000, 1 + 4 + 0.5, "oneshot");
    /* 2 syncs + 2500 B at 1 GB/s (the peers' slices in, n slices reduced, the result out) +
     * 1500 B of the slots at 2 GB/s (the own slice is stored into the output from the reduce's
     * block, not read back from its slot) */
    expect_us(&two, COLLIE_COLL_ALLREDUCE, "twoshot", 1000, 2 + 2.5 + 0.75, "twoshot");
    /* 4 ranks on 2 cores: a sync is 1 + 2 x 2 us, and the bytes take twice as long */
    expect_us(&four, COLLIE_COLL_ALLREDUCE, "oneshot", 1000, 5 + 2 * (6 + 0.5),
              "oneshot oversubscribed");
    /* up to 24 bytes ride in the sync's lines: a carrying sync, no slot; 4 ranks add the switches */
    expect_us(&two, COLLIE_COLL_ALLREDUCE, "oneshot", 24, 0.5, "oneshot carried");
    expect_us(&two, COLLIE_COLL_REDUCE, "oneshot", 16, 0.5, "reduce carried");
    expect_us(&four, COLLIE_COLL_ALLREDUCE, "oneshot", 4, 0.5 + 2 * 2,
              "oneshot carried oversubscribed");
    /* rounds: 1 MiB through 256 KiB slots is 4 syncs */
    expect_us(&two, COLLIE_COLL_BROADCAST, "staged", 1 << 20,
              4 + (1.5 * 1048576 / 1e3 + 1048576 / 2e3), "broadcast");
    expect_us(&two, COLLIE_COLL_BARRIER, "sync", 0, 1, "barrier");
    /* a line from each rank beyond two the cores hold (0.5 us), a switch beyond the cores */
    struct collie__machine eight = machine(8, 1, 8, 8), crowded = machine(8, 1, 8, 4);
    eight.host_peer = crowded.host_peer = 0.5e-6;
    expect_us(&eight, COLLIE_COLL_BARRIER, "sync", 0, 1 + 6 * 0.5, "barrier of 8 cores");
    expect_us(&crowded, COLLIE_COLL_BARRIER, "sync", 0, 1 + 2 * 0.5 + 4 * 2,
              "barrier of 8 ranks on 4 cores");
    /*
     * The trees: with a core a rank, a step is half a sync and the root's
     * bytes (2 s a broadcast, 3 s a reduce) at the reduction's rate;
     * crowded, a sync's handoff a step and every rank's bytes, the cores
     * shared (4 ranks on 2: twice as long).
     */
    expect_us(&two, COLLIE_COLL_BROADCAST, "tree", 1000, 0.5 + 2, "broadcast tree");
    expect_us(&eight, COLLIE_COLL_REDUCE, "tree", 1000, 3 * (0.5 + 3), "reduce tree of 8 cores");
    expect_us(&four, COLLIE_COLL_BROADCAST, "tree", 1000, 2 + 2 * (2 + 1),
              "broadcast tree oversubscribed");
    /*
     * ... where two messages and their 40-byte headers do not fit in a pair's ring.  Where they
     * do, the ranks run calls ahead: the root's steps, as with a core a rank, but each a line
     * from a peer (0.25 us here), not half a sync: the receiver finds its messages in the cache.
     */
    struct collie__machine ahead = four;
    ahead.ring_bytes = 4096;
    ahead.host_peer = 0.25e-6;
    expect_us(&ahead, COLLIE_COLL_BROADCAST, "tree", 2008, 2 * (0.25 + 2 * 2.008),
              "broadcast tree oversubscribed, running ahead");
    expect_us(&ahead, COLLIE_COLL_REDUCE, "tree", 2008, 2 * (0.25 + 3 * 2.008),
              "reduce tree oversubscribed, running ahead");
    expect_us(&ahead, COLLIE_COLL_BROADCAST, "tree", 2009, 2 + 2 * (2 * 2.009 + 2 * 2.009 / 2),
              "broadcast tree oversubscribed, a message too many");
    /* beyond a slot, a reduce's root takes the whole message in before it combines: 7 s of memory */
    expect_us(&two, COLLIE_COLL_REDUCE, "tree", 1 << 20, 0.5 + 7 * 1048576 / 1e3,
              "reduce tree beyond a slot");
    /* ... on a crowded host too, the cores shared (a step's sync, 2 s of the rings) */
    expect_us(&four, COLLIE_COLL_REDUCE, "tree", 1 << 20,
              2 + 2 * (7 * 1048576 / 1e3 + 2 * 1048576 / 2e3),
              "reduce tree oversubscribed, beyond a slot");
    expect_us(&four, COLLIE_COLL_REDUCE, "tree", 256 << 10,
              2 + 2 * (3.5 * 262144 / 1e3 + 2 * 262144 / 2e3),
              "reduce tree oversubscribed, a slot");
    struct collie__machine pair = two;
    pair.host_peer = 0.5e-6; /* two ranks: none */
    expect_us(&pair, COLLIE_COLL_BARRIER, "sync", 0, 1, "barrier of 2 with a peer term");

    /*
     * direct: 2 syncs, 2 (n-1) calls per 4 slots of the call, (n-1)/n of it
     * copied in and out by each rank at the attach rate (of the cache while
     * 2 n s fits in 1 MiB, else of memory), its own slice read and written
     * (1 GB/s) and the copied pieces read and written in cache (2 GB/s).
     */
    struct collie__machine attach = two;
    attach.attach = 1;
    expect_us(&attach, COLLIE_COLL_ALLREDUCE, "direct", 65536,
              2 + 2 + 65536 / 4e3 + 65536 / 1e3 + 65536 / 2e3, "direct in cache");
    expect_us(&attach, COLLIE_COLL_ALLREDUCE, "direct", 1 << 20,
              2 + 2 + 1048576 / 2e3 + 1048576 / 1e3 + 1048576 / 2e3, "direct of memory");
    /* a reduce's slices weighted below 4 MiB: each rank moves two thirds of that; even above */
    expect_us(&attach, COLLIE_COLL_REDUCE, "direct", 1 << 20,
              2 + 2 + (1048576 / 2e3 + 1048576 / 1e3 + 1048576 / 2e3) * 2 / 3,
              "a reduce's direct, weighted slices");
    CHECK(cost_of(&attach, COLLIE_COLL_REDUCE, "direct", 4 << 20, 1) ==
              cost_of(&attach, COLLIE_COLL_ALLREDUCE, "direct", 4 << 20, 1),
          "a reduce's direct of even slices priced unlike an allreduce's");
    /* 2 ranks on 8 cores, a core alone gaining 2: the copies too, at twice their rate */
    struct collie__machine idle = machine(2, 1, 2, 8);
    idle.attach = 1;
    idle.host_alone_gain = 2;
    expect_us(&idle, COLLIE_COLL_ALLREDUCE, "direct", 65536,
              2 + 2 + (65536 / 4e3 + 65536 / 1e3 + 65536 / 2e3) / 2, "direct, cores idle");
    CHECK(isinf(cost_of(&two, COLLIE_COLL_ALLREDUCE, "direct", 65536, 1)),
          "direct is offered without cross-memory attach");
    four.attach = 1;
    CHECK(isinf(cost_of(&four, COLLIE_COLL_ALLREDUCE, "direct", 65536, 1)),
          "direct is offered with more ranks than cores");
    CHECK(isinf(cost_of(&four, COLLIE_COLL_ALLGATHER, "direct", 65536, 1)),
          "allgather's direct is offered with more ranks than cores");
    /*
     * Alltoall's direct is, each core making its 2 ranks' calls and copies in
     * turn: 2 syncs (5 us each), 2 x (3 calls + 3 blocks at the attach rate),
     * 2 blocks of the rank's own read and written, twice over.  While its
     * inputs and outputs, 32 blocks, fit in half the cache (5 MiB here): the
     * cache's rate (4 GB/s); beyond, memory's (2), and the 3 blocks copied in
     * write their lines to memory (1 GB/s), twice over.
     */
    expect_us(&four, COLLIE_COLL_ALLTOALL, "direct", 1000,
              10 + 2 * (3 + 3000 / 4e3) + 2 * 2000 / 1e3, "alltoall direct oversubscribed");
    expect_us(&four, COLLIE_COLL_ALLTOALL, "direct", 400000,
              10 + 2 * (3 + 1200000 / 2e3) + 2 * 1200000 / 1e3 + 2 * 800000 / 1e3,
              "alltoall direct of memory");
    /* 2 ranks: 2 syncs, 1 call, 1 block; its 4 input and 4 output blocks fit in half the cache */
    expect_us(&attach, COLLIE_COLL_ALLTOALL, "direct", 1 << 17,
              2 + 1 + 131072 / 4e3 + 2 * 131072 / 1e3, "alltoall direct, 2 ranks");
    /*
     * Allgather's direct of 1 MiB blocks at 2 ranks: its 6 MiB of buffers leave the 3 MiB
     * cache, so the peer's block comes at memory's attach rate (2 GB/s) and is written to
     * memory (1 GB/s); the rank's own block read and written (1 GB/s).
     */
    expect_us(&attach, COLLIE_COLL_ALLGATHER, "direct", 1 << 20,
              2 + 1 + 1048576 / 2e3 + 1048576 / 1e3 + 2 * 1048576 / 1e3,
              "allgather direct of memory");
    /*
     * adaptive: its own three syncs (the verdict's, rank 0's bookkeeping and tries), then
     * the cheaper of twoshot (2 + 2.5 + 0.75) and direct (4 + 0.25 + 1 + 0.5), as it learns them
     */
    expect_us(&attach, COLLIE_COLL_ALLREDUCE, "adaptive", 1000, 3 + 2 + 2.5 + 0.75, "adaptive");
    /* 4 ranks on 2 cores, where direct is not priced: its syncs (1 + 2 x 2 us) and the window */
    CHECK(fabs(cost_of(&four, COLLIE_COLL_ALLGATHER, "adaptive", 65536, 1) -
               (3 * 5e-6 + cost_of(&four, COLLIE_COLL_ALLGATHER, "staged", 65536, 1))) < 1e-12,
          "a crowded host's adaptive: its syncs and the window's time");
    struct collie__machine no_attach = four;
    no_attach.attach = 0;
    CHECK(isinf(cost_of(&no_attach, COLLIE_COLL_ALLGATHER, "adaptive", 65536, 1)),
          "adaptive is offered where direct cannot run");

    /*
     * A reduction's buffers while the host's fit in half the cache (2 ranks'
     * input and output of 1000 B in 1 MiB) move at host_resident_beta, and a
     * reduce's root reduces alone, host_alone_gain times faster.
     */
    struct collie__machine fast = two;
    fast.host_resident_beta = 4e9;
    fast.host_alone_gain = 2;
    /* sync 1 + every rank: copy in (1000 B at 4 GB/s, 1000 into a slot at 2), reduce 3000 at 4 */
    expect_us(&fast, COLLIE_COLL_ALLREDUCE, "oneshot", 1000, 1 + 0.75 + 0.75, "oneshot resident");
    /* the others copy their next input in while the root reduces: the root's round alone
     * (4000 B at 8 GB/s, 1000 into its slot at 4) */
    expect_us(&fast, COLLIE_COLL_REDUCE, "oneshot", 1000, 1 + 0.5 + 0.25,
              "reduce oneshot, the root alone");
    /* 2 syncs + every rank (1500 B at 4, 1000 at 2) + the root's copy out alone (1000 at 8, and
     * the peer's 500 from its slot at 4) */
    expect_us(&fast, COLLIE_COLL_REDUCE, "twoshot", 1000, 2 + 0.875 + 0.25,
              "reduce twoshot, the root alone");
    /* 256 KiB: 2 ranks' 1 MiB of buffers no longer fit in half the cache: memory's 1 GB/s */
    expect_us(&fast, COLLIE_COLL_ALLREDUCE, "oneshot", 262144, 1 + 4 * 262144 / 1e3 + 262144 / 2e3,
              "oneshot beyond the cache");
    /* a core alone gains what the idle cores leave at most: on 2 cores, 2 of a gain of 4 */
    struct collie__machine greedy = fast;
    greedy.host_alone_gain = 4;
    expect_us(&greedy, COLLIE_COLL_REDUCE, "oneshot", 1000, 1 + 0.5 + 0.25,
              "the gain, bounded by the cores");
    /* 4 ranks on 2 cores: the others' next copies in share the cores with a oneshot's root */
    struct collie__machine crowd = machine(4, 1, 4, 2);
    crowd.host_resident_beta = 4e9;
    crowd.host_alone_gain = 2;
    expect_us(&crowd, COLLIE_COLL_REDUCE, "oneshot", 1000,
              cost_of(&crowd, COLLIE_COLL_ALLREDUCE, "oneshot", 1000, 1) * 1e6,
              "a crowded host's oneshot reduce");
    /* a oneshot, where every rank reads every slot, gets no residency there */
    expect_us(&crowd, COLLIE_COLL_ALLREDUCE, "oneshot", 1000, 5 + 2 * (6 + 0.5),
              "a crowded host's oneshot: no residency");
    /*
     * a twoshot, one slice of each slot, does: 2 syncs + every rank (1750 B at 4 GB/s,
     * 1000 at 2) + the copy out (1000 at 4, the peers' 750 from the slots at 2), the cores
     * shared 2 ranks each
     */
    expect_us(&crowd, COLLIE_COLL_ALLREDUCE, "twoshot", 1000, 10 + 2 * 0.9375 + 2 * 0.625,
              "a crowded host's twoshot, resident");
    /* a twoshot reduce's copy out is the root's alone: a core's share, no gain, not spread */
    expect_us(&crowd, COLLIE_COLL_REDUCE, "twoshot", 1000, 10 + 2 * 0.9375 + 0.625,
              "a crowded host's twoshot reduce, the root's copy out alone");
    /* staged copies too: a sync + 1000 B at 4 GB/s and 1000 through a slot at 2, shared */
    expect_us(&crowd, COLLIE_COLL_BROADCAST, "staged", 1000, 5 + 2 * 0.75,
              "a crowded host's staged broadcast, resident");
    /* but not allgather's: a sync + 5000 B of buffers at 1 GB/s and 5000 of slots at 2, shared */
    expect_us(&crowd, COLLIE_COLL_ALLGATHER, "staged", 1000, 5 + 2 * (5 + 2.5),
              "a crowded host's staged allgather: memory's rate");
    /* where the ranks fit on the cores, allgather's and reduce_scatter's copies are resident:
     * a sync + 4000 B at 4 GB/s and 4000 of slots at 2 (allgather of 3 ranks; 2 are a pair),
     * or 3000 B and 4000 (reduce_scatter of 2) */
    struct collie__machine fast3 = machine(3, 1, 3, 3);
    fast3.host_resident_beta = 4e9;
    fast3.host_alone_gain = 2;
    expect_us(&fast3, COLLIE_COLL_ALLGATHER, "staged", 1000, 1 + 1 + 2,
              "staged allgather, resident");
    expect_us(&fast, COLLIE_COLL_REDUCE_SCATTER, "staged", 1000, 1 + 0.75 + 2,
              "staged reduce_scatter, resident");
    /* 2 ranks on 4 cores: every phase has idle cores beside it */
    struct collie__machine roomy = fast;
    roomy.cores = 4;
    expect_us(&roomy, COLLIE_COLL_ALLREDUCE, "oneshot", 1000, 1 + (0.75 + 0.75) / 2,
              "ranks fewer than the cores");
    /* a staged broadcast that fits the cache: its copies at the resident rate, the root's
     * under the others' (1000 B at 4 GB/s, 1000 into the slot at 2) */
    expect_us(&fast, COLLIE_COLL_BROADCAST, "staged", 1000, 1 + 0.25 + 0.5, "broadcast resident");
    /* as adaptive runs it, every rank synced first: the root's copy alone, then the others' */
    CHECK(fabs(collie__adaptive_window_cost(&fast, COLLIE_COLL_BROADCAST, 1000) * 1e6 -
               (1 + 0.5 + 0.5)) < 1e-9,
          "broadcast's window from a synced start");
    /* beyond the cache, as on `two`: 2 rounds, 1.5 x 512 KiB of memory and 512 KiB of slot */
    expect_us(&fast, COLLIE_COLL_BROADCAST, "staged", 524288, 2 + 1.5 * 524288 / 1e3 + 524288 / 2e3,
              "broadcast beyond the cache");
    /*
     * Pairwise alltoall on one host, 1000 B blocks: a step (a sync and a half), its own block
     * copied (2000 B at 4 GB/s), and 2000 B through the ring at 4 and 2 GB/s; beyond the
     * cache (`two`: no residency), the ring's user bytes at attach's rate of memory, 2 GB/s,
     * and its own block at memory's 1.
     */
    expect_us(&fast, COLLIE_COLL_ALLTOALL, "pairwise", 1000, 1.5 + 0.5 + 0.5 + 1,
              "pairwise on one host");
    expect_us(&two, COLLIE_COLL_ALLTOALL, "pairwise", 1000, 1.5 + 2 + 1 + 1,
              "pairwise on one host, of memory");

    struct collie__machine hosts = machine(4, 2, 2, 2);
    /* ring: 2 (n-1) steps of 10 us, 2 (n-1)/n of 1 MB at 0.1 GB/s */
    expect_us(&hosts, COLLIE_COLL_ALLREDUCE, "ring", 1000000, 60 + 15000, "ring");
    /* recursive doubling: 2 steps; one crosses, with both ranks of a host at once */
    expect_us(&hosts, COLLIE_COLL_ALLREDUCE, "rd", 1000000, 20 + 20000, "rd");
    /* pairwise: 3 steps; each rank sends its 2 other-host blocks, 2 ranks a link */
    expect_us(&hosts, COLLIE_COLL_ALLTOALL, "pairwise", 1000, 30 + 4 * 10, "alltoall");
    struct collie__machine wide = machine(8, 8, 1, 1);
    expect_us(&wide, COLLIE_COLL_BARRIER, "dissemination", 0, 30, "dissemination");
    hosts.links = 2; /* two links: the bytes take half as long */
    expect_us(&hosts, COLLIE_COLL_ALLREDUCE, "ring", 1000000, 60 + 7500, "2 links");

    CHECK(isinf(cost_of(&two, COLLIE_COLL_BROADCAST, "oneshot", 8, 1)),
          "a pair that does not exist costs HUGE_VAL");

    /*
     * Two hosts on one machine's 2 cores (shared_cores): 2 ranks a core, so a
     * step costs a core both ranks' 10 us and a 2 us switch to each (24 us),
     * every host's bytes go at shared_tcp_beta a core, and the slower of that
     * and the link bounds.
     */
    struct collie__machine shared = machine(4, 2, 2, 2);
    shared.shared_cores = 2;
    shared.shared_tcp_beta = 0.2e9;
    /* ring, 1000 B: the link 60 + 15; the cores 6 x 24 + 2 hosts x 1500 B / (2 x 0.2 GB/s) */
    expect_us(&shared, COLLIE_COLL_ALLREDUCE, "ring", 1000, 144 + 7.5,
              "shared cores: their latency");
    /* ring, 1 MB: the link 60 + 15000 against the cores' 144 + 7500 */
    expect_us(&shared, COLLIE_COLL_ALLREDUCE, "ring", 1000000, 60 + 15000,
              "shared cores: the link bounds");
    shared.shared_tcp_beta = 0.05e9; /* 144 + 2 x 1.5 MB / (2 x 0.05 GB/s) */
    expect_us(&shared, COLLIE_COLL_ALLREDUCE, "ring", 1000000, 144 + 30000,
              "shared cores: their TCP bounds");
    shared.shared_tcp_beta = 0; /* the link's rate: 144 + 2 x 1500 / (2 x 0.1 GB/s) */
    expect_us(&shared, COLLIE_COLL_ALLREDUCE, "ring", 1000, 144 + 15,
              "shared cores at the link's rate");
    /*
     * A message's CPU time of 4 us on a link whose latency is 10 (a shaped
     * link's queue holds the other 6): a step is the link's 10 and the
     * other rank's 4 + 2 and this one's switch, 18 us
     */
    shared.shared_tcp_alpha = 4e-6;
    expect_us(&shared, COLLIE_COLL_ALLREDUCE, "ring", 1000, 6 * 18 + 15,
              "shared cores: a message's CPU time below the link's latency");
    shared.shared_tcp_alpha = 0;
    /*
     * hierarchical, 1000 B: 2 syncs (1 us each), one rd step across (the cores'
     * 24 + 2 x 1000 / (2 x 0.2 GB/s) over the link's 10 + 10), and the
     * host's copies (3000 B at 1 GB/s, 2500 at 2) shared by 4 ranks on 2 cores
     */
    shared.shared_tcp_beta = 0.2e9;
    expect_us(&shared, COLLIE_COLL_ALLREDUCE, "hierarchical", 1000, 2 + 29 + 2 * (3 + 1.25),
              "shared cores: hierarchical");
    /*
     * 4 cores, a rank each: no switch, the cores' step (10 + 2 x 1000 / (4 x
     * 0.2 GB/s)) under the link's 20, and the copies a core each
     */
    shared.shared_cores = 4;
    expect_us(&shared, COLLIE_COLL_ALLREDUCE, "hierarchical", 1000, 2 + 20 + 4.25,
              "shared cores, a core a rank: hierarchical");
    shared.shared_cores = 0; /* hosts of their own: 2 + 20 + 4.25 */
    expect_us(&shared, COLLIE_COLL_ALLREDUCE, "hierarchical", 1000, 2 + 20 + 4.25,
              "hierarchical on hosts of their own");
    struct collie__machine one_host = four;
    one_host.shared_cores = 1; /* one host: its own cores already say it */
    expect_us(&one_host, COLLIE_COLL_ALLREDUCE, "oneshot", 1000, 5 + 2 * (6 + 0.5),
              "shared cores on one host");
}

static void expect_choice(const struct collie__machine *m, enum collie__coll c, size_t bytes,
                          const char *want, const char *what)
{
    const struct collie__algo *got = collie__select_on(m, c, bytes);
    CHECK(!strcmp(got->name, want), "%s: %s, want %s", what, got->name, want);
}

/* The choice is the cheapest candidate of the right scope, at every size. */
static void choice(void)
{
    static const char *const host[] = {"oneshot", "twoshot"};
    static const char *const net[] = {"ring", "rd", "rabenseifner", "hierarchical"};
    struct collie__machine ms[] = {machine(2, 1, 2, 2), machine(8, 1, 8, 2), machine(8, 2, 4, 4),
                                   machine(64, 8, 8, 8)};
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
        const struct collie__machine *m = &ms[k];
        const char *const *cand = m->hosts > 1 ? net : host;
        int ncand = m->hosts > 1 ? 4 : 2;
        for (size_t bytes = 4; bytes <= (64u << 20); bytes *= 4) {
            const struct collie__algo *a = collie__select_on(m, COLLIE_COLL_ALLREDUCE, bytes);
            double mine = a->cost(m, (double)bytes, 1);
            for (int i = 0; i < ncand; i++)
                CHECK(mine <= cost_of(m, COLLIE_COLL_ALLREDUCE, cand[i], bytes, 1),
                      "machine %zu, %zu bytes: %s is dearer than %s", k, bytes, a->name, cand[i]);
        }
    }
    struct collie__machine two = machine(2, 1, 2, 2);
    /* The trees, at the library's rates: on one host for small messages, with a core a rank or
     * not. */
    struct collie__machine hosts1[] = {two, machine(4, 1, 4, 2), machine(8, 1, 8, 2),
                                       machine(8, 1, 8, 8)};
    static const enum collie__coll rooted[] = {COLLIE_COLL_BROADCAST, COLLIE_COLL_REDUCE};
    for (int k = 0; k < 4; k++)
        collie__machine_default_rates(&hosts1[k]);
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 4; k++) {
            const struct collie__machine *h = &hosts1[k];
            CHECK(strcmp(collie__select_on(h, rooted[r], 64)->name, "tree") == 0,
                  "%d ranks on %d cores, 64 B %s: not the tree", h->ranks, h->cores,
                  collie__coll_name(rooted[r]));
            CHECK(strcmp(collie__select_on(h, rooted[r], 4u << 20)->name, "tree") != 0,
                  "%d ranks on %d cores, 4 MiB %s: the tree", h->ranks, h->cores,
                  collie__coll_name(rooted[r]));
        }
    /*
     * Alltoall at the library's rates on 2 cores (docs/NOTES.md,
     * *Alltoall on a crowded host*), a block's bytes: staged for small
     * blocks, direct for the middle (measured 1.3-2x faster), staged again
     * once the buffers spill the cache: from a rank's 4, 2 and 1 MiB at 4,
     * 8 and 16 ranks, where direct's copies into memory write there too
     * (measured 2026-11-29: staged 0.76-1.09x direct's time).  Where the
     * rates price staged first and direct came from the far hedge (the
     * middle at 4 and 8 ranks) and beyond the cache, adaptive runs them: it
     * learns which is faster and streams the window's slots far apart.
     */
    static const struct {
        int ranks;
        size_t staged, direct, large;
        const char *middle;
    } a2a[] = {{4, 4096, 64 << 10, 1 << 20, "adaptive"},
               {8, 2048, 64 << 10, 256 << 10, "adaptive"},
               {16, 1024, 32 << 10, 64 << 10, "direct"}};
    for (int k = 0; k < 3; k++) {
        struct collie__machine h = machine(a2a[k].ranks, 1, a2a[k].ranks, 2);
        collie__machine_default_rates(&h);
        expect_choice(&h, COLLIE_COLL_ALLTOALL, a2a[k].staged, "staged",
                      "crowded alltoall, small blocks");
        char what[64];
        snprintf(what, sizeof what, "crowded alltoall, %d ranks, middle blocks", a2a[k].ranks);
        expect_choice(&h, COLLIE_COLL_ALLTOALL, a2a[k].direct, a2a[k].middle, what);
        expect_choice(&h, COLLIE_COLL_ALLTOALL, a2a[k].large, "adaptive",
                      "crowded alltoall, blocks beyond the cache");
        h.attach = 0;
        expect_choice(&h, COLLIE_COLL_ALLTOALL, a2a[k].direct, "staged",
                      "crowded alltoall without cross-memory attach");
    }
    /* The other staged copies too, where the window's time hides adaptive's syncs */
    struct collie__machine crowded = machine(4, 1, 4, 2);
    collie__machine_default_rates(&crowded);
    expect_choice(&crowded, COLLIE_COLL_ALLGATHER, 16 << 20, "adaptive",
                  "crowded allgather, 16 MiB");
    expect_choice(&crowded, COLLIE_COLL_REDUCE_SCATTER, 16 << 20, "adaptive",
                  "crowded reduce_scatter, 16 MiB");
    expect_choice(&crowded, COLLIE_COLL_ALLGATHER, 4096, "staged", "crowded allgather, 4 KiB");
    /*
     * A crowded host's broadcast tree runs ahead while two messages fit in a ring (256 KiB at 4
     * ranks, 128 at 16): measured 1.7-2.4x faster than staged at 32-64 KiB, slower beyond.
     */
    struct collie__machine four2 = machine(4, 1, 4, 2), sixteen2 = machine(16, 1, 16, 2);
    collie__machine_default_rates(&four2);
    collie__machine_default_rates(&sixteen2);
    four2.ring_bytes = collie__shm_ring_bytes(4);
    sixteen2.ring_bytes = collie__shm_ring_bytes(16);
    expect_choice(&four2, COLLIE_COLL_BROADCAST, 64 << 10, "tree",
                  "4 ranks on 2 cores, 64 KiB broadcast");
    expect_choice(&four2, COLLIE_COLL_BROADCAST, 256 << 10, "staged",
                  "4 ranks on 2 cores, 256 KiB broadcast");
    expect_choice(&sixteen2, COLLIE_COLL_BROADCAST, 32 << 10, "tree",
                  "16 ranks on 2 cores, 32 KiB broadcast");
    expect_choice(&sixteen2, COLLIE_COLL_BROADCAST, 64 << 10, "staged",
                  "16 ranks on 2 cores, 64 KiB broadcast");
    /*
     * Two ranks on cores of their own: the tree while its messages stay in the ring's head,
     * staged to 16 KiB, and single copies from 64 KiB, where the other rank's reads of lines
     * the root has just written made staged 1.6-1.8x slower near (and 5x far).
     */
    struct collie__machine two2 = machine(2, 1, 2, 2);
    collie__machine_default_rates(&two2);
    two2.ring_bytes = collie__shm_ring_bytes(2);
    two2.slot_bytes = 512 << 10;
    expect_choice(&two2, COLLIE_COLL_BROADCAST, 4 << 10, "tree", "2 ranks, 4 KiB broadcast");
    expect_choice(&two2, COLLIE_COLL_BROADCAST, 16 << 10, "staged", "2 ranks, 16 KiB broadcast");
    expect_choice(&two2, COLLIE_COLL_BROADCAST, 64 << 10, "direct", "2 ranks, 64 KiB broadcast");
    expect_choice(&two2, COLLIE_COLL_BROADCAST, 128 << 10, "direct", "2 ranks, 128 KiB broadcast");
    /*
     * a reduce tree beyond a slot: measured 1.3-3x twoshot's time there (a tuned 36.8 GB/s
     * memory and 1.03 us switch, at 3.5 s of memory, chose the tree from 4 MiB at 4 ranks).
     */
    struct collie__machine tuned4 = four2;
    tuned4.host_beta = 36.758e9;
    tuned4.host_alpha = 0.47e-6;
    tuned4.host_switch = 1.03e-6;
    for (size_t bytes = 1u << 20; bytes <= (64u << 20); bytes *= 4)
        expect_choice(&tuned4, COLLIE_COLL_REDUCE, bytes, "twoshot",
                      "4 ranks on 2 cores, tuned, a reduce beyond a slot");
    /*
     * Across hosts a reduce's leaves send and move on: the tree for small messages (measured
     * over 1 Gbit/s links, 8 B-4 KiB: 1.2-5.7x faster than recursive doubling, which is never
     * chosen there), and the ring's fewer bytes a link for large ones among many hosts.
     */
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
        for (size_t bytes = 4; ms[k].hosts > 1 && bytes <= (64u << 20); bytes *= 4) {
            const char *name = collie__select_on(&ms[k], COLLIE_COLL_REDUCE, bytes)->name;
            CHECK(strcmp(name, "rd") != 0, "machine %zu, %zu bytes: reduce:rd across hosts", k,
                  bytes);
            CHECK(bytes > 4096 || strcmp(name, "tree") == 0,
                  "machine %zu, %zu bytes: reduce across hosts is %s, not the tree", k, bytes,
                  name);
        }
    struct collie__machine many = machine(64, 8, 8, 8);
    expect_choice(&many, COLLIE_COLL_REDUCE, 64u << 20, "ring", "64 MiB reduce across 8 hosts");
    /*
     * reduce_scatter across hosts: recursive halving, the links last, where the ranks are a
     * power of two on each host (measured at 2 hosts of 2, 32 KiB: the ring 209 us, Open MPI's
     * halving 139); the ring where they are not, which halving would run anyway, and with one
     * rank a host, where halving saves the links nothing.
     */
    for (size_t k = 2; k < sizeof ms / sizeof ms[0]; k++)
        for (size_t bytes = 4; bytes <= (64u << 20); bytes *= 4)
            expect_choice(&ms[k], COLLIE_COLL_REDUCE_SCATTER, bytes, "halving",
                          "reduce_scatter across hosts of a power of two ranks each");
    struct collie__machine odd = machine(6, 2, 3, 3), single = machine(4, 4, 1, 1);
    expect_choice(&odd, COLLIE_COLL_REDUCE_SCATTER, 1u << 20, "ring",
                  "reduce_scatter across hosts of 3 ranks each");
    expect_choice(&single, COLLIE_COLL_REDUCE_SCATTER, 8u << 20, "ring",
                  "reduce_scatter across hosts of one rank each");

    /*
     * 1 MB on 2 ranks with cross-memory attach of memory at 0.25 GB/s: twoshot
     * 4258 us, direct 5504, within 1.6x (LEARN_SPAN) of each other: adaptive,
     * its three syncs (3 us) over twoshot's time, times them in the call.  Where
     * direct takes over 1.6x twoshot's time (at 0.05 GB/s: 21504 us), twoshot;
     * at 2 GB/s (2004 us), over 1.6x faster, direct; without attach, twoshot.
     */
    two.attach = 1;
    two.host_attach_mem_beta = 0.25e9;
    expect_choice(&two, COLLIE_COLL_ALLREDUCE, 1000000, "adaptive",
                  "allreduce where twoshot and direct are within 1.6x");
    two.host_attach_mem_beta = 0.05e9;
    expect_choice(&two, COLLIE_COLL_ALLREDUCE, 1000000, "twoshot",
                  "twoshot where direct is over 1.6x slower");
    two.host_attach_mem_beta = 2e9;
    expect_choice(&two, COLLIE_COLL_ALLREDUCE, 1000000, "direct",
                  "direct where it is over 1.6x faster");
    two.attach = 0;
    two.host_attach_mem_beta = 0.25e9;
    CHECK(strcmp(collie__select_on(&two, COLLIE_COLL_ALLREDUCE, 1000000)->name, "twoshot") == 0,
          "adaptive without cross-memory attach");
    two.attach = 1;
    /*
     * A reduce's window is oneshot, its root alone at twice the rate: 2254 us
     * (4 syncs, 4 MB and 1 MB into the slots at 2 and 4 GB/s); the same with
     * its reads at the far rate, 0.25 GB/s, 10004.  Direct at 0.15 GB/s takes
     * 8171, over 1.6x oneshot's time, so adaptive does not learn; but it hedges:
     * its three syncs and oneshot from a synced start, 2820, beat direct near,
     * and far its syncs and direct, 8174, beat oneshot's 10004.
     */
    struct collie__machine alone = two;
    alone.host_alone_gain = 2;
    alone.host_far_cache_beta = 0.25e9;
    alone.host_attach_mem_beta = 0.15e9;
    expect_choice(&alone, COLLIE_COLL_REDUCE, 1000000, "adaptive",
                  "reduce where adaptive hedges the placement");
    alone.host_far_cache_beta = 2e9;
    expect_choice(&alone, COLLIE_COLL_REDUCE, 1000000, "oneshot",
                  "oneshot where far CPUs do not slow it and direct is over 1.6x slower");
    /*
     * 4 KB with the far rate at 0.02 GB/s: oneshot 10.2 us near, 513 far, over
     * FAR_RISK (2.5) times direct's 11.2; adaptive's oneshot from a synced
     * start, 19.4, is over 1.6x direct's, and adaptive would not beat it near.
     */
    alone.host_far_cache_beta = 0.02e9;
    alone.host_attach_mem_beta = 0.25e9;
    expect_choice(&alone, COLLIE_COLL_REDUCE, 4096, "direct",
                  "direct where the window risks over 2.5x its time");

    /*
     * The library's own rates, 2 ranks on 2 cores (docs/NOTES.md, *Reduce
     * at 2 ranks*, *Timed in the call*): the tree at 16 KiB, where a
     * oneshot's root reads lines its peer has just written (1.95 us against
     * 1.90); from 64 KiB adaptive, which hedges the placement and times
     * oneshot against direct, where a reduce's weighted slices bring direct
     * within 1.6x (256 KiB: oneshot 27 us, direct 28).  The allreduce's oneshot
     * at 16 KiB (2.5 us against twoshot's 2.7; measured 2.4-2.6 against
     * 3.1), adaptive from 64 KiB.
     */
    struct collie__machine own = machine(2, 1, 2, 2);
    collie__machine_default_rates(&own);
    static const struct {
        size_t bytes;
        const char *reduce, *allreduce;
    } want[] = {{16384, "tree", "oneshot"},        {65536, "adaptive", "adaptive"},
                {262144, "adaptive", "adaptive"},  {1 << 20, "adaptive", "adaptive"},
                {4 << 20, "adaptive", "adaptive"}, {64 << 20, "adaptive", "adaptive"}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        char what[64];
        snprintf(what, sizeof what, "reduce of %zu bytes on 2 ranks", want[k].bytes);
        expect_choice(&own, COLLIE_COLL_REDUCE, want[k].bytes, want[k].reduce, what);
        snprintf(what, sizeof what, "allreduce of %zu bytes on 2 ranks", want[k].bytes);
        expect_choice(&own, COLLIE_COLL_ALLREDUCE, want[k].bytes, want[k].allreduce, what);
    }
    /*
     * With the single copy's call this Xeon measures (0.43 us), direct is
     * close enough that a window of 16 KiB risks over 2.5x its time far
     * apart: adaptive, whose window there is oneshot (measured 2.1-2.2 us at
     * 11 KB against twoshot's 2.5-2.6 within adaptive), twoshot from 128 KiB.
     */
    struct collie__machine xeon = own;
    xeon.host_attach_call = 0.43e-6;
    expect_choice(&xeon, COLLIE_COLL_ALLREDUCE, 16384, "adaptive", "2 ranks' 16 KiB, a fast call");
    CHECK(!strcmp(collie__adaptive_window(&xeon, COLLIE_COLL_ALLREDUCE, 16384)->name, "oneshot"),
          "adaptive's window at 16 KiB on 2 ranks is not oneshot");
    CHECK(!strcmp(collie__adaptive_window(&xeon, COLLIE_COLL_ALLREDUCE, 131072)->name, "twoshot"),
          "adaptive's window at 128 KiB on 2 ranks is not twoshot");
    /*
     * An allgather of 32 KiB blocks there: staged 2.33 us, direct 9.46,
     * adaptive 3.17, over 30% (PROBE_SHARE) above staged: staged, though
     * it would hedge the placement.  Of 128 KiB (8.47, 31.9, 9.31): adaptive.
     */
    expect_choice(&own, COLLIE_COLL_ALLGATHER, 32768, "staged",
                  "staged where adaptive would add over 30%");
    expect_choice(&own, COLLIE_COLL_ALLGATHER, 131072, "adaptive",
                  "adaptive where it adds under 30%");
    /*
     * Alltoall of 2 ranks at the library's rates: staged up to 8 KiB blocks,
     * then adaptive, which hedges staged's copies against the placement
     * where the CPUs share no cache (over 2.5x direct's time there), and
     * whose window is staged: pairwise's exchange, not offered on one host
     * (select.c), costs more (measured at 32 KiB blocks near, adaptive took
     * 2.4 us with staged's window, 5.1-5.7 with pairwise's).
     */
    expect_choice(&own, COLLIE_COLL_ALLTOALL, 8192, "staged", "2 ranks' small alltoall");
    for (size_t bytes = 32768; bytes <= (32u << 20); bytes *= 4) {
        expect_choice(&own, COLLIE_COLL_ALLTOALL, bytes, "adaptive",
                      "2 ranks' alltoall from 32 KiB blocks");
        CHECK(!strcmp(collie__adaptive_window(&own, COLLIE_COLL_ALLTOALL, bytes)->name, "staged"),
              "adaptive's window for 2 ranks' alltoall of %zu B blocks is not staged", bytes);
    }
}

static char *text_of(const struct collie__machine *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    collie__machine_write(m, f);
    fclose(f);
    return text;
}

static int read_text(struct collie__machine *m, const char *text, char *err, size_t errlen)
{
    char path[] = "/tmp/collie-test-machine-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    int rc = collie__machine_read(m, path, err, errlen);
    remove(path);
    return rc;
}

static void description(void)
{
    struct collie__machine m = machine(64, 8, 8, 16), back = {0};
    m.host_beta = 12.345678901234e9;
    m.link_alpha = 3.3e-6;
    char err[512], *text = text_of(&m);
    CHECK(read_text(&back, text, err, sizeof err) == 0, "reading back: %s", err);
    char *again = text_of(&back);
    CHECK(!strcmp(text, again), "the file does not round-trip:\n%s\nvs\n%s", text, again);
    for (int c = 0; c < COLLIE_COLL_COUNT; c++)
        CHECK(cost_of(&m, (enum collie__coll)c, "ring", 1 << 20, 1) ==
                  cost_of(&back, (enum collie__coll)c, "ring", 1 << 20, 1),
              "collective %d predicts otherwise after the round trip", c);
    free(text);
    free(again);

    /* Only the keys present change; comments and blanks are skipped. */
    struct collie__machine part = machine(2, 1, 2, 2);
    CHECK(read_text(&part, "# a comment\n\n  link_latency_us = 7.5  # one hop\n", err,
                    sizeof err) == 0,
          "a partial file: %s", err);
    CHECK(fabs(part.link_alpha - 7.5e-6) < 1e-18 && part.ranks == 2 && part.host_alpha == 1e-6,
          "a partial file changed the wrong keys");

    static const struct {
        const char *text, *want;
    } bad[] = {{"ranks = 4\nbogus = 1\n", "line 2: unknown key 'bogus'"},
               {"link_bandwidth_gbs = fast\n", "link_bandwidth_gbs = 'fast'"},
               {"ranks = 2.5\n", "expected a positive whole number"},
               {"cores = -1\n", "expected a positive whole number"},
               {"hosts 4\n", "line 1: 'hosts 4': expected key = value"},
               {"host_latency_us = 0\n", "expected a positive number"},
               {"host_alone_gain = 0.5\n", "host_alone_gain = '0.5': expected 1 or more"},
               {"shared_cores = 1.5\n", "expected a positive whole number, or 0"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        struct collie__machine x = machine(2, 1, 2, 2);
        err[0] = '\0';
        CHECK(read_text(&x, bad[k].text, err, sizeof err) == -1 && strstr(err, bad[k].want),
              "'%s': error '%s', want '%s'", bad[k].text, err, bad[k].want);
    }
    CHECK(collie__machine_read(&m, "/nonexistent/machine", err, sizeof err) == -1 &&
              strstr(err, "/nonexistent/machine"),
          "a missing file: '%s'", err);

    struct collie__machine p = {.ranks = 10, .hosts = 4};
    CHECK(collie__machine_check(&p, err, sizeof err) == 0 && p.ranks_per_host == 3 &&
              p.cores == 1 && p.links == 1 && p.slot_bytes > 0,
          "check: %d per host, %d cores", p.ranks_per_host, p.cores);
    struct collie__machine q = {.ranks = 2, .hosts = 3};
    CHECK(collie__machine_check(&q, err, sizeof err) == -1 && strstr(err, "more hosts than ranks"),
          "check: '%s'", err);
}

/*
 * Error-feedback codes between hosts (cost_ef.c) on the round-number machine
 * (10 us, 0.1 GB/s links, codes handled at 1 GB/s): the exact ring and
 * the codes by hand, and the choice as the links speed up.
 */
static void error_feedback(void)
{
    struct collie__machine m = machine(8, 4, 2, 2);
    double s = 1e6, sent = 2 * 3 / 4.0 * s;
    double exact = 6 * 10e-6 + sent / 1e8;
    double int8 = 6 * 10e-6 + sent / (1024.0 / 260) / 1e8 + s / 1e9;
    double sign = 6 * 10e-6 + sent / (1024.0 / 36) / 1e8 + s / 1e9;
    CHECK(fabs(collie__cost_ef(&m, 1, 0, s) - exact) < 1e-9, "exact: %g, by hand %g",
          collie__cost_ef(&m, 1, 0, s), exact);
    CHECK(fabs(collie__cost_ef(&m, 1, 1, s) - int8) < 1e-9, "INT8: %g, by hand %g",
          collie__cost_ef(&m, 1, 1, s), int8);
    CHECK(fabs(collie__cost_ef(&m, 2, 1, s) - sign) < 1e-9, "SIGN: %g, by hand %g",
          collie__cost_ef(&m, 2, 1, s), sign);
    /* INT8 pays while 1.5 (1 - 260/1024) / beta > 1 / 1e9: below 1.12 GB/s; SIGN below 1.45 */
    static const struct {
        double beta;
        int int8, sign;
    } at[] = {{0.0125e9, 1, 1}, {0.125e9, 1, 1}, {1.0e9, 1, 1}, {1.3e9, 0, 1}, {2e9, 0, 0}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        m.link_beta = at[i].beta;
        CHECK(collie__cost_ef_codes_pay(&m, 1) == at[i].int8, "INT8 at %g GB/s: %d", at[i].beta,
              collie__cost_ef_codes_pay(&m, 1));
        CHECK(collie__cost_ef_codes_pay(&m, 2) == at[i].sign, "SIGN at %g GB/s: %d", at[i].beta,
              collie__cost_ef_codes_pay(&m, 2));
    }
    /* Hosts that share 2 cores: 4 hosts' codes run at half the rate; one host codes nothing. */
    m.link_beta = 1e9;
    m.shared_cores = 2;
    m.shared_tcp_beta = 100e9; /* (the links, not the cores, bound the bytes) */
    CHECK(!collie__cost_ef_codes_pay(&m, 1), "INT8 on 4 hosts sharing 2 cores at 1 GB/s pays");
    m = machine(2, 1, 2, 2);
    CHECK(!collie__cost_ef_codes_pay(&m, 2), "codes pay on one host");
}

int main(void)
{
    hand_computed();
    pair();
    error_feedback();
    choice();
    description();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("cost model: all checks passed\n");
    return failures ? 1 : 0;
}
