/*
 * select.c - which algorithm runs: the one COLLIE_ALGO names, else the one
 * the cost model predicts fastest.  The model is NCCL's shape,
 *     time = latencies * alpha + bytes per rank (or per link) / beta,
 * with one alpha and beta per transport.  Within a host, alpha is the cost of
 * one all-rank sync (much higher once ranks outnumber cores and every sync
 * may need a context switch) and beta the bandwidth of one core's copies;
 * between hosts, they are the network's (COLLIE_NET_LATENCY_US,
 * COLLIE_NET_BANDWIDTH).  Across hosts a flat algorithm waits for its slowest
 * edge at every step, so its steps are costed at the network's rates.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/log.h"
#include "../transport/shm.h"
#include "algo.h"

#define ALPHA_S 0.5e-6     /* one sync, ranks <= cores */
#define ALPHA_OVER_S 10e-6 /* one sync, oversubscribed */
#define BETA_BPS 8e9       /* bytes per second one core copies or reduces */

/* From what every rank of the job knows alike, so all choose the same. */
static double alpha(const collie_comm *comm)
{
    return comm->hosts.oversubscribed ? ALPHA_OVER_S : ALPHA_S;
}

static double net_alpha(void)
{
    return (double)collie__config_int(COLLIE_CFG_NET_LATENCY_US) * 1e-6;
}
static double net_beta(void) { return (double)collie__config_int(COLLIE_CFG_NET_BANDWIDTH); }

static double log2_steps(int n)
{
    int steps = 0;
    while ((1 << steps) < n)
        steps++;
    return steps;
}

static double rounds(const collie_comm *comm, const struct collie__op *op)
{
    size_t per_round = collie__win_bytes(comm) / op->elem_size;
    return (double)((op->count + per_round - 1) / per_round);
}

static double bytes(const struct collie__op *op) { return (double)(op->count * op->elem_size); }

/* Copy in (read + write), then read all n inputs and write the result. */
static double cost_oneshot(const collie_comm *comm, const struct collie__op *op)
{
    return rounds(comm, op) * alpha(comm) + (3.0 + comm->local_size) * bytes(op) / BETA_BPS;
}

/*
 * Copy in, reduce one slice (n reads of S/n, one write of S/n), copy every
 * slice out: (4 + 1/n) S.  Measured at 2 ranks, this beats oneshot's 5 S from
 * about 64 KiB (docs/PERFORMANCE.md): each rank does half the arithmetic.
 */
static double cost_twoshot(const collie_comm *comm, const struct collie__op *op)
{
    return 2 * rounds(comm, op) * alpha(comm) +
           (4.0 + 1.0 / comm->local_size) * bytes(op) / BETA_BPS;
}

/*
 * The flat algorithms' bytes are counted where they queue: one host's link.
 * With L ranks per host (placed in blocks, as collie run and mpirun place
 * them), the exchanges at distances >= L all cross it at once.
 */
static double fold_steps(const collie_comm *comm)
{
    return (comm->size & (comm->size - 1)) ? 2 : 0;
}

/* Flat ring: 2 (n-1) steps; one flow per host boundary carries 2 (n-1)/n of the data. */
static double cost_ring(const collie_comm *comm, const struct collie__op *op)
{
    double n = comm->size;
    return 2 * (n - 1) * net_alpha() + 2 * (n - 1) / n * bytes(op) / net_beta();
}

/* Recursive doubling: log2(n) exchanges of everything; log2(H) of them cross the link L-fold. */
static double cost_rd(const collie_comm *comm, const struct collie__op *op)
{
    double steps = log2_steps(comm->size) + fold_steps(comm);
    double link = comm->hosts.max_local * (log2_steps(comm->nhosts) + fold_steps(comm));
    return steps * net_alpha() + link * bytes(op) / net_beta();
}

/*
 * Rabenseifner: 2 log2(n) steps; the halving and doubling at distances >= L
 * cross the link.  Its first exchanges move half the data at once, which a
 * link's queue absorbs worse than the ring's n-th parts: measured on 4 hosts
 * with 1 Gbit/s links at 16 MiB, 0.103 GB/s against the ring's 0.113.  The
 * 10% below makes it the middle sizes' algorithm, the ring the large ones'.
 */
