/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neighbor.c - the neighbour operations' public calls: this rank's part of
 * a step (a topology's, or lists given per call) is checked and made into
 * the plan that coll/neighbor_allreduce.c runs, in order with the
 * communicator's other collectives.  A non-blocking call owns a copy of
 * the lists it was given.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "async.h"
#include "timeline.h"
#include "topology.h"

/* A call's plan, with room for the lists of a dynamic one. */
struct call {
    struct collie__nbr_plan plan;
    int *ranks;      /* recv then send */
    double *weights; /* recv then send */
};

/* One list of a dynamic step: in range, not this rank, no rank twice. */
static collie_status check_list(collie_comm *comm, const char *who, const char *name, int n,
                                const int *ranks, unsigned char *seen)
{
    if (n < 0 || n >= comm->size)
        return collie__refuse(comm, who, "n%s=%d is outside [0, %d)", name, n, comm->size);
    if (n && !ranks)
        return collie__refuse(comm, who, "%s_ranks is NULL but n%s is %d", name, name, n);
    memset(seen, 0, (size_t)comm->size);
    for (int k = 0; k < n; k++) {
        int r = ranks[k];
        if (r < 0 || r >= comm->size)
            return collie__refuse(comm, who, "%s_ranks[%d]=%d is outside [0, %d)", name, k, r,
                                  comm->size);
        if (r == comm->rank)
            return collie__refuse(comm, who,
                                  "%s_ranks[%d]=%d is this rank (its own weight is self_weight)",
                                  name, k, r);
        if (seen[r]++)
            return collie__refuse(comm, who, "%s_ranks lists rank %d twice", name, r);
    }
    return COLLIE_OK;
}

/* The plan of a dynamic step, its lists copied; NULL with *st set when refused. */
static struct call *dynamic_call(collie_comm *comm, const char *who, const collie_neighbors *nb,
                                 collie_status *st)
{
    unsigned char *seen = malloc((size_t)comm->size);
    if (!seen) {
        *st = collie__fail(comm, COLLIE_ERR_NOMEM,
                           "rank %d: no memory to check the neighbour lists", comm->rank);
        return NULL;
    }
    *st = check_list(comm, who, "recv", nb->nrecv, nb->recv_ranks, seen);
    if (*st == COLLIE_OK)
        *st = check_list(comm, who, "send", nb->nsend, nb->send_ranks, seen);
    free(seen);
    if (*st != COLLIE_OK)
        return NULL;
    size_t n = (size_t)nb->nrecv + (size_t)nb->nsend;
    struct call *c = malloc(sizeof *c + n * (sizeof(int) + sizeof(double)));
    if (!c) {
        *st = collie__fail(comm, COLLIE_ERR_NOMEM,
                           "rank %d: no memory for a copy of %zu neighbours", comm->rank, n);
        return NULL;
    }
    c->weights = (double *)(c + 1);
    c->ranks = (int *)(c->weights + n);
    double uniform = 1.0 / (nb->nrecv + 1);
    for (int k = 0; k < nb->nrecv; k++) {
        c->ranks[k] = nb->recv_ranks[k];
        c->weights[k] = nb->recv_weights ? nb->recv_weights[k] : uniform;
    }
    for (int k = 0; k < nb->nsend; k++) {
        c->ranks[nb->nrecv + k] = nb->send_ranks[k];
        c->weights[nb->nrecv + k] = nb->send_weights ? nb->send_weights[k] : 1.0;
    }
    c->plan = (struct collie__nbr_plan){
        .nrecv = nb->nrecv,
        .nsend = nb->nsend,
        .recv = c->ranks,
        .send = c->ranks + nb->nrecv,
        .recv_w = c->weights,
        .send_w = c->weights + nb->nrecv,
        .self_w = nb->recv_weights ? nb->self_weight : uniform,
        .fingerprint = 0,
    };
    return c;
}

/* The plan of a topology's step: over the ranks, or over the hosts (between_hosts). */
static struct call *static_call(collie_comm *comm, const char *who, const collie_topology *topo,
                                int between_hosts, collie_status *st)
{
    int nodes = between_hosts ? comm->nhosts : comm->size;
    if (!topo) {
        *st = collie__refuse(comm, who, "topo is NULL");
        return NULL;
    }
    if (collie_topology_size(topo) != nodes) {
        *st = collie__refuse(comm, who, "the topology has %d nodes, the communicator %d %s",
                             collie_topology_size(topo), nodes, between_hosts ? "hosts" : "ranks");
        return NULL;
    }
    struct call *c = malloc(sizeof *c);
    if (!c) {
        *st = collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for a neighbour step",
                           comm->rank);
        return NULL;
    }
    collie__topology_plan(topo, between_hosts ? comm->hosts.host_of[comm->rank] : comm->rank,
                          &c->plan);
    return c;
}

