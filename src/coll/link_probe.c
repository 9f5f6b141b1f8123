/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_probe.c - the links between hosts, measured when a communicator that
 * spans hosts is created, so that the cost model chooses for the network it
 * runs on rather than for defaults nobody measured (a 100 Gbit/s and a
 * 100 Mbit/s network want different algorithms at the same size).
 *
 * The first ranks of hosts 0 and 1 exchange messages over the transport the
 * collectives use (so the figures include its streams, and its encryption
 * where COLLIE_ENCRYPT is on):
 *   latency    the median of PROBE_PINGS round trips of 8 bytes, halved;
 *   bandwidth  transfers from 64 KiB up, doubling, each answered by 8
 *              bytes, until the median of a size takes 2 ms or 8 MiB is
 *              reached (link_rate.h's figures).  Each size goes in a series
 *              of one untimed transfer and nine timed, back to back.  The
 *              first is not timed: a shaper's burst allowance (tc tbf) or a
 *              TCP window still opening would make it say more, or less,
 *              than the link sustains.  Of the timed ones the median counts,
 *              less the fastest round trip: rate = bytes / (median - fastest
 *              round trip).  A last size's series that dips (its first
 *              quartile over 25% below its median) goes again, up to four
 *              series, and the fastest median of them counts; one that then
 *              takes under 2 ms doubles on (link_rate.c decides).
 *
 * Why again: a rank that loses its CPU for a while slows the transfer in
 * flight, and the idle link meanwhile refills the shaper's bucket, which
 * speeds the next ones past the link's rate, so the series dips and its
 * median can land anywhere.  Slow transfers alone move neither the median
 * nor the dip, so such a series counts at once.  With ranks stopped 5 ms in
 * every 65 on a 1 Gbit/s link, one series' median read 0.066-0.096 GB/s in
 * 7 probes of 350; going again read 0.118-0.127 in 140 of 140.
 *
 * The probe takes 30-40 ms on a 1 Gbit/s link, 90 on 100 Mbit/s (whose
 * first series always dips: a 256 KB bucket lets three 64 KB transfers
 * through at once) and 55-70 on an unshaped veth.  The result travels to
 * every rank over the bootstrap, so all choose alike.
 * COLLIE_NET_LATENCY_US, COLLIE_NET_BANDWIDTH (each) and COLLIE_MACHINE win
 * over it; COLLIE_NET_PROBE=0 leaves the defaults.  Rank 0's settings
 * decide for all.
 *
 * Every rank keeps what it learnt, by the pair of hosts (comm->hosts.link_key):
 * a communicator split from this one, whose hosts 0 and 1 are the same two,
 * takes rank 0's copy instead of measuring again.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/bootstrap.h"
#include "../core/clock.h"
#include "../core/config.h"
#include "../core/log.h"
#include "../transport/xfer.h"
#include "algo.h"
#include "cost.h"
#include "link_rate.h"

#define PROBE_PINGS 16

/* Links this process learnt, by pair of hosts; the oldest goes when full. */
#define KNOWN_LINKS 16
static struct known {
    uint64_t key;
    double alpha, beta;
} known[KNOWN_LINKS];
static unsigned known_next;
static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry for key (never 0), or NULL; under known_lock. */
static struct known *known_at(uint64_t key)
{
    for (int i = 0; i < KNOWN_LINKS; i++)
        if (known[i].key == key)
            return &known[i];
    return NULL;
}

static int known_find(uint64_t key, double *alpha, double *beta)
{
    pthread_mutex_lock(&known_lock);
    const struct known *k = key ? known_at(key) : NULL;
    if (k)
        *alpha = k->alpha, *beta = k->beta;
    pthread_mutex_unlock(&known_lock);
    return k != NULL;
}

static void known_add(uint64_t key, double alpha, double beta)
{
    pthread_mutex_lock(&known_lock);
    if (key && !known_at(key))
        known[known_next++ % KNOWN_LINKS] = (struct known){key, alpha, beta};
    pthread_mutex_unlock(&known_lock);
}

/* What the first rank of host 0 found, for everybody. */
struct verdict {
    double alpha, beta; /* seconds, bytes per second; 0: not measured */
    int32_t status;     /* of the measuring rank (others: COLLIE_OK) */
    int32_t pad;
};

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The round trips of one ping. */
struct round_trips {
    uint64_t median_ns, fastest_ns;
};

/*
 * Rank `me` of the pair (0 measures, 1 answers): the round trips of 8 bytes,
 * median and fastest, in ns.
 */
static collie_status ping(collie_comm *comm, int me, int peer, struct round_trips *trips)
{
    uint64_t word = 0, rtt[PROBE_PINGS];
    for (int i = 0; i < PROBE_PINGS; i++) {
        uint64_t t0 = collie__now_ns();
        collie_status st = me == 0 ? collie__xfer_send(comm, peer, &word, sizeof word)
                                   : collie__xfer_recv(comm, peer, &word, sizeof word);
        if (st == COLLIE_OK)
            st = me == 0 ? collie__xfer_recv(comm, peer, &word, sizeof word)
                         : collie__xfer_send(comm, peer, &word, sizeof word);
        if (st != COLLIE_OK)
            return st;
        rtt[i] = collie__now_ns() - t0;
    }
    qsort(rtt, PROBE_PINGS, sizeof rtt[0], compare_u64);
    *trips = (struct round_trips){rtt[PROBE_PINGS / 2], rtt[0]};
    return COLLIE_OK;
}

