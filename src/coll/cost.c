/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cost.c - cost.h: every algorithm's time on a machine.  Each function
 * follows its algorithm's file step by step; `s` is the call's bytes as the
 * API takes them (cost.h), n the ranks, L the ranks per host, H the hosts.
 */
#include <math.h>

#include "../transport/shm.h"
#include "../transport/wire.h"
#include "algo.h"
#include "cost.h"

typedef const struct collie__machine machine;

static double log2_steps(int n)
{
    int steps = 0;
    while ((1 << steps) < n)
        steps++;
    return steps;
}

/* A group that is not a power of two folds in and out first (fold.c): two more steps. */
static double fold_steps(int n) { return (n & (n - 1)) ? 2 : 0; }

/* ---- within a host: the shared-memory window (ranks = L, hosts = 1) ---- */

/* A host whose ranks outnumber its cores: its rates and its trees were fitted apart. */
static int crowded(machine *m) { return m->ranks_per_host > m->cores; }

/*
 * One sync of the host's ranks (shm.c's collie__win_sync: every rank reads
 * every peer's flag in turn): two ranks' round trip, a line from each
 * further rank the cores hold, and a context switch per rank they cannot.
 */
static double sync_cost(machine *m)
{
    int extra = m->ranks_per_host - m->cores;
    int busy = extra > 0 ? m->cores : m->ranks_per_host;
    return m->host_alpha + (busy > 2 ? busy - 2 : 0) * m->host_peer +
           (extra > 0 ? extra : 0) * m->host_switch;
}

/*
 * How many times its share of the host's traffic one core gets while only
 * `busy` of the cores stream: the rates are each core's share when all of
 * them do, and the host's caches and memory serve a core with idle
 * neighbours up to host_alone_gain times that (measured on 2 cores: a
 * reduce's root, reducing alone, took half an allreduce's time).
 */
static double gain(machine *m, int busy)
{
    double spare = (double)m->cores / busy,
           g = spare < m->host_alone_gain ? spare : m->host_alone_gain;
    return g > 1 ? g : 1;
}

/* The staging slots' rate: of the cache, or where the CPUs share none (cost.h's `far`). */
static double slot_beta(machine *m) { return m->far ? m->host_far_cache_beta : m->host_cache_beta; }

/*
 * Seconds for every rank of the host to move `user` bytes of its buffers at
 * `user_beta` and `slot` bytes of the staging slots, copied in and out, the
 * cores shared among the ranks.  The copies' user_beta is memory's.
 */
static double move(machine *m, double user_beta, double user, double slot)
{
    int L = m->ranks_per_host, busy = L < m->cores ? L : m->cores;
    double share = (double)L / busy;
    if (m->hosts > 1 && m->shared_cores > 0 && (double)m->ranks / m->shared_cores > share)
        share = (double)m->ranks / m->shared_cores; /* every host's ranks on the same cores */
    return share * (user / user_beta + slot / slot_beta(m)) / gain(m, busy);
}

/*
 * The same for one rank while the others wait: a root's share of a reduce.
 * Where the ranks fit on the cores, the root's core gets up to
 * host_alone_gain times its share.  On a crowded host the others stay
 * runnable beside it (their next call's copy in), so the root's core gets
 * a core's share and no more, but the others' work is counted already and
 * the root's is not spread over them: measured at 4 and 8 ranks on 2 cores,
 * 256 KiB-64 MiB, a twoshot reduce took 0.45-0.84 of a twoshot allreduce's
 * time (17 of 18 rows), where charging the root's copy out to every rank
 * said 1.0.  A oneshot's root is not alone there: oneshot() says why.
 */
static double alone(machine *m, double user_beta, double user, double slot)
{
    double work = user / user_beta + slot / slot_beta(m);
    return crowded(m) ? work : work / gain(m, 1);
}

/*
 * Whether `bytes` of the host's buffers stay in its cache from one call to
 * the next: they and the window's slots, two a rank, fit in half of it
 * (measured at 2 ranks, 4 MiB, whose 16 MiB of buffers are half of 32 MiB:
 * an allreduce and a reduce at memory's rate, 0.94-1.06 and 0.75-1.1 ms,
 * where the resident rate said 0.65-0.72 and 0.37-0.5).
 */
static int fits_cache(machine *m, double bytes)
{
    double slots = 2.0 * m->ranks_per_host * (double)m->slot_bytes;
    return 2 * (bytes + slots) <= (double)m->host_cache_bytes;
}