/* One call's arguments, as the public functions received them. */
struct args {
    enum collie__coll coll;
    const collie_topology *topo; /* static: the step's topology */
    const collie_neighbors *nb;  /* dynamic: this rank's lists */
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    collie_dtype dtype, wire; /* wire: what the data travels as */
};

/* What only a gather checks: recvbuf holds in-degree x count elements, apart from sendbuf. */
static collie_status check_gather(collie_comm *comm, const struct args *a,
                                  const struct collie__nbr_plan *p)
{
    size_t es = collie__dtype_size(a->dtype);
    if (a->count && p->nrecv && a->count > SIZE_MAX / es / (size_t)p->nrecv)
        return collie__refuse(comm, "neighbor_allgather",
                              "%d in-neighbours x count=%zu elements overflow the address space",
                              p->nrecv, a->count);
    if (collie__overlaps(a->sendbuf, a->count * es, a->recvbuf, (size_t)p->nrecv * a->count * es))
        return collie__refuse(comm, "neighbor_allgather",
                              "sendbuf overlaps recvbuf (%d in-neighbours x count=%zu elements): a "
                              "gather has no in-place form",
                              p->nrecv, a->count);
    return COLLIE_OK;
}

/*
 * Checks a call and makes its plan and operation; NULL with *st set when it
 * is refused.
 */
static struct call *prepare(collie_comm *comm, const struct args *a, struct collie__op *o,
                            collie_status *st)
{
    const char *who = collie__coll_name(a->coll);
    int gather = a->coll == COLLIE_COLL_NEIGHBOR_ALLGATHER;
    if (!comm) {
        *st = collie__refuse(NULL, who, "comm is NULL");
        return NULL;
    }
    *st = atomic_load(&comm->failed);
    if (*st != COLLIE_OK)
        return NULL;
    if (!gather && !collie__float_dtype(a->dtype)) {
        *st = collie__refuse(
            comm, who,
            "dtype=%d: neighbour averaging takes COLLIE_FLOAT32, FLOAT64, FLOAT16 or "
            "BFLOAT16",
            (int)a->dtype);
        return NULL;
    }
    if (a->wire != a->dtype && (a->wire != COLLIE_FLOAT16 && a->wire != COLLIE_BFLOAT16)) {
        *st = collie__refuse(comm, who,
                             "wire_dtype=%d: float32 data travels as COLLIE_FLOAT16 or BFLOAT16",
                             (int)a->wire);
        return NULL;
    }
    struct call *c =
        a->nb ? dynamic_call(comm, who, a->nb, st)
              : static_call(comm, who, a->topo, a->coll == COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE, st);
    if (!c)
        return NULL;
    c->plan.wire = a->wire;
    c->plan.gather = gather;
    *o = (struct collie__op){
        .desc = {.coll = (uint8_t)a->coll},
        .sendbuf = a->sendbuf,
        .recvbuf = a->recvbuf,
        .count = a->count,
        .dtype = a->dtype,
        .op = COLLIE_SUM,
        .root = (int)c->plan.fingerprint,
    };
    *st = collie__op_check(comm, o);
    if (*st == COLLIE_OK && gather)
        *st = check_gather(comm, a, &c->plan);
    if (*st != COLLIE_OK) {
        free(c);
        return NULL;
    }
    o->desc.op = (uint8_t)c->plan.wire; /* neighbours must agree on it too */
    o->nbr = &c->plan;
    return c;
}

