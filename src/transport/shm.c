/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm.c - the shared-memory transport: the host's segment (creating and
 * opening it), the staging window with its per-round sync, the abort record,
 * and the transport's table.
 */
#define _GNU_SOURCE
#include "shm.h"

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "../core/bootstrap.h"
#include "../core/config.h"
#include "../core/log.h"
#include "../core/segment.h"
#include "shm_layout.h"
#include "transport.h"

#define PAGE 4096u
#define RING_TOTAL_MAX (64u << 20) /* all rings of a host together, at most */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static size_t pow2_floor(size_t v)
{
    size_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return p;
}

static struct collie__shm_map plan(int n)
{
    struct collie__shm_map m;
    size_t pairs = (size_t)COLLIE_SHM_CHANNELS * (size_t)n * (size_t)n;
    m.slot_bytes = align_up((size_t)collie__config_int(COLLIE_CFG_SHM_SLOT), 64);
    if (m.slot_bytes < PAGE)
        m.slot_bytes = PAGE;
    if (m.slot_bytes < (size_t)n * 64) /* room for one cache line of each rank's block */
        m.slot_bytes = (size_t)n * 64;
    size_t ring = pow2_floor((size_t)collie__config_int(COLLIE_CFG_P2P_BUFFER));
    while (ring > PAGE && ring * pairs > RING_TOTAL_MAX)
        ring /= 2;
    m.ring_bytes = ring < PAGE ? PAGE : ring;
    m.ctl = align_up(sizeof(struct collie__shm_header), PAGE);
    m.chan = align_up(m.ctl + (size_t)n * sizeof(struct collie__rank_ctl), PAGE);
    m.slot = align_up(m.chan + pairs * sizeof(struct collie__chan), PAGE);
    m.ring = m.slot + (size_t)n * 2 * m.slot_bytes;
    m.total = align_up(m.ring + pairs * m.ring_bytes, PAGE);
    return m;
}

/* Room for a kernel's boot id (a UUID: 36 characters) and its NUL. */
#define KERNEL_ID_LEN 40

/* How this rank waits, given the ranks that compete for its CPUs (comm->crowd_ranks, _cpus). */
static void set_wait_policy(struct collie__shm *s, int ranks, int cpus)
{
    int oversubscribed = ranks > cpus;
    long long spin = collie__config_int(COLLIE_CFG_SPIN_US);
    /* Oversubscribed, the awaited rank most likely waits for this very CPU: yield at once. */
    s->spin_ns = (uint64_t)(spin >= 0 ? spin : oversubscribed ? 0 : 50) * 1000u;
    s->yield_ns = collie__wait_yield_ns(ranks, cpus);
    /* With a CPU for every rank, two ranks stuck on one CPU are the scheduler's accident. */
    s->may_move = !oversubscribed && collie__config_int(COLLIE_CFG_MOVE) != 0;
    s->crowded = oversubscribed;
}

/*
 * Whether loops of small messages keep to each ring's head (shm_xfer.c):
 * COLLIE_RING_HEAD, by default on AMD CPUs.  At 2 ranks a tree broadcast
 * of 1-4 KiB in a loop took half the time at the head on an AMD EPYC (Zen
 * 4), near and far apart, and 2.2-2.5x longer on an Intel Xeon (Sapphire
 * Rapids), where a 64 KiB head was no better: not how far the sender may
 * run ahead, then, but (not yet measured apart) the lines the other core
 * just read costing more to write again than lines a lap old.
 */
static uint32_t ring_head_choice(void)
{
    long long v = collie__config_int(COLLIE_CFG_RING_HEAD);
    if (v >= 0)
        return v > 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d))
        return b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u; /* "AuthenticAMD" */
#endif
    return 0;
}

/* The leader's half: a fresh segment, sized and initialised. Returns its fd or -1. */
static int create_segment(collie_comm *comm, const struct collie__shm_map *m, void **base,
                          uint64_t *ino)
{
    struct collie__seg seg;
    int err = collie__seg_create("collie", m->total, &seg);
    if (err) {
        collie__fail(comm, COLLIE_ERR_SYSTEM, "cannot make the host's %zu-byte shared segment: %s",
                     m->total, strerror(err));
        return -1;
    }
    *base = seg.base;
    *ino = seg.ino;
    struct collie__shm_header *h = *base;
    h->nranks = (uint32_t)comm->local_size;
    h->ring_head = ring_head_choice(); /* the followers frame as the leader chose */
    h->slot_bytes = m->slot_bytes;
    h->ring_bytes = m->ring_bytes;
    h->total_bytes = m->total;
    atomic_store_explicit(&h->abort_state, COLLIE_ABORT_NONE, memory_order_relaxed);
    h->magic = COLLIE_SHM_MAGIC; /* the rest is zero: a new segment */
    return seg.fd;
}

