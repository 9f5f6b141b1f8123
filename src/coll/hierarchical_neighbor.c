/*
 * hierarchical_neighbor.c - decentralized averaging between hosts, each
 * host's ranks acting as one node of a topology over the hosts (op->nbr,
 * in host numbers): every rank of host h ends with
 *     W[h][h] avg_h + sum over in-neighbour hosts g of W[h][g] avg_g,
 * avg_h the mean of host h's inputs.  Per chunk of the input (one staging
 * slot), as hierarchical allreduce does:
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
#include "../reduce/reduce.h"
#include "../transport/shm.h"
#include "algo.h"

/* The global rank that owns slice s on host h. */
static int owner(const collie_comm *comm, int h, int s)
{
    int first = comm->hosts.start[h], on_host = comm->hosts.start[h + 1] - first;
    return comm->hosts.ranks[first + s % on_host];
}

/* One neighbour step among the owners of slice s, in place on buf. */
static collie_status across_hosts(collie_comm *comm, const struct collie__op *op, int s, int *ranks,
                                  unsigned char *buf, size_t count)
{
    const struct collie__nbr_plan *hosts = op->nbr;
    struct collie__nbr_plan p = *hosts;
    for (int k = 0; k < p.nrecv; k++)
        ranks[k] = owner(comm, hosts->recv[k], s);
    for (int k = 0; k < p.nsend; k++)
        ranks[p.nrecv + k] = owner(comm, hosts->send[k], s);
    p.recv = ranks;
    p.send = ranks + p.nrecv;
    struct collie__op step = *op;
    step.nbr = &p;
    step.sendbuf = step.recvbuf = buf;
    step.count = count;
    return collie__neighbor_allreduce(comm, &step);
}

collie_status collie__hierarchical_neighbor_allreduce(collie_comm *comm,
                                                      const struct collie__op *op)
{
    const int n = comm->local_size, me = comm->local_rank, slices = comm->hosts.max_local;
    const size_t es = op->elem_size, chunk = collie__win_bytes(comm) / es;
    const unsigned char *send = op->sendbuf;
    unsigned char *recv = op->recvbuf;
    const void **srcs = comm->scratch_srcs;
    int *ranks = collie__scratch(comm, COLLIE_SCRATCH_WORK,
                                 sizeof(int) * (size_t)(op->nbr->nrecv + op->nbr->nsend + 1));
    if (!ranks)
        return comm->failed;
    for (size_t off = 0; off < op->count; off += chunk) {
        size_t m = op->count - off < chunk ? op->count - off : chunk;
        unsigned parity = collie__win_round(comm);
        unsigned char *mine = collie__win_slot(comm, me, parity);
        memcpy(mine, send + off * es, m * es);
        collie_status st = collie__win_sync(comm);
        for (int s = me; s < slices && st == COLLIE_OK; s += n) {
            size_t lo = collie__seg(m, s, slices), hi = collie__seg(m, s + 1, slices);
            for (int r = 0; r < n; r++)
                srcs[r] = (const unsigned char *)collie__win_slot(comm, r, parity) + lo * es;
            collie__reduce(mine + lo * es, srcs, n, hi - lo, op->dtype, COLLIE_AVG, n, 0);
            if (hi > lo)
                st = across_hosts(comm, op, s, ranks, mine + lo * es, hi - lo);
        }
        if (st == COLLIE_OK)
            st = collie__win_sync(comm);
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