static collie_status run_blocking(collie_comm *comm, const struct args *a)
{
    struct collie__op o;
    collie_status st;
    struct call *c = prepare(comm, a, &o, &st);
    if (!c)
        return st;
    uint64_t t0 = collie__timeline_on() ? collie__now_ns() : 0;
    st = collie__async_blocking(comm, &o);
    if (t0)
        collie__timeline_blocking(comm, &o, t0, collie__now_ns());
    free(c);
    return st;
}

static collie_status exec_neighbor(collie_comm *comm, struct collie_request *r)
{
    r->op.nbr = &((struct call *)r->ctx)->plan;
    return collie__op_execute(comm, &r->op);
}

static collie_status run_request(collie_comm *comm, const struct args *a, collie_request **req)
{
    if (!req)
        return collie__refuse(comm, collie__coll_name(a->coll), "req (the output pointer) is NULL");
    *req = NULL;
    struct collie__op o;
    collie_status st;
    struct call *c = prepare(comm, a, &o, &st);
    if (!c)
        return st;
    st = collie__async_issue(comm, &o, exec_neighbor, c, req);
    if (st != COLLIE_OK)
        free(c);
    return st;
}

/*
 * One public call: a step of coll, static over topo (over the hosts for the
 * hierarchical one) or dynamic over nb; blocking, or a request in *req.
 */
static collie_status call(collie_comm *comm, enum collie__coll coll, const collie_topology *topo,
                          const collie_neighbors *nb, const void *sendbuf, void *recvbuf,
                          size_t count, collie_dtype dtype, collie_dtype wire, int nonblocking,
                          collie_request **req)
{
    struct args a = {
        .coll = coll,
        .topo = topo,
        .nb = nb,
        .sendbuf = sendbuf,
        .recvbuf = recvbuf,
        .count = count,
        .dtype = dtype,
        .wire = wire,
    };
    return nonblocking ? run_request(comm, &a, req) : run_blocking(comm, &a);
}

#define ALLREDUCE COLLIE_COLL_NEIGHBOR_ALLREDUCE
#define ALLGATHER COLLIE_COLL_NEIGHBOR_ALLGATHER
#define HIER COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE

collie_status collie_neighbor_allreduce(collie_comm *comm, const collie_topology *topo,
                                        const void *sendbuf, void *recvbuf, size_t count,
                                        collie_dtype dtype)
{
    return call(comm, ALLREDUCE, topo, NULL, sendbuf, recvbuf, count, dtype, dtype, 0, NULL);
}

collie_status collie_ineighbor_allreduce(collie_comm *comm, const collie_topology *topo,
                                         const void *sendbuf, void *recvbuf, size_t count,
                                         collie_dtype dtype, collie_request **req)
{
    return call(comm, ALLREDUCE, topo, NULL, sendbuf, recvbuf, count, dtype, dtype, 1, req);
}

collie_status collie_neighbor_allreduce_compressed(collie_comm *comm, const collie_topology *topo,
                                                   const float *sendbuf, float *recvbuf,
                                                   size_t count, collie_dtype wire_dtype)
{
    return call(comm, ALLREDUCE, topo, NULL, sendbuf, recvbuf, count, COLLIE_FLOAT32, wire_dtype, 0,
                NULL);
}

collie_status collie_ineighbor_allreduce_compressed(collie_comm *comm, const collie_topology *topo,
                                                    const float *sendbuf, float *recvbuf,
                                                    size_t count, collie_dtype wire_dtype,
                                                    collie_request **req)
{
    return call(comm, ALLREDUCE, topo, NULL, sendbuf, recvbuf, count, COLLIE_FLOAT32, wire_dtype, 1,
                req);
}

collie_status collie_hierarchical_neighbor_allreduce(collie_comm *comm, const collie_topology *topo,
                                                     const void *sendbuf, void *recvbuf,
                                                     size_t count, collie_dtype dtype)
{
    return call(comm, HIER, topo, NULL, sendbuf, recvbuf, count, dtype, dtype, 0, NULL);
}

collie_status collie_ihierarchical_neighbor_allreduce(collie_comm *comm,
                                                      const collie_topology *topo,
                                                      const void *sendbuf, void *recvbuf,
                                                      size_t count, collie_dtype dtype,
                                                      collie_request **req)
{
    return call(comm, HIER, topo, NULL, sendbuf, recvbuf, count, dtype, dtype, 1, req);
}