/* A follower's half: the leader's segment, reached through /proc. */
static collie_status open_segment(collie_comm *comm, int leader_pid, int leader_fd,
                                  const struct collie__shm_map *m, void **base, uint64_t *ino)
{
    char path[COLLIE__SEG_PATH_LEN];
    collie__seg_path(leader_pid, leader_fd, path);
    struct collie__seg seg;
    int err = collie__seg_open_peer(leader_pid, leader_fd, &seg);
    if (err)
        return collie__fail(comm, COLLIE_ERR_SYSTEM,
                            "cannot open rank %d's shared segment at %s: %s (are both ranks in "
                            "the same PID namespace, run by the same user?)",
                            comm->local_to_global[0], path, strerror(err));
    if (seg.file_size != m->total) {
        size_t theirs = seg.file_size;
        collie__seg_close(&seg);
        return collie__fail(comm, COLLIE_ERR_MISMATCH,
                            "rank %d's shared segment has %zu bytes, this rank expects %zu: do "
                            "all ranks use the same COLLIE_SHM_SLOT and COLLIE_P2P_BUFFER?",
                            comm->local_to_global[0], theirs, m->total);
    }
    err = collie__seg_map(&seg, m->total, 1);
    if (err)
        return collie__fail(comm, COLLIE_ERR_SYSTEM, "mmap of %s failed: %s", path, strerror(err));
    *base = seg.base;
    *ino = seg.ino;
    const struct collie__shm_header *h = *base;
    if (h->magic != COLLIE_SHM_MAGIC || h->nranks != (uint32_t)comm->local_size ||
        h->slot_bytes != m->slot_bytes || h->ring_bytes != m->ring_bytes ||
        h->total_bytes != m->total) {
        collie__seg_close(&seg);
        *base = NULL;
        return collie__fail(comm, COLLIE_ERR_MISMATCH,
                            "rank %d's shared segment is not a collie segment for %d ranks of this "
                            "version with this rank's COLLIE_SHM_SLOT and COLLIE_P2P_BUFFER",
                            comm->local_to_global[0], comm->local_size);
    }
    return COLLIE_OK;
}

static void attach(struct collie__shm *s, void *base, int n, int me)
{
    unsigned char *b = base;
    s->hdr = base;
    s->ctl = (struct collie__rank_ctl *)(b + s->map.ctl);
    s->chan = (struct collie__chan *)(b + s->map.chan);
    s->slot = b + s->map.slot;
    s->ring = b + s->map.ring;
    s->n = n;
    s->me = me;
    s->ring_head = s->hdr->ring_head != 0;
    s->ctl[me].pid = (int32_t)getpid();
    s->ctl[me].desc[0].seq = (uint32_t)-2; /* no call yet (published by the state below) */
    s->ctl[me].desc[1].seq = (uint32_t)-1;
    s->cpu = sched_getcpu();
    atomic_store_explicit(&s->ctl[me].cpu, s->cpu, memory_order_relaxed);
    atomic_store_explicit(&s->ctl[me].state, COLLIE_RANK_ALIVE, memory_order_release);
}

/* The bytes of each slot that small rounds move through (collie__win_round), at most. */
#define WIN_SPAN ((size_t)256 << 10)

/* The head of each slot that small rounds move through: WIN_SPAN, or the whole of a smaller slot. */
static size_t win_span(const struct collie__shm *s)
{
    return s->map.slot_bytes < WIN_SPAN ? s->map.slot_bytes : WIN_SPAN;
}