/*
 * One series of transfers of `size` bytes, each answered by 8: the first
 * untimed, then COLLIE__RATE_TIMED timed, whose times rank 0 returns sorted.
 */
static collie_status series(collie_comm *comm, int me, int peer, unsigned char *buf, uint64_t size,
                            uint64_t timed[COLLIE__RATE_TIMED])
{
    uint64_t word = 0;
    for (int rep = 0; rep <= COLLIE__RATE_TIMED; rep++) {
        uint64_t t0 = collie__now_ns();
        collie_status st = me == 0 ? collie__xfer_send(comm, peer, buf, size)
                                   : collie__xfer_recv(comm, peer, buf, size);
        if (st == COLLIE_OK)
            st = me == 0 ? collie__xfer_recv(comm, peer, &word, sizeof word)
                         : collie__xfer_send(comm, peer, &word, sizeof word);
        if (st != COLLIE_OK)
            return st;
        if (rep > 0)
            timed[rep - 1] = collie__now_ns() - t0;
    }
    qsort(timed, COLLIE__RATE_TIMED, sizeof timed[0], compare_u64);
    return COLLIE_OK;
}

_Static_assert(COLLIE__RATE_TIMED == 9, "stream()'s trace prints nine timed transfers");

/*
 * The series, as link_rate.c decides.  Before each, rank 0 sends its size
 * (0: done), so that rank 1 follows rank 0's decisions.  Rank 0 returns the
 * rate; rtt_ns is its fastest round trip of 8 bytes.
 */
static collie_status stream(collie_comm *comm, int me, int peer, uint64_t rtt_ns, double *beta)
{
    unsigned char *buf = malloc(COLLIE__RATE_LAST_BYTES);
    if (!buf)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory to measure the links");
    memset(buf, 0, COLLIE__RATE_LAST_BYTES);
    struct collie__rate rate;
    collie__rate_start(&rate, rtt_ns);
    collie_status st = COLLIE_OK;
    for (;;) {
        uint64_t size = rate.size;
        st = me == 0 ? collie__xfer_send(comm, peer, &size, sizeof size)
                     : collie__xfer_recv(comm, peer, &size, sizeof size);
        if (st != COLLIE_OK || !size || size > COLLIE__RATE_LAST_BYTES)
            break;
        uint64_t timed[COLLIE__RATE_TIMED];
        st = series(comm, me, peer, buf, size, timed);
        if (st != COLLIE_OK || me != 0)
            continue;
        COLLIE_TRACE("links",
                     "%llu bytes: %.2f %.2f %.2f %.2f %.2f %.2f %.2f %.2f %.2f ms, dip %.2f",
                     (unsigned long long)size, timed[0] * 1e-6, timed[1] * 1e-6, timed[2] * 1e-6,
                     timed[3] * 1e-6, timed[4] * 1e-6, timed[5] * 1e-6, timed[6] * 1e-6,
                     timed[7] * 1e-6, timed[8] * 1e-6, collie__rate_dip(timed));
        collie__rate_record(&rate, timed);
    }
    *beta = rate.beta;
    free(buf);
    return st;
}

/* The first rank of host h. */
static int leader(const collie_comm *comm, int h)
{
    return comm->hosts.ranks[comm->hosts.start[h]];
}

/*
 * What this rank's settings leave to measure: bit 0 the latency, bit 1 the
 * bandwidth.  Rank 0's answer is everybody's (agree()), so that ranks set up
 * differently neither wait for a measurement that never comes nor choose
 * with different rates.
 */
static int32_t wanted(void)
{
    if (!collie__config_int(COLLIE_CFG_NET_PROBE) || *collie__config_string(COLLIE_CFG_MACHINE))
        return 0;
    return (collie__config_is_set(COLLIE_CFG_NET_LATENCY_US) ? 0 : 1) |
           (collie__config_is_set(COLLIE_CFG_NET_BANDWIDTH) ? 0 : 2);
}

/* Rank 0's plan: what its settings want measured, and the link if it knows it already. */
struct plan {
    int32_t want, known; /* wanted()'s bits; 1: alpha and beta are known_find()'s */
    double alpha, beta;
};

/* Rank 0's plan into *plan, on every rank. */
static collie_status agree(collie_comm *comm, struct plan *plan)
{
    struct plan mine = {wanted(), 0, 0, 0}, *all = calloc((size_t)comm->size, sizeof *all);
    if (!all)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the links' measurement");
    if (mine.want)
        mine.known = known_find(comm->hosts.link_key, &mine.alpha, &mine.beta);
    collie_status st = collie__bootstrap_allgather(comm, &mine, all, sizeof mine);
    *plan = all[0];
    free(all);
    if (st == COLLIE_OK && mine.want != plan->want)
        COLLIE_WARN("links",
                    "this rank's COLLIE_NET_PROBE, COLLIE_NET_LATENCY_US, COLLIE_NET_BANDWIDTH or "
                    "COLLIE_MACHINE differ from rank 0's: rank 0's decide what is measured");
    return st;
}

