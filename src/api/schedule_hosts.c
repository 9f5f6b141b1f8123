/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * schedule_hosts.c - the host-aware one-peer schedules (collie.h's
 * collie_host_schedule_kind): each step, one gateway per host talks across
 * hosts and the other members of the host talk in a ring around it.  Hosts
 * may hold any number of ranks, in any placement.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "api.h"
#include "schedule.h"

#define MAX_PERIOD 65536
#define MAX_STEP_RANKS (1L << 24) /* period x size: the memory of the steps */

struct hosts {
    collie_host_schedule_kind kind;
    int nhosts;
    int *start; /* host h's members are member[start[h] .. start[h + 1]), in rank order */
    int *member;
    int out_hops; /* hop counts cycled through: across hosts, and within host h's ring */
    int *in_hops;
    int pairs; /* several hosts, each of two ranks */
};

/* How many hops a ring of n cycles through: 1 for RING; 2^0 .. 2^floor(log2(n - 1)) for EXP. */
static int hop_count(collie_host_schedule_kind kind, int n)
{
    return kind == COLLIE_SCHED_INNER_OUTER_RING || n < 2 ? 1 : collie__log2_floor(n - 1) + 1;
}

/* The hop of step t around a ring of n (0: none). */
static int hop_at(collie_host_schedule_kind kind, int n, int hops, int t)
{
    if (n < 2)
        return 0;
    return kind == COLLIE_SCHED_INNER_OUTER_RING ? 1 : (1 << (t % hops)) % n;
}

/*
 * Step t.  Gateways exist only with several hosts; alone, a host's members
 * all form the ring.  When every host holds two ranks, a member would never
 * meet its host's other one (the gateways are always the same local ranks),
 * so odd steps pair each host's two ranks and the others count as step t/2.
 */
static void host_step(void *ctx, struct collie__step_edges *e, int t)
{
    const struct hosts *h = ctx;
    if (h->pairs && t % 2) {
        for (int g = 0; g < h->nhosts; g++) {
            collie__edge(e, h->member[h->start[g]], h->member[h->start[g] + 1], 0.5);
            collie__edge(e, h->member[h->start[g] + 1], h->member[h->start[g]], 0.5);
        }
        return;
    }
    int u = h->pairs ? t / 2 : t, gated = h->nhosts > 1;
    int across = hop_at(h->kind, h->nhosts, h->out_hops, u);
    for (int g = 0; across && g < h->nhosts; g++) { /* gateway to gateway */
        int to = (g + across) % h->nhosts;
        int from_size = h->start[g + 1] - h->start[g], to_size = h->start[to + 1] - h->start[to];
        collie__edge(e, h->member[h->start[g] + u % from_size],
                     h->member[h->start[to] + u % to_size], 0.5);
    }
    for (int g = 0; g < h->nhosts; g++) { /* the others, around the gateway */
        int size = h->start[g + 1] - h->start[g], ring = size - gated;
        int first = gated ? u % size + 1 : 0; /* the ring starts after the gateway */
        int hop = hop_at(h->kind, ring, h->in_hops[g], u);
        for (int q = 0; hop && q < ring; q++) {
            int a = (first + q) % size, b = (first + (q + hop) % ring) % size;
            collie__edge(e, h->member[h->start[g] + a], h->member[h->start[g] + b], 0.5);
        }
    }
}

static long long gcd(long long a, long long b)
{
    while (b) {
        long long r = a % b;
        a = b, b = r;
    }
    return a;
}

/* lcm(p, n), or 0 past MAX_PERIOD. */
static long long lcm_capped(long long p, long long n)
{
    long long l = p / gcd(p, n) * n;
    return l > MAX_PERIOD ? 0 : l;
}

static collie_status refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static collie_status refuse(const char *fmt, ...)
{
    char detail[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    collie__api_error("collie_schedule_create_hosts: %s", detail);
    return COLLIE_ERR_INVALID_ARG;
}

/* Groups the ranks by host (h->start, h->member); checks host_of.  COLLIE_OK or refused. */
static collie_status group(struct hosts *h, int size, const int *host_of)
{
    int n = 0;
    for (int r = 0; r < size; r++) {
        if (host_of[r] < 0 || host_of[r] >= size)
            return refuse("host_of[%d]=%d is outside [0, %d)", r, host_of[r], size);
        n = host_of[r] + 1 > n ? host_of[r] + 1 : n;
    }
    h->nhosts = n;
    h->start = calloc((size_t)n + 2, sizeof *h->start);
    h->member = malloc((size_t)size * sizeof *h->member);
    h->in_hops = malloc((size_t)n * sizeof *h->in_hops);
    if (!h->start || !h->member || !h->in_hops) {
        collie__api_error("collie_schedule_create_hosts: no memory for %d ranks", size);
        return COLLIE_ERR_NOMEM;
    }
    for (int r = 0; r < size; r++)
        h->start[host_of[r] + 2]++;
    for (int g = 0; g < n; g++) {
        if (!h->start[g + 2])
            return refuse("no rank is on host %d, yet host %d is used (number hosts 0..H-1)", g,
                          n - 1);
        h->start[g + 2] += h->start[g + 1];
    }
    for (int r = 0; r < size; r++) /* counting sort: rank order within each host */
        h->member[h->start[host_of[r] + 1]++] = r;
    return COLLIE_OK;
}

collie_status collie_schedule_create_hosts(collie_host_schedule_kind kind, int size,
                                           const int *host_of, collie_schedule **out)
{
    if (!out)
        return refuse("sched (the output pointer) is NULL");
    *out = NULL;
    if (kind != COLLIE_SCHED_INNER_OUTER_RING && kind != COLLIE_SCHED_INNER_OUTER_EXPONENTIAL)
        return refuse("kind=%d is not a collie_host_schedule_kind", (int)kind);
    if (size < 1 || size > (1 << 28))
        return refuse("size=%d must be in [1, 2^28]", size);
    if (!host_of)
        return refuse("host_of is NULL");
    struct hosts h = {.kind = kind};
    collie_status st = group(&h, size, host_of);
    long long period = 1;
    if (st == COLLIE_OK) {
        int gated = h.nhosts > 1;
        h.pairs = gated;
        h.out_hops = hop_count(kind, h.nhosts);
        period = lcm_capped(period, h.out_hops);
        for (int g = 0; period && g < h.nhosts; g++) {
            int members = h.start[g + 1] - h.start[g];
            h.pairs &= members == 2;
            h.in_hops[g] = hop_count(kind, members - gated);
            period = lcm_capped(lcm_capped(period, gated ? members : 1), h.in_hops[g]);
        }
        period = h.pairs ? lcm_capped(period, 2) * 2 : period;
        if (!period)
            st = refuse("hosts of these sizes repeat only after more than %d steps: give the "
                        "hosts sizes with common factors",
                        MAX_PERIOD);
        else if (period * size > MAX_STEP_RANKS)
            st = refuse("%lld steps of %d ranks are more than 2^24 step-ranks", period, size);
    }
    if (st == COLLIE_OK)
        st = collie__schedule_build("collie_schedule_create_hosts", size, (int)period, host_step,
                                    &h, out);
    free(h.start), free(h.member), free(h.in_hops);
    return st;
}