/*
 * A reduction's rate of the user's buffers and of the slots it reads (its
 * arithmetic keeps to that pace): host_resident_beta while the host's
 * inputs and outputs, every rank's, fit in half the cache, as a loop that
 * reduces the same buffers finds them (fitted to 2 ranks at 16 KiB-4 MiB);
 * memory's beyond.  Where the CPUs share no
 * cache, the slots it reads cross between them, at the slots' rate there at
 * most (measured at 2 ranks: a oneshot reduce 3.7-3.8x slower at 16-64
 * KiB).  The copies' user bytes keep memory's rate: their crossovers
 * against the single copies were measured so.
 */
static double resident_beta(machine *m, double s)
{
    int resident = fits_cache(m, 2 * s * m->ranks_per_host);
    double beta =
        resident && m->host_resident_beta > m->host_beta ? m->host_resident_beta : m->host_beta;
    return m->far && beta > m->host_far_cache_beta ? m->host_far_cache_beta : beta;
}

/*
 * A oneshot's, where every rank reduces every rank's slot: resident only
 * where the ranks fit on the cores.  On a crowded host each rank reads all
 * the slots while the ranks that share its core stage their next ones
 * (measured at 4 and 8 ranks on 2 cores, 256 KiB: a oneshot allreduce took
 * 1.6-3.1x twoshot's time, which reads one slice of each slot).
 */
static double reduction_beta(machine *m, double s)
{
    return crowded(m) ? resident_beta(m, HUGE_VAL) : resident_beta(m, s);
}

/* Rounds of `bytes` through a slot. */
static double rounds(machine *m, double bytes)
{
    double r = ceil(bytes / (double)m->slot_bytes);
    return r > 1 ? r : 1;
}

/*
 * The window algorithms, per rank (the busiest, for the rooted ones): the
 * bytes each moves of its buffers and of the slots, s the call's bytes.
 */

/* Who works while a oneshot reduces (oneshot()). */
enum shot {
    EVERY_RANK,  /* allreduce: every rank reduces */
    ROOT_ALONE,  /* reduce: the others return after the sync and copy their next input in
                    (of the next round, and of the next call) while the root reduces */
    ROOT_SYNCED, /* the same in a call that starts with every rank synced (adaptive's sync):
                    its first round runs as an allreduce's, the root waiting on every copy
                    (measured: 20 us more than ROOT_ALONE at 2 ranks from 256 KiB) */
};

/*
 * Copy in (read s, write a slot), one sync, reduce n slots into the result.
 * Measured at 2 ranks, a loop of reduces takes half a loop of allreduces'
 * time: its root works alone.
 */
static double oneshot(machine *m, double s, enum shot shot)
{
    if (s <= COLLIE__WIN_CARRY) /* the data rides in the sync's lines: no slot, one round */
        return sync_cost(m) - m->host_alpha + m->host_carry;
    double n = m->ranks_per_host, b = reduction_beta(m, s), r = rounds(m, s);
    double together = shot == EVERY_RANK ? s : shot == ROOT_SYNCED ? s / r : 0, rest = s - together;
    /*
     * On a crowded host the others' next copies in share the cores with the root's reduce of
     * every slot: measured at 8 ranks on 2 cores, 1-64 MiB, A/B against twoshot (12 rounds),
     * a oneshot reduce took 0.99-1.15x its time, where the root alone said 0.53.
     */
    double root = crowded(m) ? move(m, b, (2 + n) * rest, rest) : alone(m, b, (2 + n) * rest, rest);
    return r * sync_cost(m) + move(m, b, (2 + n) * together, together) + root;
}

/*
 * Copy in, reduce a 1/n slice of n slots into a slot, two syncs, copy all
 * slices out: every rank, or (reduce) the root alone.  Each slot's line is
 * read once, so the host's buffers stay resident on a crowded host too
 * (measured at 4 and 8 ranks on 2 cores, 256 KiB: 84-94 and 183-238 us,
 * where memory's rate said 140-202 and 285-409).
 */
static double twoshot(machine *m, double s, int rooted)
{
    double n = m->ranks_per_host, b = resident_beta(m, s);
    double out = rooted ? alone(m, b, s, s) : move(m, b, s, s);
    return 2 * rounds(m, s) * sync_cost(m) + move(m, b, 2 * s, (1 + 1 / n) * s) + out;
}

/*
 * Alltoall's single copies (shm.h's attach) need the kernel's leave and a
 * peer.  They are offered on a crowded host too: no reduction rides on the
 * window's copies there, and measured at 4, 8 and 16 ranks on 2 cores
 * `direct` beat
 * `staged` by up to 2x from 64-512 KiB to 1-4 MiB, as attach() costs it;
 * beyond, its copies into memory lose (written()).
 */
static int attach_offered_alltoall(machine *m) { return m->attach && m->ranks_per_host >= 2; }