static collie_status measure(collie_comm *comm)
{
    comm->coll->link_alpha = comm->coll->link_beta = 0;
    if (comm->nhosts < 2)
        return COLLIE_OK;
    struct plan plan = {0, 0, 0, 0};
    collie_status agreed = agree(comm, &plan);
    if (agreed != COLLIE_OK || !plan.want)
        return agreed;
    int want_alpha = plan.want & 1, want_beta = (plan.want & 2) != 0;
    if (plan.known) {
        comm->coll->link_alpha = want_alpha ? plan.alpha : 0;
        comm->coll->link_beta = want_beta ? plan.beta : 0;
        if (comm->rank == 0)
            COLLIE_INFO("links",
                        "as measured before between these hosts: %.1f us a message, "
                        "%.3f GB/s",
                        plan.alpha * 1e6, plan.beta * 1e-9);
        return COLLIE_OK;
    }
    int a = leader(comm, 0), b = leader(comm, 1);
    struct verdict mine = {0, 0, COLLIE_OK, 0};
    uint64_t start = collie__now_ns();
    struct round_trips rtt = {0, 0};
    if (comm->rank == a || comm->rank == b) {
        int me = comm->rank == a ? 0 : 1, peer = me == 0 ? b : a;
        /* The messages carry this descriptor; no call has a number yet. */
        struct collie__op_desc was = comm->cur;
        comm->cur = (struct collie__op_desc){.coll = COLLIE_COLL_BARRIER};
        collie_status st = ping(comm, me, peer, &rtt);
        if (st == COLLIE_OK)
            st = stream(comm, me, peer, rtt.fastest_ns, &mine.beta);
        comm->cur = was;
        mine.alpha = (double)rtt.median_ns * 0.5e-9;
        mine.status = st;
    }
    /* Everybody takes part, a failed measurer too: nobody waits for it in vain. */
    struct verdict *all = calloc((size_t)comm->size, sizeof *all);
    if (!all)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the links' measurement");
    collie_status st = collie__bootstrap_allgather(comm, &mine, all, sizeof mine);
    struct verdict v = all[a];
    if (st == COLLIE_OK && all[b].status != COLLIE_OK)
        v.status = all[b].status;
    free(all);
    if (st != COLLIE_OK)
        return st;
    if (v.status != COLLIE_OK)
        return comm->failed != COLLIE_OK
                   ? comm->failed
                   : collie__fail(comm, (collie_status)v.status,
                                  "measuring the link between ranks %d and %d failed (see their "
                                  "output)",
                                  a, b);
    known_add(comm->hosts.link_key, v.alpha, v.beta);
    comm->coll->link_alpha = want_alpha ? v.alpha : 0;
    comm->coll->link_beta = want_beta ? v.beta : 0;
    if (comm->rank == a)
        COLLIE_INFO("links",
                    "measured between rank %d (host 0) and rank %d (host 1) in %.1f ms: "
                    "%.1f us a message, %.3f GB/s%s",
                    a, b, (double)(collie__now_ns() - start) * 1e-6, v.alpha * 1e6, v.beta * 1e-9,
                    want_alpha && want_beta ? ""
                    : want_alpha            ? " (COLLIE_NET_BANDWIDTH set: the latency used)"
                                            : " (COLLIE_NET_LATENCY_US set: the bandwidth used)");
    return COLLIE_OK;
}

/*
 * A link one TCP connection fills carries each message on one: striped over
 * several, the connections share the link unevenly and the message waits
 * for the last of them.  Measured on 2 emulated hosts at 1 Gbit/s (16 MiB
 * allreduce, 3 rounds alternated): one connection 141.7-143.4 ms, 98-99% of
 * the link both ways; four 150.0-152.4 ms.  Unshaped (1.4-2.4 GB/s between
 * namespaces) four stay: one connection reached half their rate at 1 MiB.
 * The rate is the one the model chooses with (measured, set or described),
 * so every rank decides alike.
 */
#define ONE_CONNECTION_BPS 0.5e9

collie_status collie__select_probe_links(collie_comm *comm)
{
    collie_status st = measure(comm);
    comm->hosts.one_stream = 0;
    if (st != COLLIE_OK || comm->nhosts < 2)
        return st;
    struct collie__machine m; /* the links' rates only: the placement does not enter */
    collie__select_rates(&m);
    collie__select_links(comm, &m);
    if (m.link_beta < ONE_CONNECTION_BPS) {
        comm->hosts.one_stream = 1;
        if (comm->rank == 0)
            COLLIE_INFO("net",
                        "%.3f GB/s between hosts, under %.1f: a message crosses on one "
                        "connection, not striped",
                        m.link_beta * 1e-9, ONE_CONNECTION_BPS * 1e-9);
    }
    return COLLIE_OK;
}
