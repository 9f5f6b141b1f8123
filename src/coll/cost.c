/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cost.c - cost_terms.h: the terms of the algorithms' prices, each what the
 * machine's rates make of one kind of work.  `s` is the call's bytes as the
 * API takes them (cost.h), n the ranks, L the ranks per host, H the hosts.
 */
#include "../transport/shm.h"
#include "../transport/wire.h"
#include "cost_terms.h"

double collie__cost_log2_steps(int n)
{
    int steps = 0;
    while ((1 << steps) < n)
        steps++;
    return steps;
}

/* A group that is not a power of two folds in and out first (fold.c): two more steps. */
double collie__cost_fold_steps(int n) { return (n & (n - 1)) ? 2 : 0; }

/* ---- within a host: the shared-memory window (ranks = L, hosts = 1) ---- */

/* A host whose ranks outnumber its cores: its rates and its trees were fitted apart. */
int collie__cost_crowded(machine *m) { return m->ranks_per_host > m->cores; }

/*
 * One sync of the host's ranks (shm.c's collie__win_sync: every rank reads
 * every peer's flag in turn): two ranks' round trip, a line from each
 * further rank the cores hold, and a context switch per rank they cannot.
 */
double collie__cost_sync(machine *m)
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
double collie__cost_move(machine *m, double user_beta, double user, double slot)
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
double collie__cost_alone(machine *m, double user_beta, double user, double slot)
{
    double work = user / user_beta + slot / slot_beta(m);
    return collie__cost_crowded(m) ? work : work / gain(m, 1);
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
double collie__cost_resident_beta(machine *m, double s)
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
double collie__cost_reduction_beta(machine *m, double s)
{
    return collie__cost_crowded(m) ? collie__cost_resident_beta(m, HUGE_VAL)
                                   : collie__cost_resident_beta(m, s);
}

/*
 * At exactly two ranks an exchange's slots change hands (collie__win_exchange):
 * a rank writes lines its own core has just read, and only its reads of the
 * peer's slot cross between the cores.  While its buffers (input and output)
 * and the four slots it cycles through (two parities, two ranks) fit in its
 * core's own cache, the call runs at that cache's pace, and what it pays
 * beyond is each phase's first lines from the peer, which come one by one
 * before the prefetchers follow.  Measured at 2 ranks near, forced oneshot
 * and twoshot allreduce at 4-256 KiB: within 11% of every median, where the
 * resident rate put both 1.1-1.5x slow from 64 KiB and twoshot (two phases,
 * each reading half) 0.3-0.6 us fast at 16-32 KiB; and 512 KiB (3 MiB a
 * core) at the resident rate again.
 */
/* Two ranks near each other on cores of their own: their slots change hands each round. */
static int two_near(machine *m)
{
    return m->ranks_per_host == 2 && !collie__cost_crowded(m) && !m->far;
}

int collie__cost_pair(machine *m, double s)
{
    double slot = s < (double)m->slot_bytes ? s : (double)m->slot_bytes;
    return two_near(m) && 2 * s + 4 * slot <= (double)m->host_core_cache_bytes;
}

double collie__cost_pair_move(machine *m, double user, double slot, int phases, double fresh)
{
    double ramp = fresh < (double)m->host_pair_ramp_bytes
                      ? m->host_pair_ramp * fresh / (double)m->host_pair_ramp_bytes
                      : m->host_pair_ramp;
    return user / m->host_pair_beta + slot / m->host_cache_beta + phases * ramp;
}

double collie__cost_pair_fresh(machine *m, double s)
{
    int on = m->hosts == 1 && m->host_pair_fresh_beta > 0 && collie__cost_pair(m, s);
    return on ? s / m->host_pair_fresh_beta : -1;
}

/* Rounds of `bytes` through a slot. */
double collie__cost_rounds(machine *m, double bytes)
{
    double r = ceil(bytes / (double)m->slot_bytes);
    return r > 1 ? r : 1;
}

/*
 * Alltoall's single copies (shm.h's attach) need the kernel's leave and a
 * peer.  They are offered on a crowded host too: no reduction rides on the
 * window's copies there, and measured at 4, 8 and 16 ranks on 2 cores
 * `direct` beat
 * `staged` by up to 2x from 64-512 KiB to 1-4 MiB, as collie__cost_attach() costs it;
 * beyond, its copies into memory lose (collie__cost_written()).
 */
int collie__cost_attach_offered_alltoall(machine *m) { return m->attach && m->ranks_per_host >= 2; }

/*
 * The others' also need ranks that fit on the cores: measured
 * oversubscribed, they are what the model predicts, but twoshot is 2x
 * faster there than the model says, so comparing the two
 * would choose wrong.
 */
int collie__cost_attach_offered(machine *m)
{
    return collie__cost_attach_offered_alltoall(m) && !collie__cost_crowded(m);
}

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
 * ranks' calls and copies in turn, as collie__cost_move() has it (measured at 16 ranks
 * on 2 cores: a 16 KiB alltoall's 15 calls a rank took 157 us, where the
 * window's sync took 40).
 */
double collie__cost_attach(machine *m, double calls, double bytes, double resident)
{
    double share = collie__cost_crowded(m) ? (double)m->ranks_per_host / m->cores : 1;
    return share * (calls * m->host_attach_call +
                    bytes / (attach_beta(m, resident) * gain(m, m->ranks_per_host)));
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
double collie__cost_written(machine *m, double bytes, double resident)
{
    return attach_resident(m, resident) ? 0 : collie__cost_move(m, m->host_beta, bytes, 0);
}

/*
 * The collectives' single copies other than allreduce's (allgather_direct.c,
 * ...): two syncs; each rank copies what it receives from the peers'
 * buffers, a system call per peer's block, all ranks at once; allgather and
 * alltoall copy their own block too.
 */
double collie__cost_gather_direct(machine *m, double s, double resident, int offered)
{
    double n = m->ranks_per_host;
    if (!offered)
        return HUGE_VAL;
    return 2 * collie__cost_sync(m) + collie__cost_attach(m, n - 1, (n - 1) * s, resident) +
           collie__cost_written(m, (n - 1) * s, resident) +
           collie__cost_move(m, m->host_beta, 2 * s, 0);
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
double collie__cost_staged_beta(machine *m, double held)
{
    int resident = fits_cache(m, held * m->ranks_per_host);
    return resident && m->host_resident_beta > m->host_beta ? m->host_resident_beta : m->host_beta;
}

/*
 * The same for allgather's and reduce_scatter's copies, which hold a
 * block and n blocks a rank (measured at 2 ranks, 256 KiB-4 MiB: 22-25 and
 * 355-421 us for an allgather, where memory's rate said 35-52 and
 * 540-740).  On a crowded host they keep memory's rate: every rank reads
 * every slot whole, and measured at 4 and 8 ranks on 2 cores, 256 KiB-64
 * MiB, they took a median 1.19x (0.5-2.7x) of what it predicts.
 */
double collie__cost_blocks_beta(machine *m, double held)
{
    return collie__cost_crowded(m) ? m->host_beta : collie__cost_staged_beta(m, held);
}

/*
 * Two ranks' staged copies (allgather's, alltoall's), where the slots
 * change hands as in collie__cost_pair: each byte a rank copies, into its
 * slot, to its output and out of the peer's slot, at the pair's rate, with
 * no ramp, as a copy's loads wait on no arithmetic.  Unlike a reduction's,
 * they keep that pace beyond a core's own cache: priced so while the host's
 * buffers and slots fit in half its cache, as the resident rate is (an
 * allgather of 4 MiB, an alltoall of 2; both ran so to 4 MiB).  Measured at
 * 2 ranks near, forced staged allgather and alltoall of 16 KiB-4 MiB:
 * within 12% of every median so priced from 64 KiB (16-32 KiB: up to 23%
 * high), where the staged rate put them 2.3-3.3x slow and pairwise's
 * exchange ahead.
 */
int collie__cost_pair_copies(machine *m, double held)
{
    return two_near(m) && fits_cache(m, held * m->ranks_per_host);
}

double collie__cost_pair_copy(machine *m, double copied) { return copied / m->host_pair_beta; }

/* ---- point to point: every step at the links' rates ---- */

/*
 * One step's latency, and the bytes per second through one host's link each
 * way.  On one host (an algorithm forced there) the "link" is a pair's
 * shared-memory ring: a handoff like a sync, each byte copied in and out.
 */
double collie__cost_step_alpha(machine *m)
{
    return m->hosts > 1 ? m->link_alpha : collie__cost_sync(m);
}
double collie__cost_link_rate(machine *m)
{
    return m->hosts > 1 ? m->links * m->link_beta
                        : 1 / collie__cost_move(m, m->host_beta, 2.0, 2.0);
}

/* Flows that share one link at once: a host's ranks (one pair's ring on one host). */
double collie__cost_flows(machine *m) { return m->hosts > 1 ? m->ranks_per_host : 1; }

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
double collie__cost_over_links(machine *m, double steps, double link_bytes)
{
    double wire = steps * collie__cost_step_alpha(m) + link_bytes / collie__cost_link_rate(m);
    if (m->hosts == 1 || m->shared_cores < 1)
        return wire;
    double crowd = (double)m->ranks / m->shared_cores,
           tcp = m->shared_tcp_beta > 0 ? m->shared_tcp_beta : m->link_beta,
           cpu = m->shared_tcp_alpha > 0 ? m->shared_tcp_alpha : m->link_alpha,
           step = m->link_alpha + (crowd > 1 ? crowd * (cpu + m->host_switch) - cpu : 0),
           cpus = steps * step + m->hosts * link_bytes / (m->shared_cores * tcp);
    return wire > cpus ? wire : cpus;
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
int collie__cost_switched(machine *m, double s)
{
    return collie__cost_crowded(m) && !runs_ahead(m, s);
}

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
static double ahead_step(machine *m)
{
    return collie__cost_crowded(m) ? m->host_peer : m->host_alpha / 2;
}

double collie__cost_tree(machine *m, double s, double user, double user_beta)
{
    double steps = collie__cost_log2_steps(m->ranks);
    if (m->hosts == 1 && collie__cost_switched(m, s))
        return steps * m->host_alpha + collie__cost_move(m, user_beta, user, 2 * s);
    if (m->hosts == 1)
        return steps * (ahead_step(m) + user / user_beta);
    return steps * collie__cost_step_alpha(m) +
           collie__cost_log2_steps(m->hosts) * s / collie__cost_link_rate(m);
}