/*
 * The others' also need ranks that fit on the cores: measured
 * oversubscribed, they are what the model predicts, but twoshot is 2x
 * faster there than the model says, so comparing the two
 * would choose wrong.
 */
static int attach_offered(machine *m) { return attach_offered_alltoall(m) && !crowded(m); }

/*
 * Whether those copies stay in cache: while the host's bytes that must stay
 * there (`resident`: for most, all ranks' inputs and outputs) fit in half
 * of it (measured: 2 ranks' 8 MiB allreduce, 32 MiB of buffers in a 32 MiB
 * cache, copies at memory's rate).
 */
static int attach_resident(machine *m, double resident)
{
    return 2 * resident <= (double)m->host_cache_bytes;
}

/* The rate of those copies: of the cache, or of memory. */
static double attach_beta(machine *m, double resident)
{
    return attach_resident(m, resident) ? m->host_attach_beta : m->host_attach_mem_beta;
}

/*
 * Seconds for each of the host's ranks, all copying at once, to make
 * `calls` system calls that copy `bytes`: the attach rates, like the
 * others, are a core's share while every core streams, and ranks that leave
 * cores idle get up to host_alone_gain times it (measured on 16 vCPUs: 16
 * ranks' 64 MiB direct allreduce ran 1.75x slower than 2 ranks' rate,
 * tuned on a pair, predicted).  On a crowded host each core makes its
 * ranks' calls and copies in turn, as move() has it (measured at 16 ranks
 * on 2 cores: a 16 KiB alltoall's 15 calls a rank took 157 us, where the
 * window's sync took 40).
 */
static double attach(machine *m, double calls, double bytes, double resident)
{
    double share = crowded(m) ? (double)m->ranks_per_host / m->cores : 1;
    return share * (calls * m->host_attach_call +
                    bytes / (attach_beta(m, resident) * gain(m, m->ranks_per_host)));
}

/*
 * Direct (direct.c): two syncs; each rank copies its slice of every peer's
 * input in, and the reduced slice out to every peer, in pieces of
 * COLLIE__DIRECT_PIECE_SLOTS slots / n, by a system call each, at the
 * attach rate; it reads and writes its own slice, and the pieces it copied,
 * in cache.
 */
static double direct(machine *m, double s)
{
    double n = m->ranks_per_host, slice = s / n;
    if (!attach_offered(m))
        return HUGE_VAL;
    double calls = 2 * (n - 1) * ceil(s / (COLLIE__DIRECT_PIECE_SLOTS * (double)m->slot_bytes));
    return 2 * sync_cost(m) + attach(m, calls, 2 * (n - 1) * slice, 2 * s * n) +
           move(m, reduction_beta(m, s), 2 * slice, 2 * (n - 1) * slice);
}

/*
 * What copies of `bytes` into the user's output add where the host's
 * buffers (`resident`, as attach_resident() takes it) leave the cache: the
 * attach rates are of copies into a piece in cache (direct.c's, which
 * `--tune` times), and a copy into memory writes its lines there too, at
 * memory's rate (measured on 2 cores, alltoall of 64 MiB, `direct`: 16.3,
 * 34.6 and 83 ms at 2, 4 and 8 ranks, where the attach rate alone said
 * 11.2, 24 and 50).
 */
static double written(machine *m, double bytes, double resident)
{
    return attach_resident(m, resident) ? 0 : move(m, m->host_beta, bytes, 0);
}

/*
 * The other collectives' single copies (broadcast_direct.c, ...): two
 * syncs; each rank copies what it receives from the peers' buffers, a
 * system call per peer's block (per piece, for reduce_scatter's reduction),
 * all ranks at once; allgather and alltoall copy their own block too.  In
 * a broadcast the root writes the last 1/n of the message into every
 * receiver while each reads the rest: (n-1)/n of it each, the root's n-1
 * calls the longest.
 */
static double broadcast_direct(machine *m, double s)
{
    double n = m->ranks_per_host, share = (n - 1) / n * s; /* what each copies */
    if (!attach_offered(m))
        return HUGE_VAL;
    return 2 * sync_cost(m) + attach(m, n - 1, share, n * s) + written(m, share, n * s);
}

static double gather_direct(machine *m, double s, double resident, int offered)
{
    double n = m->ranks_per_host;
    if (!offered)
        return HUGE_VAL;
    return 2 * sync_cost(m) + attach(m, n - 1, (n - 1) * s, resident) +
           written(m, (n - 1) * s, resident) + move(m, m->host_beta, 2 * s, 0);
}

