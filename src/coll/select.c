/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * select.c - which algorithm runs: the one COLLIE_ALGO names, else the one
 * the cost model (cost.h) predicts fastest on this communicator's machine:
 * its placement, and the rates of COLLIE_MACHINE's description or the
 * defaults.  Every input is alike on all ranks, so all choose the same.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/log.h"
#include "../transport/shm.h"
#include "algo.h"
#include "cost.h"

/* The rates, read once per process: the defaults, then COLLIE_MACHINE's file over them. */
static struct collie__machine rates;
static char rates_error[512];
static pthread_once_t rates_once = PTHREAD_ONCE_INIT;

static void load_rates(void)
{
    collie__machine_default_rates(&rates);
    const char *path = collie__config_string(COLLIE_CFG_MACHINE);
    if (*path && collie__machine_read(&rates, path, rates_error, sizeof rates_error))
        collie__machine_default_rates(&rates);
}

const char *collie__select_rates(struct collie__machine *m)
{
    pthread_once(&rates_once, load_rates);
    *m = rates;
    return rates_error[0] ? rates_error : NULL;
}

void collie__select_place(const collie_comm *comm, struct collie__machine *m)
{
    m->ranks = comm->size;
    m->hosts = comm->nhosts;
    m->ranks_per_host = comm->hosts.max_local;
    m->cores = comm->hosts.cores > 0 ? comm->hosts.cores : 1;
    m->slot_bytes =
        comm->shm ? collie__win_bytes(comm) : (size_t)collie__config_int(COLLIE_CFG_SHM_SLOT);
    m->ring_bytes = comm->hosts.ring_bytes; /* found when the transports open (shm.c) */
    m->attach = collie__attach_ok(comm);
    m->shared_cores = comm->hosts.shared_cores; /* hosts of one kernel, found at init (shm.c) */
}

void collie__select_links(const collie_comm *comm, struct collie__machine *m)
{
    if (comm->coll->link_alpha > 0) /* measured at init (link_probe.c) */
        m->link_alpha = comm->coll->link_alpha;
    if (comm->coll->link_beta > 0)
        m->link_beta = comm->coll->link_beta;
}

void collie__select_machine(const collie_comm *comm, struct collie__machine *m)
{
    collie__select_rates(m);
    collie__select_place(comm, m);
    collie__select_links(comm, m);
}

/*
 * A message tree that the model also runs on one host, where its cost says
 * (cost.c's tree).  A rank that sent moves on: on a host whose ranks
 * outnumber its cores it beats the window 5-8x for small messages (ranks
 * run calls ahead and are switched in once per many calls, where every
 * sync makes each of them run); with a core a rank, a message is one
 * line's trip where a sync is a round trip, about 2x.
 * What that costs is the window's promise that every rank fails with
 * MISMATCH from the very call in which the ranks' calls differ: a rank that
 * only sent learns it at its next call (docs/DESIGN.md).
 */
#define ON_HOST 1u
/* Across hosts, run only where COLLIE_ALGO names it (not measured there against the model's). */
#define FORCED_ACROSS 8u
/*
 * Reads peers' buffers (collie__attach_ok): offered to the model only where
 * the kernel allowed it between every local pair, and refused by
 * collie__select_check_forced where COLLIE_ALGO forces it and it did not.
 */
#define ATTACH 2u
/*
 * Not compared by cost: run where the model's choice is a window algorithm
 * that direct would beat were the ranks' CPUs to share no cache (placed()
 * below; adaptive.c finds in the call which placement it runs in).
 */
#define PLACEMENT 4u

static collie_status allreduce_oneshot(collie_comm *c, const struct collie__op *op)
{
    return collie__oneshot(c, op, -1);
}
static collie_status allreduce_twoshot(collie_comm *c, const struct collie__op *op)
{
    return collie__twoshot(c, op, -1);
}
static collie_status allreduce_direct(collie_comm *c, const struct collie__op *op)
{
    return collie__direct(c, op, -1);
}
static collie_status reduce_oneshot(collie_comm *c, const struct collie__op *op)
{
    return collie__oneshot(c, op, op->root);
}
static collie_status reduce_twoshot(collie_comm *c, const struct collie__op *op)
{
    return collie__twoshot(c, op, op->root);
}
static collie_status reduce_direct(collie_comm *c, const struct collie__op *op)
{
    return collie__direct(c, op, op->root);
}

