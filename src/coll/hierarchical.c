/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hierarchical.c - allreduce across hosts that keeps the slow links busy and
 * the fast ones local: per chunk of the input (one staging slot),
 *
 *   1. every rank copies its chunk into its slot (shared memory), sync;
 *   2. each local rank reduces its slices of the chunk over the host's slots,
 *      then allreduces those slices with the ranks that own the same slices
 *      on the other hosts (TCP; ring, or recursive doubling when small) --
 *      all local ranks at once, each on its own connections;
 *   3. sync, and every rank copies every slice out.
 *
 * Each host sends 2 (H-1)/H of the data over the network, where a flat ring
 * of n ranks sends 2 (n-1)/n through each host's link and pays 2 (n-1)
 * network latencies.  Hosts may hold different numbers of ranks: the chunk
 * splits into S slices, S the most ranks on any host, and slice s belongs to
 * local rank s mod (ranks on that host) -- the same slice boundaries on every
 * host, so every cross-host group agrees on every length.
 */
#include "../reduce/reduce.h"
#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"
#include "group.h"

/* The cross-host step of allreduce: the owners of slice s allreduce it. */
static collie_status across_hosts(collie_comm *comm, const struct collie__op *op, int s,
                                  unsigned char *buf, size_t count, void *members_)
{
    int *members = members_;
    for (int h = 0; h < comm->nhosts; h++)
        members[h] = collie__slice_owner(comm, h, s);
    struct collie__group g = {comm->nhosts, comm->hosts.host_of[comm->rank], members};
    if (count * op->elem_size < COLLIE__HIER_RD_MAX_BYTES)
        return collie__rd_allreduce(comm, &g, buf, buf, count, op->dtype, op->op, comm->size);
    return collie__ring_allreduce(comm, &g, buf, buf, count, op->dtype, op->op, comm->size);
}

collie_status collie__hierarchical_staged(collie_comm *comm, const struct collie__op *op,
                                          collie_op local_op, collie__slice_fn cross, void *ctx)
{
    const int n = comm->local_size, me = comm->local_rank, slices = comm->hosts.max_local;
    const size_t es = op->elem_size, chunk = collie__win_bytes(comm) / es;
    const unsigned char *send = op->sendbuf;
    unsigned char *recv = op->recvbuf;
    const void **srcs = comm->scratch_srcs;
    for (size_t off = 0; off < op->count; off += chunk) {
        size_t m = op->count - off < chunk ? op->count - off : chunk;
        unsigned parity = collie__win_round(comm, m * es);
        unsigned char *mine = collie__win_slot(comm, me, parity);
        collie__copy(mine, send + off * es, m * es);
        collie_status st = collie__win_sync(comm);
        size_t owned = 0; /* elements of the slices this rank reduces */
        for (int s = me; s < slices && st == COLLIE_OK; s += n) {
            size_t lo = collie__seg(m, s, slices), hi = collie__seg(m, s + 1, slices);
            for (int r = 0; r < n; r++)
                srcs[r] = (const unsigned char *)collie__win_slot(comm, r, parity) + lo * es;
            collie__reduce(mine + lo * es, srcs, n, hi - lo, op->dtype, local_op, n, 0);
            st = cross(comm, op, s, mine + lo * es, hi - lo, ctx);
            owned += hi - lo;
        }
        if (st == COLLIE_OK) { /* the host's peers read the other slices of our input, and
                                  all of them our results */
            collie__count_sent(comm, COLLIE_LANE_COLL, (m - owned + (size_t)(n - 1) * owned) * es);
            st = collie__win_sync(comm);
        }
        if (st != COLLIE_OK)
            return st;
        for (int s = 0; s < slices; s++) {
            size_t lo = collie__seg(m, s, slices), hi = collie__seg(m, s + 1, slices);
            const unsigned char *slot = collie__win_slot(comm, s % n, parity);
            collie__copy_out(op, recv + (off + lo) * es, slot + lo * es, (hi - lo) * es);
        }
    }
    return COLLIE_OK;
}

static collie_status allreduce_hierarchical(collie_comm *comm, const struct collie__op *op)
{
    int *members = collie__scratch(comm, COLLIE_SCRATCH_WORK, sizeof(int) * (size_t)comm->nhosts);
    if (!members)
        return comm->failed;
    /* AVG: summed within the host, divided by the communicator's size across hosts */
    return collie__hierarchical_staged(comm, op, op->op == COLLIE_AVG ? COLLIE_SUM : op->op,
                                       across_hosts, members);
}

/*
 * Hierarchical (hierarchical.c), per slot-sized chunk: copy in, sync, each
 * local rank reduces its 1/L slice and allreduces it with its peers on the
 * other hosts (recursive doubling below 64 KiB a slice, else the ring), sync,
 * copy out.  The steps run one after another; the L slices share the link.
 */
static double allreduce_hierarchical_cost(machine *m, double s, int degree)
{
    (void)degree;
    double h = m->hosts, r = collie__cost_rounds(m, s), chunk = s / r,
           slice = chunk / m->ranks_per_host;
    double steps = 2 * (h - 1), link = 2 * (h - 1) / h;
    if (slice < COLLIE__HIER_RD_MAX_BYTES) {
        steps = collie__cost_log2_steps(m->hosts) + collie__cost_fold_steps(m->hosts);
        link = steps;
    }
    return r * 2 * collie__cost_sync(m) + collie__cost_over_links(m, r * steps, link * s) +
           collie__cost_move(m, collie__cost_reduction_beta(m, s), 3 * s,
                             (2 + 1.0 / m->ranks_per_host) * s);
}

const struct collie__algo collie__algo_allreduce_hierarchical = {
    .name = "hierarchical",
    .wire = 6,
    .coll = COLLIE_COLL_ALLREDUCE,
    .scope = COLLIE_SCOPE_ANY,
    .run = allreduce_hierarchical,
    .cost = allreduce_hierarchical_cost,
};