#define RAB_LINK_PENALTY 1.1
static double cost_rab(const collie_comm *comm, const struct collie__op *op)
{
    double h = comm->nhosts;
    double steps = 2 * log2_steps(comm->size) + fold_steps(comm);
    double link = comm->hosts.max_local * (2 * (h - 1) / h + fold_steps(comm));
    return steps * net_alpha() + RAB_LINK_PENALTY * link * bytes(op) / net_beta();
}

/*
 * Local twoshot around a cross-host allreduce of H hosts: each link carries
 * 2 (H-1)/H of the data, and every rank copies its chunk in and the result
 * out (cache-resident: the reduction itself hides under the network).
 */
static double cost_hierarchical(const collie_comm *comm, const struct collie__op *op)
{
    double h = comm->nhosts, cross_steps = 2 * (h - 1);
    if (bytes(op) / comm->hosts.max_local < 64 * 1024)
        cross_steps = log2_steps(comm->nhosts);
    return rounds(comm, op) * (2 * alpha(comm) + cross_steps * net_alpha()) +
           2 * (h - 1) / h * bytes(op) / net_beta() + 2 * bytes(op) / BETA_BPS;
}

/*
 * Run only when COLLIE_ALGO names it.  On one host with more ranks than
 * cores a message tree beats the window 5-8x for small messages (no call
 * makes every rank meet: docs/PERFORMANCE.md), but for the same reason it
 * cannot make every rank fail with MISMATCH when the ranks' calls differ:
 * a leaf that sent and left never learns.  The window can.
 */
static double cost_forced_only(const collie_comm *comm, const struct collie__op *op)
{
    (void)comm, (void)op;
    return HUGE_VAL;
}

static collie_status allreduce_oneshot(collie_comm *c, const struct collie__op *op)
{
    return collie__oneshot(c, op, -1);
}
static collie_status allreduce_twoshot(collie_comm *c, const struct collie__op *op)
{
    return collie__twoshot(c, op, -1);
}
static collie_status reduce_oneshot(collie_comm *c, const struct collie__op *op)
{
    return collie__oneshot(c, op, op->root);
}
static collie_status reduce_twoshot(collie_comm *c, const struct collie__op *op)
{
    return collie__twoshot(c, op, op->root);
}

/* The order is only that of `collie info`: what identifies an entry is (coll, id). */
#define HOST COLLIE_SCOPE_HOST
#define ANY COLLIE_SCOPE_ANY
#define A(id) COLLIE__ALGO_##id
static const struct collie__algo algos[] = {
    {A(ONESHOT), COLLIE_COLL_ALLREDUCE, HOST, allreduce_oneshot, cost_oneshot},
    {A(TWOSHOT), COLLIE_COLL_ALLREDUCE, HOST, allreduce_twoshot, cost_twoshot},
    {A(RING), COLLIE_COLL_ALLREDUCE, ANY, collie__allreduce_ring, cost_ring},
    {A(RD), COLLIE_COLL_ALLREDUCE, ANY, collie__allreduce_rd, cost_rd},
    {A(RABENSEIFNER), COLLIE_COLL_ALLREDUCE, ANY, collie__allreduce_rab, cost_rab},
    {A(HIERARCHICAL), COLLIE_COLL_ALLREDUCE, ANY, collie__allreduce_hierarchical,
     cost_hierarchical},
    {A(ONESHOT), COLLIE_COLL_REDUCE, HOST, reduce_oneshot, cost_oneshot},
    {A(TWOSHOT), COLLIE_COLL_REDUCE, HOST, reduce_twoshot, cost_twoshot},
    {A(RING), COLLIE_COLL_REDUCE, ANY, collie__reduce_ring, cost_ring},
    {A(RD), COLLIE_COLL_REDUCE, ANY, collie__reduce_rd, cost_rd},
    {A(TREE), COLLIE_COLL_REDUCE, ANY, collie__reduce_tree, cost_forced_only},
    {A(STAGED), COLLIE_COLL_BROADCAST, HOST, collie__broadcast_staged, NULL},
    {A(TREE), COLLIE_COLL_BROADCAST, ANY, collie__broadcast_tree, NULL},
    {A(STAGED), COLLIE_COLL_ALLGATHER, HOST, collie__allgather_staged, NULL},
    {A(RING), COLLIE_COLL_ALLGATHER, ANY, collie__allgather_ring, NULL},
    {A(STAGED), COLLIE_COLL_REDUCE_SCATTER, HOST, collie__reduce_scatter_staged, NULL},
    {A(RING), COLLIE_COLL_REDUCE_SCATTER, ANY, collie__reduce_scatter_ring, NULL},
    {A(STAGED), COLLIE_COLL_ALLTOALL, HOST, collie__alltoall_staged, NULL},
    {A(PAIRWISE), COLLIE_COLL_ALLTOALL, ANY, collie__alltoall_pairwise, NULL},
    {A(SYNC), COLLIE_COLL_BARRIER, HOST, collie__barrier_sync, NULL},
    {A(DISSEMINATION), COLLIE_COLL_BARRIER, ANY, collie__barrier_dissemination, NULL},
    {A(NEIGHBOR), COLLIE_COLL_NEIGHBOR_ALLREDUCE, ANY, collie__neighbor_allreduce, NULL},
    {A(NEIGHBOR), COLLIE_COLL_NEIGHBOR_ALLGATHER, ANY, collie__neighbor_allreduce, NULL},
    {A(HIERARCHICAL), COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE, ANY,
     collie__hierarchical_neighbor_allreduce, NULL},
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
                comm->forced[c] = (uint8_t)a->id;
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
    comm->forced[coll] = (uint8_t)a->id;
    return COLLIE_OK;
}