static double reduce_scatter_direct(machine *m, double s)
{
    double n = m->ranks_per_host;
    if (!attach_offered(m))
        return HUGE_VAL;
    double piece = COLLIE__DIRECT_PIECE_SLOTS * (double)m->slot_bytes / n;
    return 2 * sync_cost(m) + attach(m, (n - 1) * ceil(s / piece), (n - 1) * s, n * (n + 1) * s) +
           move(m, m->host_beta, 2 * s, (n - 1) * s);
}

/*
 * Adaptive (adaptive.c): the faster of `window` (collie__cost_window) and
 * `direct`, as it learns them by timing both (arms.c), so the faster as
 * these rates see them; select.c runs it where the rates may be wrong
 * about which.  Its own cost: the verdict's sync, local rank 0's
 * bookkeeping and its tries of the slower branch, measured at 2 ranks,
 * 16 KiB, as 0.25-0.9 us over the window it ran, about three syncs.  Its
 * probe's syncs come once a millisecond (COLLIE__ADAPTIVE_PROBE_NS): no
 * call's share of them counts.
 */
#define ADAPTIVE_SYNCS 3
static double adaptive(machine *m, double window, double direct)
{
    if (!attach_offered(m))
        return HUGE_VAL;
    return ADAPTIVE_SYNCS * sync_cost(m) + (window < direct ? window : direct);
}

/*
 * The staged copies' rate of the user's buffers, for a call whose ranks each
 * hold `held` bytes of them: resident where the host's buffers fit in half
 * its cache, as a reduction's (measured at 2 ranks, 256 KiB: a broadcast 11
 * us and an alltoall 20, where memory's rate said 32 and 52; at 4 and 8
 * ranks on 2 cores, a broadcast 31-48 and 60-99 us, where it said 69-100
 * and 141-204); else memory's.  The user's buffers are each rank's own:
 * where the CPUs share no cache, only the slots' rate falls.
 */
static double staged_beta(machine *m, double held)
{
    int resident = fits_cache(m, held * m->ranks_per_host);
    return resident && m->host_resident_beta > m->host_beta ? m->host_resident_beta : m->host_beta;
}

/*
 * The root stages, one sync, the others copy out.  With two slots the root
 * runs one piece ahead: in a loop of calls that fit in the cache, all the
 * way, the root's copy of one call under the others' of the one before;
 * beyond, not all the way: measured at 2 ranks, 64 MiB takes what 1.5 s of
 * memory traffic takes.  In a call that starts with every
 * rank synced (adaptive's verdict), the root's copy of the first piece runs
 * alone (measured at 2 ranks, 256 KiB: 19 us, where `staged` took 11).
 */
static double broadcast_staged(machine *m, double s, int synced)
{
    double beta = staged_beta(m, s), user = beta > m->host_beta ? s : 1.5 * s;
    if (synced)
        user += s / rounds(m, s);
    return rounds(m, s) * sync_cost(m) + move(m, beta, user, s);
}

/*
 * The same for allgather's and reduce_scatter's copies, which hold a
 * block and n blocks a rank (measured at 2 ranks, 256 KiB-4 MiB: 22-25 and
 * 355-421 us for an allgather, where memory's rate said 35-52 and
 * 540-740).  On a crowded host they keep memory's rate: every rank reads
 * every slot whole, and measured at 4 and 8 ranks on 2 cores, 256 KiB-64
 * MiB, they took a median 1.19x (0.5-2.7x) of what it predicts.
 */
static double blocks_beta(machine *m, double held)
{
    return crowded(m) ? m->host_beta : staged_beta(m, held);
}

/* Stage the block, one sync, copy n blocks out. */
static double allgather_staged(machine *m, double s)
{
    double n = m->ranks_per_host, held = (1 + n) * s;
    return rounds(m, s) * sync_cost(m) + move(m, blocks_beta(m, held), held, held);
}

/*
 * Stage n blocks (read n of the input, write n of the slot), one sync,
 * reduce one block from n slots into the output.  (The input used to be
 * counted twice: measured at 2 ranks, 8 MiB blocks took 1.8 ms, where that
 * predicted 3.2.)
 */
static double reduce_scatter_staged(machine *m, double s)
{
    double n = m->ranks_per_host, held = (n + 1) * s;
    return rounds(m, n * s) * sync_cost(m) + move(m, blocks_beta(m, held), held, 2 * n * s);
}

/* Stage n blocks, one sync, copy n blocks out. */
static double alltoall_staged(machine *m, double s)
{
    double n = m->ranks_per_host;
    return rounds(m, n * s) * sync_cost(m) +
           move(m, staged_beta(m, 2 * n * s), 2 * n * s, 2 * n * s);
}

