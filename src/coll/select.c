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
#include "cost_terms.h"

/* The rates, read once per process: the defaults, then COLLIE_MACHINE's file over them. */
static struct collie__machine rates;
static char rates_error[512];
static int rates_from_file;
static pthread_once_t rates_once = PTHREAD_ONCE_INIT;

static void load_rates(void)
{
    collie__machine_default_rates(&rates);
    const char *path = collie__config_string(COLLIE_CFG_MACHINE);
    if (*path && collie__machine_read(&rates, path, rates_error, sizeof rates_error))
        collie__machine_default_rates(&rates);
    rates_from_file = *path && !rates_error[0];
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
    /*
     * The kernel's single copy, its call and its rate in cache, measured
     * when the segment opened (shm.c), over the built-in values: the call
     * took 0.37 us on one Xeon and 1.1-1.75 us on an EPYC, and the copy
     * 20-31 GB/s on the Xeon where the built-in rate, the EPYC's, is 11:
     * spreads that move `direct`'s crossovers by 2-4x.  A description
     * (COLLIE_MACHINE) says its own.
     */
    double call = collie__attach_call_s(comm), beta = collie__attach_beta(comm);
    pthread_once(&rates_once, load_rates);
    if (call > 0 && !rates_from_file)
        m->host_attach_call = call;
    if (beta > 0 && !rates_from_file)
        m->host_attach_beta = beta;
}

void collie__select_machine(const collie_comm *comm, struct collie__machine *m)
{
    collie__select_rates(m);
    collie__select_place(comm, m);
    collie__select_links(comm, m);
}

static collie_status unknown(collie_comm *comm, const char *spec, const char *what, size_t len)
{
    char known[512] = "";
    size_t used = 0;
    for (int i = 0; i < collie__algo_count && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s:%s", i ? ", " : "",
                                 collie__coll_name(collie__algos[i]->coll), collie__algos[i]->name);
    return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                        "COLLIE_ALGO='%s': no %.*s here; known algorithms: %s", spec, (int)len,
                        what, known);
}

static int coll_by_name(const char *name, size_t len)
{
    for (int c = 0; c < COLLIE_COLL_COUNT; c++)
        if (strlen(collie__coll_name((enum collie__coll)c)) == len &&
            !strncmp(collie__coll_name((enum collie__coll)c), name, len))
            return c;
    return -1;
}

/* One item: "NAME" (every collective that has it) or "COLL:NAME". */
static collie_status parse_item(collie_comm *comm, const char *spec, const char *item, size_t len)
{
    const char *colon = memchr(item, ':', len);
    if (!colon) {
        int any = 0;
        for (int c = 0; c < COLLIE_COLL_COUNT; c++) {
            const struct collie__algo *a = collie__algo_find(c, item, len);
            if (a) {
                comm->coll->forced[c] = a->wire;
                any = 1;
            }
        }
        return any ? COLLIE_OK : unknown(comm, spec, item, len);
    }
    int coll = coll_by_name(item, (size_t)(colon - item));
    if (coll < 0)
        return unknown(comm, spec, item, (size_t)(colon - item));
    const struct collie__algo *a =
        collie__algo_find(coll, colon + 1, len - (size_t)(colon - item) - 1);
    if (!a)
        return unknown(comm, spec, item, len);
    comm->coll->forced[coll] = a->wire;
    return COLLIE_OK;
}