/* The order is only that of `collie info`: what identifies an entry is (coll, id). */
#define HOST COLLIE_SCOPE_HOST
#define ANY COLLIE_SCOPE_ANY
#define A(id) COLLIE__ALGO_##id
static const struct collie__algo algos[] = {
    {A(ONESHOT), COLLIE_COLL_ALLREDUCE, HOST, allreduce_oneshot, 0},
    {A(TWOSHOT), COLLIE_COLL_ALLREDUCE, HOST, allreduce_twoshot, 0},
    {A(DIRECT), COLLIE_COLL_ALLREDUCE, HOST, allreduce_direct, ATTACH},
    {A(ADAPTIVE), COLLIE_COLL_ALLREDUCE, HOST, collie__adaptive, ATTACH | PLACEMENT},
    {A(RING), COLLIE_COLL_ALLREDUCE, ANY, collie__allreduce_ring, 0},
    {A(RD), COLLIE_COLL_ALLREDUCE, ANY, collie__allreduce_rd, 0},
    {A(RABENSEIFNER), COLLIE_COLL_ALLREDUCE, ANY, collie__allreduce_rab, 0},
    {A(HIERARCHICAL), COLLIE_COLL_ALLREDUCE, ANY, collie__allreduce_hierarchical, 0},
    {A(ONESHOT), COLLIE_COLL_REDUCE, HOST, reduce_oneshot, 0},
    {A(TWOSHOT), COLLIE_COLL_REDUCE, HOST, reduce_twoshot, 0},
    {A(DIRECT), COLLIE_COLL_REDUCE, HOST, reduce_direct, ATTACH},
    {A(ADAPTIVE), COLLIE_COLL_REDUCE, HOST, collie__adaptive, ATTACH | PLACEMENT},
    {A(RING), COLLIE_COLL_REDUCE, ANY, collie__reduce_ring, 0},
    {A(RD), COLLIE_COLL_REDUCE, ANY, collie__reduce_rd, 0},
    {A(TREE), COLLIE_COLL_REDUCE, ANY, collie__reduce_tree, ON_HOST | FORCED_ACROSS},
    {A(STAGED), COLLIE_COLL_BROADCAST, HOST, collie__broadcast_staged, 0},
    {A(DIRECT), COLLIE_COLL_BROADCAST, HOST, collie__broadcast_direct, ATTACH},
    {A(ADAPTIVE), COLLIE_COLL_BROADCAST, HOST, collie__adaptive, ATTACH | PLACEMENT},
    {A(TREE), COLLIE_COLL_BROADCAST, ANY, collie__broadcast_tree, ON_HOST},
    {A(STAGED), COLLIE_COLL_ALLGATHER, HOST, collie__allgather_staged, 0},
    {A(DIRECT), COLLIE_COLL_ALLGATHER, HOST, collie__allgather_direct, ATTACH},
    {A(ADAPTIVE), COLLIE_COLL_ALLGATHER, HOST, collie__adaptive, ATTACH | PLACEMENT},
    {A(RING), COLLIE_COLL_ALLGATHER, ANY, collie__allgather_ring, 0},
    {A(STAGED), COLLIE_COLL_REDUCE_SCATTER, HOST, collie__reduce_scatter_staged, 0},
    {A(DIRECT), COLLIE_COLL_REDUCE_SCATTER, HOST, collie__reduce_scatter_direct, ATTACH},
    {A(ADAPTIVE), COLLIE_COLL_REDUCE_SCATTER, HOST, collie__adaptive, ATTACH | PLACEMENT},
    {A(RING), COLLIE_COLL_REDUCE_SCATTER, ANY, collie__reduce_scatter_ring, 0},
    {A(STAGED), COLLIE_COLL_ALLTOALL, HOST, collie__alltoall_staged, 0},
    {A(DIRECT), COLLIE_COLL_ALLTOALL, HOST, collie__alltoall_direct, ATTACH},
    {A(ADAPTIVE), COLLIE_COLL_ALLTOALL, HOST, collie__adaptive, ATTACH | PLACEMENT},
    /* not ON_HOST: its ring crosses between CPUs that share no cache (docs/DESIGN.md) */
    {A(PAIRWISE), COLLIE_COLL_ALLTOALL, ANY, collie__alltoall_pairwise, 0},
    {A(SYNC), COLLIE_COLL_BARRIER, HOST, collie__barrier_sync, 0},
    {A(DISSEMINATION), COLLIE_COLL_BARRIER, ANY, collie__barrier_dissemination, 0},
    {A(NEIGHBOR), COLLIE_COLL_NEIGHBOR_ALLREDUCE, ANY, collie__neighbor_allreduce, 0},
    {A(NEIGHBOR), COLLIE_COLL_NEIGHBOR_ALLGATHER, ANY, collie__neighbor_allreduce, 0},
    {A(HIERARCHICAL), COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE, ANY,
     collie__hierarchical_neighbor_allreduce, 0},
};
#undef A
#undef HOST
#undef ANY
#define N_ALGOS (int)(sizeof algos / sizeof algos[0])

