/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hierarchical_neighbor.c - decentralized averaging between hosts, each
 * host's ranks acting as one node of a topology over the hosts (op->nbr,
 * in host numbers): every rank of host h ends with
 *     W[h][h] avg_h + sum over in-neighbour hosts g of W[h][g] avg_g,
 * avg_h the mean of host h's inputs.  Per chunk of the input (one staging
 * slot), through hierarchical allreduce's staging (collie__hierarchical_staged):
 *
 *   1. every rank copies its chunk into its slot (shared memory), sync;
 *   2. each local rank averages its slices of the chunk over the host's
 *      slots, then runs one neighbour step on them with the ranks that own
 *      the same slices on the neighbour hosts (TCP) -- all local ranks at
 *      once, each on its own connections;
 *   3. sync, and every rank copies every slice out.
 *
 * A host sends out-degree x the data over its link, spread over all its
 * ranks, where BlueFog sends it through one leader and then broadcasts
 * degree x the data inside the host.  Hosts may hold different numbers of
 * ranks: slices are cut by the most ranks on any host, and slice s belongs
 * to local rank s mod (ranks on that host), so every pair of owners agrees
 * on every length.
 */
#include "algo.h"
#include "cost_terms.h"

/* One neighbour step among the owners of slice s on the hosts, in place on buf. */
static collie_status across_hosts(collie_comm *comm, const struct collie__op *op, int s,
                                  unsigned char *buf, size_t count, void *ranks_)
{
    int *ranks = ranks_;
    const struct collie__nbr_plan *hosts = op->nbr;
    struct collie__nbr_plan p = *hosts;
    for (int k = 0; k < p.nrecv; k++)
        ranks[k] = collie__slice_owner(comm, hosts->recv[k], s);
    for (int k = 0; k < p.nsend; k++)
        ranks[p.nrecv + k] = collie__slice_owner(comm, hosts->send[k], s);
    p.recv = ranks;
    p.send = ranks + p.nrecv;
    struct collie__op step = *op;
    step.nbr = &p;
    step.sendbuf = step.recvbuf = buf;
    step.count = count;
    return collie__neighbor_allreduce(comm, &step);
}

static collie_status hierarchical_neighbor_allreduce(collie_comm *comm, const struct collie__op *op)
{
    int *ranks = collie__scratch(comm, COLLIE_SCRATCH_WORK,
                                 sizeof(int) * (size_t)(op->nbr->nrecv + op->nbr->nsend + 1));
    if (!ranks)
        return comm->failed;
    /* each host's mean is its node's value */
    return collie__hierarchical_staged(comm, op, COLLIE_AVG, across_hosts, ranks);
}

/*
 * An allreduce in each host (its window's twoshot), then the neighbour step
 * between hosts on a 1/L slice a rank.
 */
static double hierarchical_neighbor_cost(machine *m, double s, int degree)
{
    const struct collie__algo *twoshot = collie__algo_find(COLLIE_COLL_ALLREDUCE, "twoshot", 7);
    const struct collie__algo *neighbor =
        collie__algo_find(COLLIE_COLL_NEIGHBOR_ALLREDUCE, "neighbor", 8);
    return twoshot->cost(m, s, 1) + neighbor->cost(m, s / m->ranks_per_host, degree);
}

const struct collie__algo collie__algo_hierarchical_neighbor_allreduce = {
    .name = "hierarchical",
    .wire = 6,
    .coll = COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE,
    .scope = COLLIE_SCOPE_ANY,
    .run = hierarchical_neighbor_allreduce,
    .cost = hierarchical_neighbor_cost,
};