collie_status collie__select_init(collie_comm *comm)
{
    const char *registry = collie__algo_registry_check();
    if (registry)
        return collie__fail(comm, COLLIE_ERR_INTERNAL, "the algorithms' registry: %s", registry);
    collie__algo_set_namer(collie__algo_wire_name);
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
        const struct collie__algo *a = collie__algo_of_wire(c, comm->coll->forced[c]);
        const char *coll = collie__coll_name((enum collie__coll)c);
        if (a && a->scope == COLLIE_SCOPE_HOST && comm->nhosts > 1)
            return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                                "COLLIE_ALGO forces %s:%s, which works within one host, but this "
                                "job's ranks are on %d hosts",
                                coll, a->name, comm->nhosts);
        if (a && (a->flags & COLLIE__ALGO_ATTACH) && !collie__attach_ok(comm))
            return collie__fail(comm, COLLIE_ERR_UNSUPPORTED,
                                "COLLIE_ALGO forces %s:%s, which reads the other ranks' buffers "
                                "(cross-memory attach), but COLLIE_CMA=0 or the kernel refused "
                                "process_vm_readv between this host's ranks (Yama's "
                                "ptrace_scope, a seccomp profile; COLLIE_DEBUG=INFO says which)",
                                coll, a->name);
    }
    return COLLIE_OK;
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
 * window adaptive stands for, the one it runs at this size
 * (collie__adaptive_window) or direct, adaptive instead (the window or
 * direct as its probe finds the placement, and near, as it times them:
 * arms.c), where it adds under PROBE_SHARE to the choice on the rates
 * alone, in either of two cases:
 *   - it hedges: near, it beats direct, and far, where it runs direct or
 *     the faster it has timed, it beats `best`;
 *   - it learns: the window and direct are within LEARN_SPAN of each other
 *     here.  Measured at 2 ranks in the middle state, the window beat
 *     direct by 1.2-1.6x where the rates put it up to 1.4x behind
 *     (allreduce, reduce_scatter, a broadcast's 16 MiB), and only tied
 *     where they put it 1.8x behind (alltoall);
 *   - it streams: the window stages (COLLIE__ALGO_STAGES) and more than 2
 *     ranks share the host, where far apart adaptive streams its slots,
 *     which no fixed choice does (algo.h's collie__stage()).  The only
 *     case on a host with more ranks than cores, where the model does not
 *     price direct against the window (collie__cost_attach_offered()).
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
    enum collie__coll coll = best->coll;
    const struct collie__algo *adaptive = collie__adaptive_of(coll);
    const struct collie__algo *direct = collie__adaptive_direct(coll);
    if (!adaptive || !direct || !m->attach || m->hosts > 1 || best->scope != COLLIE_SCOPE_HOST)
        return best;
    struct collie__machine far = *m;
    far.far = 1;
    double s = (double)bytes, d = direct->cost(m, s, 1), best_far = best->cost(&far, s, 1);
    const struct collie__algo *fixed = best != direct && best_far > FAR_RISK * d ? direct : best;
    if (best != direct && best != collie__adaptive_near(coll) &&
        best != collie__adaptive_window(m, coll, bytes))
        return fixed;
    double w = collie__adaptive_window_cost(m, coll, bytes);
    double learnt = adaptive->cost(m, s, 1);
    int affordable = learnt <= (1 + PROBE_SHARE) * fixed->cost(m, s, 1);
    int hedges = best != direct && learnt < d && learnt - w + d < best_far;
    int learns = (w < d ? d / w : w / d) <= LEARN_SPAN;
    const struct collie__algo *window = collie__adaptive_window(m, coll, bytes);
    int streams = m->ranks_per_host > 2 && best != direct && (window->flags & COLLIE__ALGO_STAGES);
    int weighed = !collie__cost_crowded(m) && (hedges || learns);
    return affordable && (weighed || streams) ? adaptive : fixed;
}

const struct collie__algo *collie__select_on(const struct collie__machine *m, int coll,
                                             size_t bytes)
{
    const struct collie__algo *best = NULL;
    double best_cost = 0;
    enum collie__algo_scope scope = m->hosts > 1 ? COLLIE_SCOPE_ANY : COLLIE_SCOPE_HOST;
    const int one_host = m->hosts == 1;
    for (int pass = 0; pass < 2 && !best; pass++, scope = COLLIE_SCOPE_ANY) {
        for (int i = 0; i < collie__algo_count; i++) {
            const struct collie__algo *a = collie__algos[i];
            int offered = a->scope == scope || (one_host && (a->flags & COLLIE__ALGO_ON_HOST));
            if ((int)a->coll != coll || !offered || (a->flags & COLLIE__ALGO_PLACEMENT) ||
                ((a->flags & COLLIE__ALGO_FORCED_ACROSS) && m->hosts > 1) ||
                ((a->flags & COLLIE__ALGO_ATTACH) && !m->attach))
                continue;
            double c = a->cost(m, (double)bytes, 1);
            if (!best || c < best_cost) {
                best = a;
                best_cost = c;
            }
        }
    }
    return best ? placed(m, best, bytes) : NULL;
}

/* comm's choice for coll over `bytes` on m, its machine: COLLIE_ALGO's, else the model's. */
static const struct collie__algo *choose(const collie_comm *comm, const struct collie__machine *m,
                                         int coll, size_t bytes)
{
    return comm->coll->forced[coll] ? collie__algo_of_wire(coll, comm->coll->forced[coll])
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
    if (last->algo && last->bytes == bytes)
        return last->algo;
    const struct collie__algo *best = collie__select_peek(comm, op);
    last->bytes = bytes;
    last->algo = best;
    uint32_t bit = 1u << best->wire;
    if (!(comm->coll->algo_logged[op->desc.coll] & bit)) {
        comm->coll->algo_logged[op->desc.coll] |= bit;
        COLLIE_INFO("coll", "%s of %zu bytes on %d ranks: %s (%s)",
                    collie__coll_name(op->desc.coll), op->count * op->elem_size, comm->size,
                    best->name,
                    comm->coll->forced[op->desc.coll] ? "forced by COLLIE_ALGO" : "cost model");
    }
    return best;
}

void collie__algo_print(FILE *out)
{
    for (int c = 0; c < COLLIE_COLL_COUNT; c++) {
        int printed = 0;
        for (int i = 0; i < collie__algo_count; i++) {
            const struct collie__algo *a = collie__algos[i];
            if ((int)a->coll != c)
                continue;
            if (printed++)
                fprintf(out, ", %s", a->name);
            else
                fprintf(out, "  %-15s %s", collie__coll_name((enum collie__coll)c), a->name);
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
    return choose(comm, &m, coll, bytes)->cost(&m, (double)bytes, 1) <
           2 * choose(comm, &m, coll, one)->cost(&m, (double)one, 1);
}