static const char *name_of(const struct collie__algo *a) { return collie__algo_name((int)a->id); }

/* The entry of algorithm number id for coll, or NULL. */
static const struct collie__algo *entry(int coll, int id)
{
    for (int i = 0; i < N_ALGOS; i++)
        if ((int)algos[i].coll == coll && (int)algos[i].id == id)
            return &algos[i];
    return NULL;
}

const struct collie__algo *collie__select_entry(int coll, enum collie__algo_id id)
{
    return entry(coll, (int)id);
}

static const struct collie__algo *find(int coll, const char *name, size_t len)
{
    for (int i = 0; i < N_ALGOS; i++)
        if ((int)algos[i].coll == coll && strlen(name_of(&algos[i])) == len &&
            !strncmp(name_of(&algos[i]), name, len))
            return &algos[i];
    return NULL;
}

static int coll_by_name(const char *name, size_t len)
{
    for (int c = 0; c < COLLIE_COLL_COUNT; c++)
        if (strlen(collie__coll_name((enum collie__coll)c)) == len &&
            !strncmp(collie__coll_name((enum collie__coll)c), name, len))
            return c;
    return -1;
}

static collie_status unknown(collie_comm *comm, const char *spec, const char *what, size_t len)
{
    char known[512] = "";
    size_t used = 0;
    for (int i = 0; i < N_ALGOS && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s:%s", i ? ", " : "",
                                 collie__coll_name(algos[i].coll), name_of(&algos[i]));
    return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                        "COLLIE_ALGO='%s': no %.*s here; known algorithms: %s", spec, (int)len,
                        what, known);
}

/* One item: "NAME" (every collective that has it) or "COLL:NAME". */
static collie_status parse_item(collie_comm *comm, const char *spec, const char *item, size_t len)
{
    const char *colon = memchr(item, ':', len);
    if (!colon) {
        int any = 0;
        for (int c = 0; c < COLLIE_COLL_COUNT; c++) {
            const struct collie__algo *a = find(c, item, len);
            if (a) {
                comm->coll->forced[c] = (uint8_t)a->id;
                any = 1;
            }
        }
        return any ? COLLIE_OK : unknown(comm, spec, item, len);
    }
    int coll = coll_by_name(item, (size_t)(colon - item));
    if (coll < 0)
        return unknown(comm, spec, item, (size_t)(colon - item));
    const struct collie__algo *a = find(coll, colon + 1, len - (size_t)(colon - item) - 1);
    if (!a)
        return unknown(comm, spec, item, len);
    comm->coll->forced[coll] = (uint8_t)a->id;
    return COLLIE_OK;
}

collie_status collie__select_init(collie_comm *comm)
{
    comm->coll = calloc(1, sizeof *comm->coll);
    if (!comm->coll)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the collectives' state");
    struct collie__machine m;
    const char *error = collie__select_rates(&m);
    if (error)
        return collie__fail(comm, COLLIE_ERR_INVALID_ARG, "COLLIE_MACHINE: %s", error);
    return collie__select_force(comm, collie__config_string(COLLIE_CFG_ALGO));
}

void collie__select_close(collie_comm *comm)
{
    if (!comm->coll)
        return;
    free(comm->coll->arms);
    free(comm->coll);
    comm->coll = NULL;
}

collie_status collie__select_force(collie_comm *comm, const char *spec)
{
    for (const char *p = spec; *p;) {
        size_t len = strcspn(p, ",");
        if (len) {
            collie_status st = parse_item(comm, spec, p, len);
            if (st != COLLIE_OK)
                return st;
        }
        p += len + (p[len] == ',');
    }
    return COLLIE_OK;
}