/* A dynamic step of coll: nb must be given. */
static collie_status call_dynamic(collie_comm *comm, enum collie__coll coll,
                                  const collie_neighbors *nb, const void *sendbuf, void *recvbuf,
                                  size_t count, collie_dtype dtype, int nonblocking,
                                  collie_request **req)
{
    if (!nb)
        return collie__refuse(comm, collie__coll_name(coll), "nb (this rank's neighbours) is NULL");
    return call(comm, coll, NULL, nb, sendbuf, recvbuf, count, dtype, dtype, nonblocking, req);
}

collie_status collie_neighbor_allreduce_dynamic(collie_comm *comm, const collie_neighbors *nb,
                                                const void *sendbuf, void *recvbuf, size_t count,
                                                collie_dtype dtype)
{
    return call_dynamic(comm, ALLREDUCE, nb, sendbuf, recvbuf, count, dtype, 0, NULL);
}

collie_status collie_ineighbor_allreduce_dynamic(collie_comm *comm, const collie_neighbors *nb,
                                                 const void *sendbuf, void *recvbuf, size_t count,
                                                 collie_dtype dtype, collie_request **req)
{
    return call_dynamic(comm, ALLREDUCE, nb, sendbuf, recvbuf, count, dtype, 1, req);
}

collie_status collie_neighbor_allgather(collie_comm *comm, const collie_topology *topo,
                                        const void *sendbuf, void *recvbuf, size_t count,
                                        collie_dtype dtype)
{
    return call(comm, ALLGATHER, topo, NULL, sendbuf, recvbuf, count, dtype, dtype, 0, NULL);
}

collie_status collie_ineighbor_allgather(collie_comm *comm, const collie_topology *topo,
                                         const void *sendbuf, void *recvbuf, size_t count,
                                         collie_dtype dtype, collie_request **req)
{
    return call(comm, ALLGATHER, topo, NULL, sendbuf, recvbuf, count, dtype, dtype, 1, req);
}

collie_status collie_neighbor_allgather_dynamic(collie_comm *comm, const collie_neighbors *nb,
                                                const void *sendbuf, void *recvbuf, size_t count,
                                                collie_dtype dtype)
{
    return call_dynamic(comm, ALLGATHER, nb, sendbuf, recvbuf, count, dtype, 0, NULL);
}

collie_status collie_ineighbor_allgather_dynamic(collie_comm *comm, const collie_neighbors *nb,
                                                 const void *sendbuf, void *recvbuf, size_t count,
                                                 collie_dtype dtype, collie_request **req)
{
    return call_dynamic(comm, ALLGATHER, nb, sendbuf, recvbuf, count, dtype, 1, req);
}

/* Pair gossip: a dynamic step with peer as the only neighbour, both ways. */
static collie_status gossip(collie_comm *comm, int peer, const void *sendbuf, void *recvbuf,
                            size_t count, collie_dtype dtype, double self_weight,
                            double pair_weight, int nonblocking, collie_request **req)
{
    if (comm && (peer < 0 || peer >= comm->size || peer == comm->rank))
        return collie__refuse(comm, "pair_gossip", "peer=%d is %s", peer,
                              peer == comm->rank ? "this rank" : "not a rank of the communicator");
    collie_neighbors nb = {
        .nrecv = 1,
        .recv_ranks = &peer,
        .recv_weights = &pair_weight,
        .self_weight = self_weight,
        .nsend = 1,
        .send_ranks = &peer,
    };
    return call(comm, ALLREDUCE, NULL, &nb, sendbuf, recvbuf, count, dtype, dtype, nonblocking,
                req);
}

collie_status collie_pair_gossip(collie_comm *comm, int peer, const void *sendbuf, void *recvbuf,
                                 size_t count, collie_dtype dtype, double self_weight,
                                 double pair_weight)
{
    return gossip(comm, peer, sendbuf, recvbuf, count, dtype, self_weight, pair_weight, 0, NULL);
}

collie_status collie_ipair_gossip(collie_comm *comm, int peer, const void *sendbuf, void *recvbuf,
                                  size_t count, collie_dtype dtype, double self_weight,
                                  double pair_weight, collie_request **req)
{
    return gossip(comm, peer, sendbuf, recvbuf, count, dtype, self_weight, pair_weight, 1, req);
}