#ifdef MADV_POPULATE_WRITE
/* Maps [p, p + n) into this process's page tables, whole pages. */
static void populate_range(const unsigned char *p, size_t n)
{
    uintptr_t from = (uintptr_t)p & ~(uintptr_t)(PAGE - 1), to = align_up((uintptr_t)p + n, PAGE);
    (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
}
#endif

/*
 * Maps the rings this rank sends and receives on, and the head of every
 * rank's slots, into its page tables now.  A ring's pages otherwise fault in
 * on its first pass, a page at a time at both ends: measured at 2 ranks, a
 * pairwise alltoall of 32 KiB blocks took 40 us an exchange until its
 * messages had gone once round the 256 KiB ring, then 5, and adaptive's
 * learner (arms.c), which tries the window now and then, kept finding it
 * that slow.  The slots likewise, up to WIN_SPAN of each, where small rounds
 * move (collie__win_round); a huge COLLIE_SHM_SLOT stays lazy beyond.  At
 * most 2 x COLLIE_SHM_CHANNELS x (n - 1) rings and 2n slot heads a rank, a
 * few MiB (the rings of all pairs together are capped: plan()).  A hint: a
 * kernel without MADV_POPULATE_WRITE (5.14) faults them in as before.
 */
static void populate(struct collie__shm *s)
{
#ifdef MADV_POPULATE_WRITE
    for (size_t k = 0; k < 2 * (size_t)s->n; k++)
        populate_range(s->slot + k * s->map.slot_bytes, win_span(s));
    for (int ch = 0; ch < COLLIE_SHM_CHANNELS; ch++)
        for (int peer = 0; peer < s->n; peer++) {
            if (peer == s->me)
                continue;
            populate_range(collie__shm_ring(s, ch, s->me, peer), s->map.ring_bytes);
            populate_range(collie__shm_ring(s, ch, peer, s->me), s->map.ring_bytes);
        }
#else
    (void)s;
#endif
}

/*
 * The CPUs each host's ranks may run on, from every rank's affinity mask
 * (masks[r * stride]): comm->cpus for this host, the fewest of any host, and
 * whether any host has more ranks than CPUs (the same answers on every rank,
 * so the cost model chooses alike).  A launcher that binds each rank to its
 * own core (mpirun does, for 2 ranks) leaves every process one CPU but the
 * host one per rank: judged by its own mask, each would think itself
 * oversubscribed and never poll.  A mask that could not be read (all zero)
 * leaves the old judgement.
 */
static void count_host_cpus(collie_comm *comm, const cpu_set_t *masks, size_t stride)
{
    int oversubscribed = 0, fewest = 0;
    for (int h = 0; h < comm->nhosts; h++) {
        cpu_set_t host;
        CPU_ZERO(&host);
        for (int i = comm->hosts.start[h]; i < comm->hosts.start[h + 1]; i++) {
            int r = comm->hosts.ranks[i];
            const cpu_set_t *m = (const cpu_set_t *)((const char *)masks + (size_t)r * stride);
            if (!CPU_COUNT(m))
                return;
            CPU_OR(&host, &host, m);
        }
        int ranks = comm->hosts.start[h + 1] - comm->hosts.start[h], cpus = CPU_COUNT(&host);
        oversubscribed |= ranks > cpus;
        fewest = h == 0 || cpus < fewest ? cpus : fewest;
        if (h == comm->hosts.host_of[comm->rank])
            comm->cpus = cpus;
    }
    comm->hosts.oversubscribed = oversubscribed;
    comm->hosts.cores = fewest;
}

/*
 * Hosts can share one kernel's CPUs: hosts emulated in network namespaces,
 * containers of one server.  The ranks of every host on this rank's kernel
 * (kernels[r * stride]: its boot id, KERNEL_ID_LEN bytes, "" where
 * unreadable) then compete for
 * the union of their masks; where they crowd those CPUs more than this
 * host's ranks crowd its own, they are the crowd this rank's waits must
 * respect (crowd_ranks, crowd_cpus: two emulated hosts of 2 ranks on 2 CPUs
 * are 4 ranks on 2, and a sync that spins for its host's partner takes the
 * CPU the other host's ranks need).  Where every rank runs on one kernel,
 * hosts.shared_cores is its CPUs, for the cost model (alike on all ranks).
 */
static void count_kernel_cpus(collie_comm *comm, const char *kernels, const cpu_set_t *masks,
                              size_t stride)
{
    comm->crowd_ranks = comm->local_size;
    comm->crowd_cpus = comm->cpus;
    comm->hosts.shared_cores = 0;
    const char *mine = kernels + (size_t)comm->rank * stride;
    if (comm->nhosts < 2 || !*mine)
        return;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    int ranks = 0, everyone = 1;
    for (int r = 0; r < comm->size; r++) {
        const cpu_set_t *m = (const cpu_set_t *)((const char *)masks + (size_t)r * stride);
        if (strncmp(kernels + (size_t)r * stride, mine, KERNEL_ID_LEN) != 0) {
            everyone = 0;
            continue;
        }
        if (!CPU_COUNT(m))
            return;
        CPU_OR(&cpus, &cpus, m);
        ranks++;
    }
    int n = CPU_COUNT(&cpus);
    if (everyone)
        comm->hosts.shared_cores = n;
    if ((long)ranks * comm->crowd_cpus > (long)comm->crowd_ranks * n) {
        comm->crowd_ranks = ranks;
        comm->crowd_cpus = n;
    }
}

/* What each rank reports of its set-up: 1 set up, 2 added: reads every local peer's memory. */
struct shm_ready {
    int32_t ok;
    uint32_t call_ns;  /* its fastest read of a peer's memory (shm_attach.c); 0: none */
    uint32_t block_ns; /* its fastest read of a peer's probe block; 0: none */
};

/*
 * Whether this rank reads every other local rank's memory (shm_attach.c):
 * pids and probe addresses of all ranks, `stride` bytes apart.
 */
static int probe_attach(const collie_comm *comm, const int32_t *pids, const uint64_t *probes,
                        size_t stride, struct shm_ready *me)
{
    int32_t pid[comm->local_size];
    uint64_t addr[comm->local_size];
    for (int i = 0; i < comm->local_size; i++) {
        size_t at = (size_t)comm->local_to_global[i] * stride;
        pid[i] = *(const int32_t *)((const char *)pids + at);
        addr[i] = *(const uint64_t *)((const char *)probes + at);
    }
    return collie__attach_probe(pid, addr, comm->local_size, comm->local_rank, &me->call_ns,
                                &me->block_ns);
}

static int by_value(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/*
 * The median of one of the ranks' single-copy timings (`field`, an offset in
 * struct shm_ready; 0 where a rank measured none): every rank computes it
 * from the same records, so the cost model prices the copies alike everywhere.
 */
static uint32_t median_ns(const struct shm_ready *ready, int n, size_t field)
{
    uint32_t *v = malloc((size_t)n * sizeof *v), median = 0;
    int k = 0;
    for (int r = 0; v && r < n; r++) {
        uint32_t ns = *(const uint32_t *)((const char *)&ready[r] + field);
        if (ns)
            v[k++] = ns;
    }
    if (k) {
        qsort(v, (size_t)k, sizeof *v, by_value);
        median = v[k / 2];
    }
    free(v);
    return median; /* 0 without memory too: the built-in rate then stands */
}

/*
 * The local peers' tables of collie_mem segments, from the exchange's
 * records (`stride` bytes apart, by global rank: pid and table fd at the
 * given places).  NULL when out of memory: every single copy then goes
 * through the kernel.
 */
static struct collie__peer_mem *open_peers(const collie_comm *comm, const int32_t *pid0,
                                           const int32_t *table_fd0, size_t stride)
{
    int n = comm->local_size;
    int32_t *pids = calloc((size_t)n, sizeof *pids), *fds = calloc((size_t)n, sizeof *fds);
    struct collie__peer_mem *peers = NULL;
    if (pids && fds) {
        for (int r = 0; r < n; r++) {
            size_t at = (size_t)comm->local_to_global[r] * stride;
            pids[r] = *(const int32_t *)(const void *)((const char *)pid0 + at);
            fds[r] = r == comm->local_rank
                         ? -1
                         : *(const int32_t *)(const void *)((const char *)table_fd0 + at);
        }
        peers = collie__mem_peers(n, pids, fds);
    }
    free(pids);
    free(fds);
    return peers;
}

/* FNV-1a over this host's pids in local-rank order (`stride` bytes apart, by global rank). */
static uint64_t host_ranks_hash(const collie_comm *comm, const int32_t *pid0, size_t stride)
{
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < comm->local_size; i++) {
        unsigned char pid[sizeof *pid0];
        memcpy(pid, (const char *)pid0 + (size_t)comm->local_to_global[i] * stride, sizeof pid);
        for (size_t b = 0; b < sizeof pid; b++)
            h = (h ^ pid[b]) * 1099511628211ull;
    }
    return h;
}

/*
 * Which kept segment the host reuses (shm_keep.c): the first of the
 * leader's that every local rank kept from a communicator of these very
 * processes, in this order.  From the exchange's records alone (ino and
 * ranks: COLLIE__SHM_KEEP_MAX each, `stride` bytes apart, by global rank),
 * so every rank of the host decides alike.  Returns its index in cand[], or
 * -1 for a fresh segment.
 */
static int choose_kept(const collie_comm *comm, const uint64_t *ino0, const uint64_t *ranks0,
                       size_t stride, uint64_t ranks, const struct collie__shm_kept *cand,
                       int ncand)
{
#define KEPT_AT(base, r, j)                                                                        \
    (((const uint64_t *)(const void *)((const char *)(base) + (size_t)(r)*stride))[j])
    int leader = comm->local_to_global[0];
    for (int j = 0; j < COLLIE__SHM_KEEP_MAX; j++) {
        uint64_t ino = KEPT_AT(ino0, leader, j);
        if (!ino || KEPT_AT(ranks0, leader, j) != ranks)
            continue;
        int everyone = 1;
        for (int i = 1; i < comm->local_size && everyone; i++) {
            int r = comm->local_to_global[i], found = 0;
            for (int k = 0; k < COLLIE__SHM_KEEP_MAX && !found; k++)
                found = KEPT_AT(ino0, r, k) == ino && KEPT_AT(ranks0, r, k) == ranks;
            everyone = found;
        }
        for (int k = 0; everyone && k < ncand; k++)
            if (cand[k].ino == ino)
                return k;
    }
    return -1;
#undef KEPT_AT
}

/*
 * The leader's half of reusing a kept segment, while the others wait in the
 * exchange: every flag and counter back to zero, as in a fresh one (the
 * rings' and slots' bytes mean nothing until a counter says so), and no
 * abort on record.
 */
static void reset_kept(void *base, const struct collie__shm_map *m)
{
    struct collie__shm_header *h = base;
    memset((unsigned char *)base + m->ctl, 0, m->slot - m->ctl);
    h->ring_head = ring_head_choice();
    h->abort_status = 0;
    h->abort_rank = 0;
    memset(h->abort_msg, 0, sizeof h->abort_msg);
    atomic_store_explicit(&h->abort_state, COLLIE_ABORT_NONE, memory_order_relaxed);
}

/*
 * Creates (host's lowest rank) or opens (the others) the host's segment.
 * Collective over the bootstrap; comm's host layout must be known.
 */
static collie_status shm_transport_open(collie_comm *comm)
{
    struct collie__shm *s = calloc(1, sizeof *s);
    uint32_t *counters =
        calloc(6 * COLLIE_SHM_CHANNELS * (size_t)comm->local_size, sizeof *counters);
    struct {
        int32_t pid, fd;
        int32_t mem_table_fd;       /* collie__mem_table_fd(): its collie_mem segments */
        uint64_t probe;             /* collie__attach_probe_area() */
        cpu_set_t cpus;             /* where the rank may run: the host's CPUs are the union */
        char kernel[KERNEL_ID_LEN]; /* its kernel's boot id: hosts on one kernel share its CPUs */
        uint64_t kept_ino[COLLIE__SHM_KEEP_MAX]; /* segments it kept (shm_keep.c); 0: none */
        uint64_t kept_ranks[COLLIE__SHM_KEEP_MAX];
    } *all = calloc((size_t)comm->size, sizeof *all), mine;
    struct shm_ready *ok = calloc((size_t)comm->size, sizeof *ok);
    if (!s || !counters || !all || !ok) {
        free(s), free(counters), free(all), free(ok);
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the shared-memory state");
    }
    s->map = plan(comm->local_size);
    comm->hosts.ring_bytes = plan(comm->hosts.max_local).ring_bytes; /* off the call's path */
    void *base = NULL;
    int fd = -1;
    uint64_t ino = 0;
    if (comm->local_rank == 0)
        fd = create_segment(comm, &s->map, &base, &ino);
    memset(&mine, 0, sizeof mine);
    struct collie__shm_kept cand[COLLIE__SHM_KEEP_MAX];
    int ncand = collie__shm_keep_take(&s->map, cand), reuse = -1;
    for (int k = 0; k < ncand; k++) {
        mine.kept_ino[k] = cand[k].ino;
        mine.kept_ranks[k] = cand[k].ranks;
    }
    mine.pid = (int32_t)getpid();
    mine.fd = fd;
    void *probe_area = collie__attach_probe_area();
    mine.probe = (uint64_t)(uintptr_t)probe_area;
    mine.mem_table_fd = mine.probe ? collie__mem_table_fd() : -1;
    if (sched_getaffinity(0, sizeof mine.cpus, &mine.cpus) != 0)
        CPU_ZERO(&mine.cpus);
    collie__identity_boot_id(mine.kernel, sizeof mine.kernel);
    /* Every rank takes part in both exchanges, so a failure anywhere fails all, at once. */
    collie_status st = collie__bootstrap_allgather(comm, &mine, all, sizeof mine);
    uint64_t ranks = st == COLLIE_OK ? host_ranks_hash(comm, &all[0].pid, sizeof *all) : 0;
    if (st == COLLIE_OK && comm->local_rank == 0 && fd < 0)
        st = comm->failed; /* create_segment() said why; the others learn it in the exchange */
    if (st == COLLIE_OK)
        reuse =
            choose_kept(comm, all[0].kept_ino, all[0].kept_ranks, sizeof *all, ranks, cand, ncand);
    if (reuse >= 0) {
        if (base) /* the leader's fresh one, not needed after all */
            munmap(base, s->map.total);
        base = cand[reuse].base;
        ino = cand[reuse].ino;
        if (comm->local_rank == 0)
            reset_kept(base, &s->map);
    } else if (st == COLLIE_OK && comm->local_rank != 0) {
        int leader = comm->local_to_global[0];
        st = all[leader].fd < 0
                 ? collie__fail(comm, COLLIE_ERR_PEER_LOST,
                                "rank %d could not create this host's shared "
                                "segment (see its output)",
                                leader)
                 : open_segment(comm, all[leader].pid, all[leader].fd, &s->map, &base, &ino);
    }
    /* Single copies are kept if every rank reads all its local peers. */
    struct shm_ready me_ok = {.ok = st == COLLIE_OK};
    if (me_ok.ok && reuse >= 0) /* the same processes: what this rank measured then */
        me_ok = (struct shm_ready){.ok = 1 | (cand[reuse].probe_ok & 2),
                                   .call_ns = cand[reuse].call_ns,
                                   .block_ns = cand[reuse].block_ns};
    else if (me_ok.ok && probe_attach(comm, &all[0].pid, &all[0].probe, sizeof *all, &me_ok))
        me_ok.ok |= 2;
    collie_status st2 = collie__bootstrap_allgather(comm, &me_ok, ok, sizeof me_ok);
    free(probe_area); /* every peer has probed it: the exchange waited for them all */
    int attach_ok = 1;
    for (int r = 0; st == COLLIE_OK && st2 == COLLIE_OK && r < comm->size; r++) {
        if (!ok[r].ok)
            st = collie__fail(comm, COLLIE_ERR_PEER_LOST,
                              "rank %d could not set up shared memory (see its output)", r);
        attach_ok &= (ok[r].ok & 2) != 0;
    }
    int timed = st == COLLIE_OK && st2 == COLLIE_OK;
    uint32_t call_ns = timed ? median_ns(ok, comm->size, offsetof(struct shm_ready, call_ns)) : 0,
             block_ns = timed ? median_ns(ok, comm->size, offsetof(struct shm_ready, block_ns)) : 0;
    if (st == COLLIE_OK)
        st = st2;
    if (fd >= 0)
        close(fd); /* every peer holds its own mapping by now, or has failed */
    if (st == COLLIE_OK) {
        count_host_cpus(comm, &all[0].cpus, sizeof *all);
        count_kernel_cpus(comm, all[0].kernel, &all[0].cpus, sizeof *all);
        s->peers = open_peers(comm, &all[0].pid, &all[0].mem_table_fd, sizeof *all);
    }
    free(all);
    free(ok);
    for (int k = 0; k < ncand; k++)
        if (k != reuse)
            collie__shm_keep_return(&cand[k]);
    if (st != COLLIE_OK) {
        if (base)
            munmap(base, s->map.total);
        free(counters);
        free(s);
        return st;
    }
    collie__shm_keep_opened();
    s->kept = (struct collie__shm_kept){.base = base,
                                        .map = s->map,
                                        .ino = ino,
                                        .ranks = ranks,
                                        .probe_ok = me_ok.ok & 2,
                                        .call_ns = me_ok.call_ns,
                                        .block_ns = me_ok.block_ns};
    s->sent = counters;
    s->rcvd = counters + COLLIE_SHM_CHANNELS * comm->local_size;
    s->tail_seen = counters + 2 * COLLIE_SHM_CHANNELS * comm->local_size;
    s->head_seen = counters + 3 * COLLIE_SHM_CHANNELS * comm->local_size;
    s->sent_last = counters + 4 * COLLIE_SHM_CHANNELS * comm->local_size;
    s->rcvd_last = counters + 5 * COLLIE_SHM_CHANNELS * comm->local_size;
    attach(s, base, comm->local_size, comm->local_rank);
    if (reuse < 0) /* a kept one is in this rank's page tables already */
        populate(s);
    s->attach = attach_ok;
    s->attach_call_ns = attach_ok ? call_ns : 0;
    s->attach_block_ns = attach_ok ? block_ns : 0;
    set_wait_policy(s, comm->crowd_ranks, comm->crowd_cpus);
    comm->shm = s;
    COLLIE_INFO("shm",
                "%d ranks on this host, segment %zu bytes (%s), slot %zu, ring %zu (%s), spin %llu "
                "us, yield %llu us (%d ranks on %d CPUs%s), cross-memory attach %s (a call %.3f "
                "us, %.3f GB/s)",
                s->n, s->map.total, reuse >= 0 ? "kept from a finalized communicator" : "new",
                s->map.slot_bytes, s->map.ring_bytes,
                s->ring_head ? "small messages at its head" : "every message round it",
                (unsigned long long)s->spin_ns / 1000, (unsigned long long)s->yield_ns / 1000,
                comm->crowd_ranks, comm->crowd_cpus,
                comm->crowd_ranks > comm->local_size ? ", hosts on one kernel" : "",
                attach_ok ? "on" : "off", s->attach_call_ns * 1e-3,
                collie__attach_beta(comm) * 1e-9);
    return COLLIE_OK;
}

static void wake_everyone(struct collie__shm *s)
{
    for (int r = 0; r < s->n; r++)
        collie__flag_wake_all(&s->ctl[r].step);
    for (size_t c = 0; c < (size_t)COLLIE_SHM_CHANNELS * (size_t)s->n * (size_t)s->n; c++) {
        collie__flag_wake_all(&s->chan[c].head);
        collie__flag_wake_all(&s->chan[c].tail);
    }
}

/* Marks this rank as gone (peers waiting on it fail fast) and unmaps. */
static void shm_transport_close(collie_comm *comm)
{
    struct collie__shm *s = comm->shm;
    if (!s)
        return;
    COLLIE_INFO("shm",
                "waits that ended while polling: %llu, while yielding: %llu, after "
                "sleeping: %llu; waits that found the peer on this CPU: %llu; moves off it: %llu",
                (unsigned long long)s->waits_polled, (unsigned long long)s->waits_yielded,
                (unsigned long long)s->waits_slept, (unsigned long long)s->waits_shared_cpu,
                (unsigned long long)s->moves);
    atomic_store_explicit(&s->ctl[s->me].state, COLLIE_RANK_LEFT, memory_order_release);
    wake_everyone(s);
    if (s->attach_bytes_kernel || s->attach_bytes_mapped)
        COLLIE_INFO("shm",
                    "single copies: %llu bytes through the kernel, %llu through peers' "
                    "collie_mem segments mapped here",
                    (unsigned long long)s->attach_bytes_kernel,
                    (unsigned long long)s->attach_bytes_mapped);
    collie__mem_peers_close(s->peers, s->n);
    /* After a failure a peer may still be in a call: the segment goes with this communicator. */
    int keep =
        atomic_load(&comm->failed) == COLLIE_OK &&
        atomic_load_explicit(&s->hdr->abort_state, memory_order_acquire) == COLLIE_ABORT_NONE;
    if (!keep)
        munmap(s->hdr, s->map.total);
    collie__shm_keep_closed(keep ? &s->kept : NULL);
    free(s->sent);
    free(s);
    comm->shm = NULL;
}

/* Tells every rank on the host that this communicator failed. */
static void shm_transport_abort(collie_comm *comm, collie_status status, const char *msg)
{
    struct collie__shm *s = comm->shm;
    if (!s)
        return;
    uint32_t expected = COLLIE_ABORT_NONE;
    if (!atomic_compare_exchange_strong(&s->hdr->abort_state, &expected, COLLIE_ABORT_WRITING))
        return; /* somebody else's failure came first; it is the one to report */
    s->hdr->abort_status = (uint32_t)status;
    s->hdr->abort_rank = comm->rank;
    snprintf(s->hdr->abort_msg, sizeof s->hdr->abort_msg, "%s", msg);
    atomic_store_explicit(&s->hdr->abort_state, COLLIE_ABORT_SET, memory_order_release);
    wake_everyone(s);
}

void collie__shm_begin(collie_comm *comm, const struct collie__op_desc *desc)
{
    struct collie__shm *s = comm->shm;
    struct collie__op_desc *slot = &s->ctl[s->me].desc[desc->seq & 1];
    /*
     * As a seqlock: first a number of the other parity, which no reader of
     * this slot looks for, then the fields, then the number.  Each field is
     * a release store, so none is seen before the number that marks the
     * slot as being written (no fence: TSan refuses those); a reader that
     * read the old number around a half-written copy sees it change
     * (read_desc), one that reads the new number sees every field.  (A plain
     * struct copy let a reader take the old call's number with the new
     * call's count: a false MISMATCH at 8 ranks under TSan.)
     */
    __atomic_store_n(&slot->seq, desc->seq ^ 1u, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->coll, desc->coll, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->dtype, desc->dtype, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->op, desc->op, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->algo, desc->algo, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->root, desc->root, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->count, desc->count, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->seq, desc->seq, __ATOMIC_RELEASE);
    s->check_desc = 1;
}

size_t collie__win_bytes(const collie_comm *comm) { return comm->shm->map.slot_bytes; }

size_t collie__shm_ring_bytes(int local_size) { return plan(local_size).ring_bytes; }

/*
 * Where a round's bytes go in its slots.  A call of a few KiB rewrote the
 * same lines of a slot every other round, while the peers still held them
 * from the round before: each line the writer took back crossed between the
 * cores, and the peers then read it back across them.  Rounds of
 * WIN_MOVE_MIN bytes up to half a slot move on through WIN_SPAN bytes of it
 * instead, a page-aligned place per round, so a line comes round again only
 * after WIN_SPAN / bytes rounds of its parity.  Measured at 2 ranks in a
 * loop, forced, two rounds A/B: a staged broadcast of 4 KiB 0.87 -> 0.62
 * us, 16 KiB 2.2 -> 1.6-1.8, 64 KiB 7.8-8.2 -> 3.7; a oneshot allreduce of
 * 4 KiB 1.66 -> 1.35, 16 KiB 5.2 -> 3.7.  Below 1 KiB, a page a round cost
 * more than it saved (a line each: 0.26 -> 0.30 us); a span of 64 KiB kept
 * half the gain, 512 KiB no more than 256.  Where the ranks outnumber the
 * cores, most pairs share a core and only rounds of up to
 * WIN_CROWDED_MOVE_MAX move (8 ranks on 2 cores: an allgather of 8 KiB
 * blocks 18 -> 15 us, of 32 KiB blocks 48 -> 53).  Every rank counts the
 * same rounds of the same bytes, so all place a round alike.
 */
#define WIN_STRIDE_ALIGN ((size_t)4096)
#define WIN_MOVE_MIN ((size_t)1024)
#define WIN_CROWDED_MOVE_MAX ((size_t)16 << 10)

unsigned collie__win_round(collie_comm *comm, size_t bytes)
{
    struct collie__shm *s = comm->shm;
    uint32_t round = s->round++;
    unsigned parity = round & 1u;
    size_t most = s->crowded ? WIN_CROWDED_MOVE_MAX : s->map.slot_bytes / 2;
    s->shift[parity] = 0;
    s->swap[parity] = 0;
    if (bytes < WIN_MOVE_MIN || bytes > most)
        return parity;
    size_t stride = align_up(bytes, WIN_STRIDE_ALIGN), places = win_span(s) / stride;
    if (places > 1)
        s->shift[parity] = (round >> 1) % places * stride;
    return parity;
}

/*
 * An exchange between 2 ranks: each reads the whole of what its peer wrote,
 * and the read leaves those lines in the reader's cache.  Writing its own
 * slot again, a rank took each line back from the other core before it
 * could write it, and its peer then read it across again: two crossings a
 * line a round.  Here the two slots of a parity change hands each time it
 * comes round, so a rank writes the lines it read two rounds before, still
 * in its cache, in place (moving places would forgo that): one crossing a
 * line.  Measured forced at 2 ranks, A/B against the places moved as
 * collie__win_round() moves them (`collie bench COLL -n 2 --algo ...`, two
 * rounds): a oneshot allreduce of 4 KiB 1.43 -> 1.00-1.07 us, 64 KiB
 * 11.9-12.6 -> 8.9; twoshot 64 KiB 11.3-11.6 -> 7.6-8.3; a staged
 * allgather of 4 KiB 0.89-0.93 -> 0.54-0.61, 256 KiB 19.5-20.2 -> 14.6-16.0.
 * With more ranks each line has several readers, none of whom can own it.
 * Every rank counts the same rounds, so all hand the slots over alike.
 */
unsigned collie__win_exchange(collie_comm *comm, size_t bytes)
{
    struct collie__shm *s = comm->shm;
    if (s->n != 2)
        return collie__win_round(comm, bytes);
    uint32_t round = s->round++;
    unsigned parity = round & 1u;
    s->shift[parity] = 0;
    s->swap[parity] = (round >> 1) & 1u;
    return parity;
}

_Static_assert(COLLIE__WIN_CARRY == COLLIE_SHM_CARRY, "shm.h and shm_layout.h agree");

/* The payload of this rank's next step: a peer reads it only after that step is posted. */
void *collie__win_carry(collie_comm *comm)
{
    struct collie__shm *s = comm->shm;
    return s->ctl[s->me].step.payload[(s->step + 1) & 1];
}

/* The payload of local rank r's step that this rank's last sync waited for (a peer is at most one step further). */
const void *collie__win_carried(const collie_comm *comm, int local_rank)
{
    const struct collie__shm *s = comm->shm;
    return s->ctl[local_rank].step.payload[s->step & 1];
}

void *collie__win_slot(const collie_comm *comm, int local_rank, unsigned parity)
{
    const struct collie__shm *s = comm->shm;
    size_t holder = (size_t)local_rank ^ s->swap[parity]; /* whose slot it was: 0 or 1 at 2 ranks */
    return s->slot + (holder * 2 + parity) * s->map.slot_bytes + s->shift[parity];
}

/*
 * A copy of the descriptor in a peer's slot for calls of this parity; 0 if
 * the peer moved on while we read (the seq read again after the copy).
 */
static int read_desc(const struct collie__shm *s, int peer, uint32_t parity,
                     struct collie__op_desc *copy)
{
    const struct collie__op_desc *theirs = &s->ctl[peer].desc[parity & 1];
    uint32_t seq = __atomic_load_n(&theirs->seq, __ATOMIC_ACQUIRE);
    /* Acquire loads, field by field: the seq read after them stays after them (no fence: TSan). */
    *copy = (struct collie__op_desc){
        .seq = seq,
        .coll = __atomic_load_n(&theirs->coll, __ATOMIC_ACQUIRE),
        .dtype = __atomic_load_n(&theirs->dtype, __ATOMIC_ACQUIRE),
        .op = __atomic_load_n(&theirs->op, __ATOMIC_ACQUIRE),
        .algo = __atomic_load_n(&theirs->algo, __ATOMIC_ACQUIRE),
        .root = __atomic_load_n(&theirs->root, __ATOMIC_ACQUIRE),
        .count = __atomic_load_n(&theirs->count, __ATOMIC_ACQUIRE),
    };
    return __atomic_load_n(&theirs->seq, __ATOMIC_RELAXED) == seq;
}

/*
 * A peer's descriptor of call `mine` against ours; only a peer at this very
 * call is judged.  Past a sync it may already be collectives further:
 * algorithms over point-to-point messages (a broadcast tree) let ranks run
 * ahead of a slow one by many calls, and its slot then holds a later call
 * (measured: a rank at collective #5 read a peer's #1829).  Once the step's
 * tag shows the peer posted this sync in this very call, it compared its
 * descriptor with ours on its way through.
 */
static collie_status compare_desc(collie_comm *comm, int peer, const struct collie__op_desc *mine)
{
    struct collie__op_desc theirs;
    if (!read_desc(comm->shm, peer, mine->seq, &theirs) || theirs.seq != mine->seq ||
        collie__desc_equal(mine, &theirs))
        return COLLIE_OK;
    return collie__wire_mismatch(comm, comm->local_to_global[peer], mine, &theirs);
}

/*
 * The peer posted the step we waited for in call `seq`, not ours: the ranks'
 * calls differ (one ran calls that sync nowhere, over messages, while the
 * other synced).  Its descriptor of that call, where it still holds it.
 */
static collie_status steps_differ(collie_comm *comm, int peer, uint32_t seq)
{
    struct collie__op_desc theirs;
    if (read_desc(comm->shm, peer, seq, &theirs) && theirs.seq == seq)
        return collie__wire_mismatch(comm, comm->local_to_global[peer], &comm->cur, &theirs);
    char mine[160];
    collie__op_describe(&comm->cur, mine, sizeof mine);
    return collie__fail(comm, COLLIE_ERR_MISMATCH,
                        "rank %d called %s as collective #%u but rank %d synced with it in its "
                        "collective #%u",
                        comm->rank, mine, comm->cur.seq, comm->local_to_global[peer], seq);
}

/*
 * At a call's first sync: the call before it, too.  That one may have run
 * over messages and met no peer at all (two ranks that both took themselves
 * for a broadcast's root send and leave); this is the first place they meet.
 * This rank's descriptor of it, in *before; 0 for the first call.
 */
static int call_before(const collie_comm *comm, struct collie__op_desc *before)
{
    const struct collie__shm *s = comm->shm;
    uint32_t seq = comm->cur.seq - 1;
    return comm->cur.seq != 0 && read_desc(s, s->me, seq, before) && before->seq == seq;
}

collie_status collie__win_sync(collie_comm *comm)
{
    struct collie__shm *s = comm->shm;
    uint32_t step = ++s->step;
    atomic_store_explicit(&s->ctl[s->me].step.tag[step & 1], comm->cur.seq, memory_order_relaxed);
    collie__flag_post(&s->ctl[s->me].step, step);
    struct collie__op_desc before;
    const int check_before = s->check_desc && call_before(comm, &before);
    for (int k = 1; k < s->n; k++) {
        int peer = (s->me + k) % s->n;
        collie_status st =
            collie__flag_wait(comm, &s->ctl[peer].step, step, peer, "sync", &comm->cur, 0);
        if (st != COLLIE_OK)
            return st;
        /* A peer is at most one step further: this step's tag is still there. */
        uint32_t seq = atomic_load_explicit(&s->ctl[peer].step.tag[step & 1], memory_order_relaxed);
        if (seq != comm->cur.seq)
            return steps_differ(comm, peer, seq);
        if (s->check_desc)
            st = compare_desc(comm, peer, &comm->cur);
        if (st == COLLIE_OK && check_before)
            st = compare_desc(comm, peer, &before);
        if (st != COLLIE_OK)
            return st;
    }
    s->check_desc = 0;
    return COLLIE_OK;
}

collie_status collie__shm_judge(collie_comm *comm, int peer, const struct collie__op_desc *desc)
{
    const struct collie__shm *s = comm->shm;
    if (!s || desc != &comm->cur || desc->coll >= COLLIE_COLL_SEND ||
        atomic_load_explicit(&s->ctl[peer].state, memory_order_acquire) != COLLIE_RANK_ALIVE)
        return COLLIE_OK;
    collie_status st = compare_desc(comm, peer, desc);
    /*
     * A peer already in a later call, while what we wait for has not come,
     * would say as much; judged so, it failed a correct job once in CI (a
     * torch test at 3 ranks, not understood yet), so it is not judged: such
     * a wait ends at COLLIE_TIMEOUT, naming the peer.
     */
    return st;
}

static int shm_transport_reaches(const collie_comm *comm, int peer)
{
    return comm->shm && collie__local_index(comm, peer) >= 0;
}

const struct collie__transport collie__shm_transport = {
    .name = "shm",
    .open = shm_transport_open,
    .close = shm_transport_close,
    .reaches = shm_transport_reaches,
    .abort = shm_transport_abort,
    .check = collie__shm_check_abort,
    .stripes = collie__shm_xfer_stripes,
    .progress = collie__shm_xfer_progress,
    .pollfd = NULL, /* waits on futexes: wait() */
    .wait = collie__shm_xfer_wait,
};