collie_status collie__select_check_forced(collie_comm *comm)
{
    for (int c = 0; c < COLLIE_COLL_COUNT; c++) {
        const struct collie__algo *a = entry(c, comm->coll->forced[c]);
        const char *coll = collie__coll_name((enum collie__coll)c);
        if (a && a->scope == COLLIE_SCOPE_HOST && comm->nhosts > 1)
            return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                                "COLLIE_ALGO forces %s:%s, which works within one host, but this "
                                "job's ranks are on %d hosts",
                                coll, name_of(a), comm->nhosts);
        if (a && (a->flags & ATTACH) && !collie__attach_ok(comm))
            return collie__fail(comm, COLLIE_ERR_UNSUPPORTED,
                                "COLLIE_ALGO forces %s:%s, which reads the other ranks' buffers "
                                "(cross-memory attach), but COLLIE_CMA=0 or the kernel refused "
                                "process_vm_readv between this host's ranks (Yama's "
                                "ptrace_scope, a seccomp profile; COLLIE_DEBUG=INFO says which)",
                                coll, name_of(a));
    }
    return COLLIE_OK;
}

/*
 * The window algorithm of the select table that adaptive stands for: the
 * one whose place it may take (what it runs near is cost.h's
 * collie__window_algo: for an alltoall, pairwise where that is cheaper).
 */
static enum collie__algo_id near_of(enum collie__coll coll)
{
    switch (coll) {
    case COLLIE_COLL_ALLREDUCE: return COLLIE__ALGO_TWOSHOT;
    case COLLIE_COLL_REDUCE: return COLLIE__ALGO_ONESHOT;
    default: return COLLIE__ALGO_STAGED;
    }
}

/*
 * The model's choice `best`, made on the rates of CPUs that share a cache,
 * weighed against what the rates cannot know: the placement a virtual
 * machine's host may switch to at any time, where the window algorithms
 * slow down (cost.h's `far`) and direct does not, and the states between,
 * where either may win by 1.2-1.6x against the model.
 *
 * First the choice on the rates alone: direct where `best` would take over
 * FAR_RISK times direct's time far apart, else `best`.  Where `best` is the
 * window adaptive stands for or direct, adaptive instead (the window or
 * direct as its probe finds the placement, and near, as it times them:
 * arms.c), where it adds under PROBE_SHARE to the choice on the rates
 * alone, in either of two cases:
 *   - it hedges: near, it beats direct, and far, where it runs direct, it
 *     beats `best`;
 *   - it learns: the window and direct are within LEARN_SPAN of each other
 *     here.  Measured at 2 ranks in the middle state, the window beat
 *     direct by 1.2-1.6x where the rates put it up to 1.4x behind
 *     (allreduce, reduce_scatter, a broadcast's 16 MiB), and only tied
 *     where they put it 1.8x behind (alltoall).
 * The rates put adaptive's own cost at three syncs, 0.84 us on 2 ranks;
 * measured, it took 0.25-0.9 us more than the window it ran at 16 KiB
 * (while every call probed, ten syncs, 1.3-2.9 us).
 */
#define FAR_RISK 2.5
#define LEARN_SPAN 1.6
#define PROBE_SHARE 0.3
static const struct collie__algo *placed(const struct collie__machine *m,
                                         const struct collie__algo *best, size_t bytes)
{
    const struct collie__algo *adaptive = entry(best->coll, COLLIE__ALGO_ADAPTIVE);
    const struct collie__algo *direct = entry(best->coll, COLLIE__ALGO_DIRECT);
    enum collie__coll coll = best->coll;
    if (!adaptive || !direct || !m->attach || m->hosts > 1 || best->scope != COLLIE_SCOPE_HOST)
        return best;
    struct collie__machine far = *m;
    far.far = 1;
    double d = collie__cost(m, coll, COLLIE__ALGO_DIRECT, bytes, 1);
    double best_far = collie__cost(&far, coll, best->id, bytes, 1);
    const struct collie__algo *fixed = best != direct && best_far > FAR_RISK * d ? direct : best;
    if (best != direct && best->id != near_of(coll))
        return fixed;
    double w = collie__cost_window(m, coll, bytes);
    double learnt = collie__cost(m, coll, COLLIE__ALGO_ADAPTIVE, bytes, 1);
    int affordable = learnt <= (1 + PROBE_SHARE) * collie__cost(m, coll, fixed->id, bytes, 1);
    int hedges = best != direct && learnt < d && learnt - w + d < best_far;
    int learns = (w < d ? d / w : w / d) <= LEARN_SPAN;
    return affordable && (hedges || learns) ? adaptive : fixed;
}