collie_status collie__select_init(collie_comm *comm)
{
    const char *spec = collie__config_string(COLLIE_CFG_ALGO);
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

collie_status collie__select_check_hosts(collie_comm *comm)
{
    for (int c = 0; c < COLLIE_COLL_COUNT; c++) {
        const struct collie__algo *a = entry(c, comm->forced[c]);
        if (a && a->scope == COLLIE_SCOPE_HOST && comm->nhosts > 1)
            return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                                "COLLIE_ALGO forces %s:%s, which works within one host, but this "
                                "job's ranks are on %d hosts",
                                collie__coll_name((enum collie__coll)c), name_of(a), comm->nhosts);
    }
    return COLLIE_OK;
}

const struct collie__algo *collie__select_peek(const collie_comm *comm, const struct collie__op *op)
{
    /* The hot path of every call: look the table up only when COLLIE_ALGO forced something. */
    const struct collie__algo *best =
        comm->forced[op->desc.coll] ? entry(op->desc.coll, comm->forced[op->desc.coll]) : NULL;
    double best_cost = 0;
    enum collie__algo_scope scope = comm->nhosts > 1 ? COLLIE_SCOPE_ANY : COLLIE_SCOPE_HOST;
    for (int pass = 0; pass < 2 && !best; pass++, scope = COLLIE_SCOPE_ANY) {
        for (int i = 0; !comm->forced[op->desc.coll] && i < N_ALGOS; i++) {
            if ((int)algos[i].coll != op->desc.coll || algos[i].scope != scope)
                continue;
            double c = algos[i].cost ? algos[i].cost(comm, op) : 0;
            if (!best || c < best_cost) {
                best = &algos[i];
                best_cost = c;
            }
        }
    }
    return best;
}

const struct collie__algo *collie__select(collie_comm *comm, const struct collie__op *op)
{
    const struct collie__algo *best = collie__select_peek(comm, op);
    uint32_t bit = 1u << best->id;
    if (!(comm->algo_logged[op->desc.coll] & bit)) {
        comm->algo_logged[op->desc.coll] |= bit;
        COLLIE_INFO("coll", "%s of %zu bytes on %d ranks: %s (%s)",
                    collie__coll_name(op->desc.coll), op->count * op->elem_size, comm->size,
                    name_of(best),
                    comm->forced[op->desc.coll] ? "forced by COLLIE_ALGO" : "cost model");
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
    struct collie__op one = *op;
    one.count = 1;
    const struct collie__algo *a = collie__select_peek(comm, op),
                              *b = collie__select_peek(comm, &one);
    if (!a || !b || !a->cost || !b->cost)
        return 0;
    return a->cost(comm, op) < 2 * b->cost(comm, &one);
}