/* ---- point to point: every step at the links' rates ---- */

/*
 * One step's latency, and the bytes per second through one host's link each
 * way.  On one host (an algorithm forced there) the "link" is a pair's
 * shared-memory ring: a handoff like a sync, each byte copied in and out.
 */
static double step_alpha(machine *m) { return m->hosts > 1 ? m->link_alpha : sync_cost(m); }
static double link_rate(machine *m)
{
    return m->hosts > 1 ? m->links * m->link_beta : 1 / move(m, m->host_beta, 2.0, 2.0);
}

/* Flows that share one link at once: a host's ranks (one pair's ring on one host). */
static double flows(machine *m) { return m->hosts > 1 ? m->ranks_per_host : 1; }

/*
 * `steps` steps one after another that move `link_bytes` through each host's
 * link, each way, in all: a latency a step and the bytes at the link's rate.
 * Where the hosts share their CPUs (shared_cores: hosts emulated on one
 * machine, containers on one server), every rank's TCP work runs on those
 * cores too: where they hold more than a rank each, a step costs each core
 * every one of its ranks' message (shared_tcp_alpha: a message's CPU time,
 * what two ranks on cores of their own measure over an unshaped link,
 * waiting by looking and yielding) and a switch to it (host_switch), and
 * the link's own delay beyond its CPU time (a shaped link's queue); the
 * bytes every host sends and receives go at shared_tcp_beta a core.  The
 * slower of the two bounds the call (measured on 2 cores, 4 and 8 emulated
 * hosts: a small call's step 14-20 and 27-47 us where the pair's latency
 * was 4.8 and 7.1; at 1 Gbit/s, 19-25 us where the pair's was 14.2, and the
 * links bound the large calls).
 */
static double over_links(machine *m, double steps, double link_bytes)
{
    double wire = steps * step_alpha(m) + link_bytes / link_rate(m);
    if (m->hosts == 1 || m->shared_cores < 1)
        return wire;
    double crowd = (double)m->ranks / m->shared_cores,
           tcp = m->shared_tcp_beta > 0 ? m->shared_tcp_beta : m->link_beta,
           cpu = m->shared_tcp_alpha > 0 ? m->shared_tcp_alpha : m->link_alpha,
           step = m->link_alpha + (crowd > 1 ? crowd * (cpu + m->host_switch) - cpu : 0),
           cpus = steps * step + m->hosts * link_bytes / (m->shared_cores * tcp);
    return wire > cpus ? wire : cpus;
}

/* Flat ring: 2 (n-1) steps; one flow per host boundary carries 2 (n-1)/n of the data. */
static double allreduce_ring(machine *m, double s)
{
    double n = m->ranks;
    return over_links(m, 2 * (n - 1), 2 * (n - 1) / n * s);
}

/*
 * Recursive doubling: log2(n) exchanges of everything; the log2(H) at
 * distances >= L cross the link, L flows at once (and the folds).
 */
static double allreduce_rd(machine *m, double s)
{
    double steps = log2_steps(m->ranks) + fold_steps(m->ranks);
    double link = flows(m) * (log2_steps(m->hosts) + fold_steps(m->ranks));
    return over_links(m, steps, (m->hosts > 1 ? link : steps) * s);
}

/*
 * Rabenseifner: 2 log2(n) steps; the halving and doubling at distances >= L
 * cross the link.  Its first exchanges move half the data at once, which a
 * link's queue absorbs worse than the ring's n-th parts: measured on 4 hosts
 * with 1 Gbit/s links at 16 MiB, 0.103 GB/s against the ring's 0.113.  The
 * 10% below makes it the middle sizes' algorithm, the ring the large ones'.
 */
#define RAB_LINK_PENALTY 1.1
static double allreduce_rab(machine *m, double s)
{
    double h = m->hosts;
    double steps = 2 * log2_steps(m->ranks) + fold_steps(m->ranks);
    if (m->hosts == 1)
        h = m->ranks;
    double link = flows(m) * (2 * (h - 1) / h + fold_steps(m->ranks));
    return over_links(m, steps, RAB_LINK_PENALTY * link * s);
}

/*
 * Hierarchical (hierarchical.c), per slot-sized chunk: copy in, sync, each
 * local rank reduces its 1/L slice and allreduces it with its peers on the
 * other hosts (recursive doubling below 64 KiB a slice, else the ring), sync,
 * copy out.  The steps run one after another; the L slices share the link.
 */