const struct collie__algo *collie__select_on(const struct collie__machine *m, int coll,
                                             size_t bytes)
{
    const struct collie__algo *best = NULL;
    double best_cost = 0;
    enum collie__algo_scope scope = m->hosts > 1 ? COLLIE_SCOPE_ANY : COLLIE_SCOPE_HOST;
    const int one_host = m->hosts == 1;
    for (int pass = 0; pass < 2 && !best; pass++, scope = COLLIE_SCOPE_ANY) {
        for (int i = 0; i < N_ALGOS; i++) {
            const unsigned flags = algos[i].flags;
            int offered = algos[i].scope == scope || (one_host && (flags & ON_HOST));
            if ((int)algos[i].coll != coll || !offered || (flags & PLACEMENT) ||
                ((flags & FORCED_ACROSS) && m->hosts > 1) || ((flags & ATTACH) && !m->attach))
                continue;
            double c = collie__cost(m, (enum collie__coll)coll, algos[i].id, bytes, 1);
            if (!best || c < best_cost) {
                best = &algos[i];
                best_cost = c;
            }
        }
    }
    return best ? placed(m, best, bytes) : NULL;
}

const struct collie__algo *collie__select_named(int coll, const char *name)
{
    return find(coll, name, strlen(name));
}

/* comm's choice for coll over `bytes` on m, its machine: COLLIE_ALGO's, else the model's. */
static const struct collie__algo *choose(const collie_comm *comm, const struct collie__machine *m,
                                         int coll, size_t bytes)
{
    return comm->coll->forced[coll] ? entry(coll, comm->coll->forced[coll])
                                    : collie__select_on(m, coll, bytes);
}

const struct collie__algo *collie__select_peek(const collie_comm *comm, const struct collie__op *op)
{
    /* The hot path of every call: the machine is a copy of the rates and a few fields. */
    struct collie__machine m;
    if (!comm->coll->forced[op->desc.coll])
        collie__select_machine(comm, &m);
    return choose(comm, &m, op->desc.coll, op->count * op->elem_size);
}

const struct collie__algo *collie__select(collie_comm *comm, const struct collie__op *op)
{
    size_t bytes = op->count * op->elem_size;
    struct collie__choice *last = &comm->coll->last_choice[op->desc.coll];
    if (last->slot && last->bytes == bytes)
        return &algos[last->slot - 1];
    const struct collie__algo *best = collie__select_peek(comm, op);
    last->bytes = bytes;
    last->slot = (uint16_t)(best - algos + 1);
    uint32_t bit = 1u << best->id;
    if (!(comm->coll->algo_logged[op->desc.coll] & bit)) {
        comm->coll->algo_logged[op->desc.coll] |= bit;
        COLLIE_INFO("coll", "%s of %zu bytes on %d ranks: %s (%s)",
                    collie__coll_name(op->desc.coll), op->count * op->elem_size, comm->size,
                    name_of(best),
                    comm->coll->forced[op->desc.coll] ? "forced by COLLIE_ALGO" : "cost model");
    }
    return best;
}

void collie__algo_print(FILE *out)
{
    for (int c = 0; c < COLLIE_COLL_COUNT; c++) {
        int printed = 0;
        for (int i = 0; i < N_ALGOS; i++) {
            if ((int)algos[i].coll != c)
                continue;
            if (printed++)
                fprintf(out, ", %s", name_of(&algos[i]));
            else
                fprintf(out, "  %-15s %s", collie__coll_name((enum collie__coll)c),
                        name_of(&algos[i]));
        }
        if (printed)
            fputc('\n', out);
    }
}

int collie__latency_bound(const collie_comm *comm, const struct collie__op *op)
{
    struct collie__machine m;
    collie__select_machine(comm, &m);
    int coll = op->desc.coll;
    size_t bytes = op->count * op->elem_size, one = op->elem_size;
    return collie__cost(&m, coll, choose(comm, &m, coll, bytes)->id, bytes, 1) <
           2 * collie__cost(&m, coll, choose(comm, &m, coll, one)->id, one, 1);
}