static double allreduce_hierarchical(machine *m, double s)
{
    double h = m->hosts, r = rounds(m, s), chunk = s / r, slice = chunk / m->ranks_per_host;
    double steps = 2 * (h - 1), link = 2 * (h - 1) / h;
    if (slice < COLLIE__HIER_RD_MAX_BYTES) {
        steps = log2_steps(m->hosts) + fold_steps(m->hosts);
        link = steps;
    }
    return r * 2 * sync_cost(m) + over_links(m, r * steps, link * s) +
           move(m, reduction_beta(m, s), 3 * s, (2 + 1.0 / m->ranks_per_host) * s);
}

/* The ring's reduce-scatter, then every block to the root: its link takes (n-L)/n of the data. */
static double reduce_ring(machine *m, double s)
{
    double n = m->ranks;
    return over_links(m, n, ((n - 1) + (n - flows(m))) / n * s);
}

/*
 * A binomial tree of whole messages: log2(n) steps, log2(H) of them through
 * a link.  On one host a rank that sent moves on, so in a loop of calls the
 * ranks run calls ahead, as long as a sender finds room in its ring for the
 * next call's message: while two messages and their headers fit in a ring
 * (runs_ahead()), a call costs the root's steps, each a step's latency
 * (ahead_step()) and `user` bytes at `user_beta`, the others' copies
 * overlapping it.  Measured at 2 ranks, 64 B: a broadcast took
 * 0.18-0.19 us where the window took 0.39-0.43, 16 KiB
 * 1.1-1.3 against 2.0-2.2; at 4 and 8 ranks on 2 cores, 8-64 KiB:
 * 0.85-5.7 and 0.96-7.6 us, where the window took 4.2-13.4 and 8.7-24.4.
 *
 * A larger message waits for its receiver to drain the one before: on a
 * host whose ranks outnumber the cores, every step then switches ranks in,
 * and a call costs a sync's handoff a step and each rank's `user` bytes of
 * its buffers and its message into and out of a ring, the cores shared
 * (measured at 4 and 8 ranks on 2 cores, 128 KiB: a broadcast 19.5 and 45
 * us, 3x its time at 64 KiB).
 */
static int runs_ahead(machine *m, double s)
{
    return 2 * (s + sizeof(struct collie__wire)) <= (double)m->ring_bytes;
}

/* The larger messages of a crowded host: a switch each step. */
static int switched(machine *m, double s) { return crowded(m) && !runs_ahead(m, s); }

/*
 * A step's latency where the ranks run ahead.  With a core a rank, half a
 * sync: the message is one line's trip to the other core.  On a crowded
 * host the receiver finds a run of its sender's messages when it gets the
 * core, in the cache they share: a line from a peer (host_peer) a step.
 * Measured on 2 cores, 4-64 B broadcasts and reduces, the bench's median
 * call: 0.11-0.12 us at 4 ranks, 0.14-0.16 at 8, 0.17-0.22 at 16, where
 * half of a tuned 0.48 us sync a step said 0.48, 0.72 and 0.96 (host_peer's
 * 0.07 says 0.14, 0.21, 0.28).  A loop's mean is longer, each core making
 * every message of its ranks in turn: 0.20, 0.44-0.45, 0.94-0.99 us, about
 * (n-1) x 0.063.
 */
static double ahead_step(machine *m) { return crowded(m) ? m->host_peer : m->host_alpha / 2; }

static double tree(machine *m, double s, double user, double user_beta)
{
    double steps = log2_steps(m->ranks);
    if (m->hosts == 1 && switched(m, s))
        return steps * m->host_alpha + move(m, user_beta, user, 2 * s);
    if (m->hosts == 1)
        return steps * (ahead_step(m) + user / user_beta);
    return steps * step_alpha(m) + log2_steps(m->hosts) * s / link_rate(m);
}

/*
 * A broadcast reads and writes its buffer once: 2 s at a reduction's rate
 * where it runs ahead (at 2 ranks, 1 MiB-64 MiB measured within 0-20% of it
 * but at 16 MiB, 1.4 ms against 2.3 predicted); crowded beyond, of memory.
 */
static double broadcast_tree(machine *m, double s)
{
    if (switched(m, s))
        return tree(m, s, 2 * s, m->host_beta);
    return tree(m, s, 2 * s, resident_beta(m, s));
}

/*
 * A reduce also combines its children's messages with its input, in cache:
 * 3 s where it runs ahead (fitted at 2 ranks, 1-256 KiB; at 4 and 8 ranks
 * on 2 cores, 8-64 KiB, within 30% of it).  Crowded beyond, fitted as 3.5
 * s of memory (measured at 4 and 8 ranks on 2 cores, while the tree still
 * copied its input first: twoshot 1.5-2x faster from 128 KiB at 4 ranks
 * and 256 KiB at 8).  Beyond a slot's bytes, the root takes the whole
 * message into a buffer of memory before it combines: 7 s of memory
 * (measured at 2 ranks: 168 us at 1 MiB, 5.96 ms at 16 MiB, 31.6 ms at 64
 * MiB, where 3 s at a reduction's rate said 112 us, 2.1 ms and 8.6 ms with
 * a tuned description, and chose it over `direct`'s 3.9 and 22.7 ms).  So
 * on a crowded host too (measured at 4 and 8 ranks on 2 cores: 0.54-0.77
 * and 1.45 ms at 1 MiB, 70 and 165 ms at 64 MiB, where 3.5 s said 0.58
 * and 1.15, 36.9 and 73.7 ms with the default rates, near `twoshot`, and
 * a tuned description chose the tree over `twoshot`'s 1.8 and 4.1 ms at 4
 * MiB).
 */
static double reduce_tree(machine *m, double s)
{
    if (s > (double)m->slot_bytes)
        return tree(m, s, 7 * s, m->host_beta);
    if (switched(m, s))
        return tree(m, s, 3.5 * s, m->host_beta);
    return tree(m, s, 3 * s, resident_beta(m, s));
}

/* Allgather and reduce_scatter rings: n-1 steps; a host boundary carries n-1 blocks. */
static double block_ring(machine *m, double s)
{
    double n = m->ranks;
    return over_links(m, n - 1, (n - 1) * s);
}

/*
 * Pairwise exchange: n-1 steps; each of a host's L ranks sends n-L blocks
 * through its link.  On one host the "link" is a pair's ring, and each rank
 * also copies its own block: every block read and written once, the n-1
 * it exchanges through a ring.  Those go at the cache's rates while the
 * host's buffers fit in half of it (measured at 2 ranks, 16 KiB-4 MiB:
 * 1.2-1.5x faster than `staged` and `direct`).  Beyond, the rings' copies
 * stall on memory as a copy between two ranks' buffers in memory does
 * (host_attach_mem_beta: measured at 2 ranks, 64 MiB, 19 ms where
 * memory's own rate said 11.6 and `staged` took 17).  A step is a sync's
 * round trip, each rank's message and its peer's, and the ring's credit
 * coming back, a line's trip more: measured at 2 ranks, 256 B-4 KiB, it
 * ran 0.03-0.08 us behind `staged`'s one sync, and level at 16 KiB.
 */
static double alltoall_pairwise(machine *m, double s)
{
    double n = m->ranks, L = flows(m);
    if (m->hosts > 1)
        return over_links(m, n - 1, L * (n - L) * s);
    double beta = staged_beta(m, 2 * n * s), ring = 2 * (n - 1) * s;
    double exchange = beta > m->host_beta ? move(m, beta, ring, ring)
                                          : move(m, m->host_attach_mem_beta, ring, ring);
    return (n - 1) * (sync_cost(m) + m->host_alpha / 2) + exchange + move(m, beta, 2 * s, 0);
}

/*
 * Neighbour averaging: `degree` sends and receives of s at once.  Across
 * hosts, the share of peers on other hosts is that of the exponential graph
 * over ranks placed in blocks: of its log2(n) distances 2^k, those >= L
 * leave the host; all of a host's ranks send through its link at once.
 */
static double neighbor(machine *m, double s, int degree)
{
    if (m->hosts == 1)
        return sync_cost(m) + move(m, m->host_beta, (1.0 + degree) * s, (1.0 + degree) * s);
    double all = log2_steps(m->ranks), near = log2_steps(m->ranks_per_host);
    double away = all > near ? (all - near) / all : 1;
    return over_links(m, 1, away * flows(m) * degree * s) +
           move(m, m->host_beta, (1.0 + degree) * s, 0);
}

enum collie__algo_id collie__window_algo(const struct collie__machine *m, enum collie__coll coll,
                                         size_t bytes)
{
    double s = (double)bytes;
    switch (coll) {
    case COLLIE_COLL_ALLREDUCE: return COLLIE__ALGO_TWOSHOT;
    case COLLIE_COLL_REDUCE: return COLLIE__ALGO_ONESHOT;
    case COLLIE_COLL_ALLTOALL:
        return alltoall_pairwise(m, s) < alltoall_staged(m, s) ? COLLIE__ALGO_PAIRWISE
                                                               : COLLIE__ALGO_STAGED;
    default: return COLLIE__ALGO_STAGED;
    }
}

double collie__cost_window(const struct collie__machine *m, enum collie__coll coll, size_t bytes)
{
    double s = (double)bytes;
    switch (coll) {
    case COLLIE_COLL_ALLREDUCE: return twoshot(m, s, 0);
    case COLLIE_COLL_REDUCE: return oneshot(m, s, ROOT_SYNCED);
    case COLLIE_COLL_BROADCAST: return broadcast_staged(m, s, 1);
    case COLLIE_COLL_ALLGATHER: return allgather_staged(m, s);
    case COLLIE_COLL_REDUCE_SCATTER: return reduce_scatter_staged(m, s);
    case COLLIE_COLL_ALLTOALL:
        return collie__window_algo(m, coll, bytes) == COLLIE__ALGO_PAIRWISE
                   ? alltoall_pairwise(m, s)
                   : alltoall_staged(m, s);
    default: return HUGE_VAL;
    }
}

double collie__cost(const struct collie__machine *m, enum collie__coll coll,
                    enum collie__algo_id algo, size_t bytes, int degree)
{
    double s = (double)bytes, L = m->ranks_per_host; /* in double: L * L overflows an int */
#define PAIR(c, a) ((int)(c)*256 + (int)(a))
#define C(name) COLLIE_COLL_##name
#define A(name) COLLIE__ALGO_##name
    if (algo == A(ADAPTIVE))
        return adaptive(m, collie__cost_window(m, coll, bytes),
                        collie__cost(m, coll, A(DIRECT), bytes, degree));
    switch (PAIR(coll, algo)) {
    case PAIR(C(ALLREDUCE), A(ONESHOT)): return oneshot(m, s, EVERY_RANK);
    case PAIR(C(REDUCE), A(ONESHOT)): return oneshot(m, s, ROOT_ALONE);
    case PAIR(C(ALLREDUCE), A(TWOSHOT)): return twoshot(m, s, 0);
    case PAIR(C(REDUCE), A(TWOSHOT)): return twoshot(m, s, 1);
    case PAIR(C(ALLREDUCE), A(DIRECT)):
    case PAIR(C(REDUCE), A(DIRECT)): return direct(m, s);
    case PAIR(C(ALLREDUCE), A(RING)): return allreduce_ring(m, s);
    case PAIR(C(ALLREDUCE), A(RD)):
    case PAIR(C(REDUCE), A(RD)): return allreduce_rd(m, s);
    case PAIR(C(ALLREDUCE), A(RABENSEIFNER)): return allreduce_rab(m, s);
    case PAIR(C(ALLREDUCE), A(HIERARCHICAL)): return allreduce_hierarchical(m, s);
    case PAIR(C(REDUCE), A(RING)): return reduce_ring(m, s);
    case PAIR(C(BROADCAST), A(TREE)): return broadcast_tree(m, s);
    case PAIR(C(REDUCE), A(TREE)): return reduce_tree(m, s);
    case PAIR(C(BROADCAST), A(STAGED)): return broadcast_staged(m, s, 0);
    case PAIR(C(BROADCAST), A(DIRECT)): return broadcast_direct(m, s);
    case PAIR(C(ALLGATHER), A(DIRECT)):
        return gather_direct(m, s, L * (L + 1) * s, attach_offered(m));
    case PAIR(C(ALLTOALL), A(DIRECT)):
        return gather_direct(m, s, 2 * L * L * s, attach_offered_alltoall(m));
    case PAIR(C(REDUCE_SCATTER), A(DIRECT)): return reduce_scatter_direct(m, s);
    case PAIR(C(ALLGATHER), A(STAGED)): return allgather_staged(m, s);
    case PAIR(C(REDUCE_SCATTER), A(STAGED)): return reduce_scatter_staged(m, s);
    case PAIR(C(ALLTOALL), A(STAGED)): return alltoall_staged(m, s);
    case PAIR(C(ALLGATHER), A(RING)):
    case PAIR(C(REDUCE_SCATTER), A(RING)): return block_ring(m, s);
    case PAIR(C(ALLTOALL), A(PAIRWISE)): return alltoall_pairwise(m, s);
    case PAIR(C(BARRIER), A(SYNC)): return sync_cost(m);
    case PAIR(C(BARRIER), A(DISSEMINATION)): return over_links(m, log2_steps(m->ranks), 0);
    case PAIR(C(NEIGHBOR_ALLREDUCE), A(NEIGHBOR)):
    case PAIR(C(NEIGHBOR_ALLGATHER), A(NEIGHBOR)): return neighbor(m, s, degree);
    case PAIR(C(HIER_NEIGHBOR_ALLREDUCE), A(HIERARCHICAL)):
        return twoshot(m, s, 0) + neighbor(m, s / m->ranks_per_host, degree);
    default: return HUGE_VAL;
    }
#undef A
#undef C
#undef PAIR
}
