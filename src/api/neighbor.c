/*
 * neighbor.c - the neighbour operations' public calls: this rank's part of
 * a step (a topology's, or lists given per call) is checked and made into
 * the plan that coll/neighbor_allreduce.c runs, in order with the
 * communicator's other collectives.  A non-blocking call owns a copy of
 * the lists it was given.
 */
#include <stdarg.h>
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

static collie_status refuse(collie_comm *comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static collie_status refuse(collie_comm *comm, const char *fmt, ...)
{
    char detail[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (!comm) {
        collie__api_error("collie_neighbor_allreduce: %s", detail);
        return COLLIE_ERR_INVALID_ARG;
    }
    return collie__fail(comm, COLLIE_ERR_INVALID_ARG, "neighbor_allreduce on rank %d: %s",
                        comm->rank, detail);
}

static int averages(collie_dtype dtype)
{
    return dtype == COLLIE_FLOAT32 || dtype == COLLIE_FLOAT64 || dtype == COLLIE_FLOAT16 ||
           dtype == COLLIE_BFLOAT16;
}

/* One list of a dynamic step: in range, not this rank, no rank twice. */
static collie_status check_list(collie_comm *comm, const char *name, int n, const int *ranks,
                                unsigned char *seen)
{
    if (n < 0 || n >= comm->size)
        return refuse(comm, "n%s=%d is outside [0, %d)", name, n, comm->size);
    if (n && !ranks)
        return refuse(comm, "%s_ranks is NULL but n%s is %d", name, name, n);
    memset(seen, 0, (size_t)comm->size);
    for (int k = 0; k < n; k++) {
        int r = ranks[k];
        if (r < 0 || r >= comm->size)
            return refuse(comm, "%s_ranks[%d]=%d is outside [0, %d)", name, k, r, comm->size);
        if (r == comm->rank)
            return refuse(comm, "%s_ranks[%d]=%d is this rank (its own weight is self_weight)",
                          name, k, r);
        if (seen[r]++)
            return refuse(comm, "%s_ranks lists rank %d twice", name, r);
    }
    return COLLIE_OK;
}

/* The plan of a dynamic step, its lists copied; NULL with *st set when refused. */
static struct call *dynamic_call(collie_comm *comm, const collie_neighbors *nb, collie_status *st)
{
    unsigned char *seen = malloc((size_t)comm->size);
    if (!seen) {
        *st = collie__fail(comm, COLLIE_ERR_NOMEM,
                           "rank %d: no memory to check the neighbour lists", comm->rank);
        return NULL;
    }
    *st = check_list(comm, "recv", nb->nrecv, nb->recv_ranks, seen);
    if (*st == COLLIE_OK)
        *st = check_list(comm, "send", nb->nsend, nb->send_ranks, seen);
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
static struct call *static_call(collie_comm *comm, const collie_topology *topo, int between_hosts,
                                collie_status *st)
{
    int nodes = between_hosts ? comm->nhosts : comm->size;
    if (!topo) {
        *st = refuse(comm, "topo is NULL");
        return NULL;
    }
    if (collie_topology_size(topo) != nodes) {
        *st = refuse(comm, "the topology has %d nodes, the communicator %d %s",
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

/*
 * Checks a call and makes its plan and operation; NULL with *st set when it
 * is refused.
 */
static struct call *prepare(collie_comm *comm, const struct args *a, struct collie__op *o,
                            collie_status *st)
{
    if (!comm) {
        *st = refuse(NULL, "comm is NULL");
        return NULL;
    }
    *st = atomic_load(&comm->failed);
    if (*st != COLLIE_OK)
        return NULL;
    if (!averages(a->dtype)) {
        *st = refuse(comm,
                     "dtype=%d: neighbour averaging takes COLLIE_FLOAT32, FLOAT64, FLOAT16 or "
                     "BFLOAT16",
                     (int)a->dtype);
        return NULL;
    }
    if (a->wire != a->dtype && (a->wire != COLLIE_FLOAT16 && a->wire != COLLIE_BFLOAT16)) {
        *st = refuse(comm, "wire_dtype=%d: float32 data travels as COLLIE_FLOAT16 or BFLOAT16",
                     (int)a->wire);
        return NULL;
    }
    struct call *c =
        a->nb ? dynamic_call(comm, a->nb, st)
              : static_call(comm, a->topo, a->coll == COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE, st);
    if (!c)
        return NULL;
    c->plan.wire = a->wire;
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
        return refuse(comm, "req (the output pointer) is NULL");
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

/* The arguments of a step: static over topo (hier: over the hosts), or dynamic over nb. */
static struct args args_of(int hier, const collie_topology *topo, const collie_neighbors *nb,
                           const void *sendbuf, void *recvbuf, size_t count, collie_dtype dtype,
                           collie_dtype wire)
{
    return (struct args){
        .coll = hier ? COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE : COLLIE_COLL_NEIGHBOR_ALLREDUCE,
        .topo = topo,
        .nb = nb,
        .sendbuf = sendbuf,
        .recvbuf = recvbuf,
        .count = count,
        .dtype = dtype,
        .wire = wire,
    };
}

collie_status collie_neighbor_allreduce(collie_comm *comm, const collie_topology *topo,
                                        const void *sendbuf, void *recvbuf, size_t count,
                                        collie_dtype dtype)
{
    struct args a = args_of(0, topo, NULL, sendbuf, recvbuf, count, dtype, dtype);
    return run_blocking(comm, &a);
}

collie_status collie_ineighbor_allreduce(collie_comm *comm, const collie_topology *topo,
                                         const void *sendbuf, void *recvbuf, size_t count,
                                         collie_dtype dtype, collie_request **req)
{
    struct args a = args_of(0, topo, NULL, sendbuf, recvbuf, count, dtype, dtype);
    return run_request(comm, &a, req);
}

collie_status collie_neighbor_allreduce_compressed(collie_comm *comm, const collie_topology *topo,
                                                   const float *sendbuf, float *recvbuf,
                                                   size_t count, collie_dtype wire_dtype)
{
    struct args a = args_of(0, topo, NULL, sendbuf, recvbuf, count, COLLIE_FLOAT32, wire_dtype);
    return run_blocking(comm, &a);
}

collie_status collie_ineighbor_allreduce_compressed(collie_comm *comm, const collie_topology *topo,
                                                    const float *sendbuf, float *recvbuf,
                                                    size_t count, collie_dtype wire_dtype,
                                                    collie_request **req)
{
    struct args a = args_of(0, topo, NULL, sendbuf, recvbuf, count, COLLIE_FLOAT32, wire_dtype);
    return run_request(comm, &a, req);
}

collie_status collie_hierarchical_neighbor_allreduce(collie_comm *comm, const collie_topology *topo,
                                                     const void *sendbuf, void *recvbuf,
                                                     size_t count, collie_dtype dtype)
{
    struct args a = args_of(1, topo, NULL, sendbuf, recvbuf, count, dtype, dtype);
    return run_blocking(comm, &a);
}

collie_status collie_ihierarchical_neighbor_allreduce(collie_comm *comm,
                                                      const collie_topology *topo,
                                                      const void *sendbuf, void *recvbuf,
                                                      size_t count, collie_dtype dtype,
                                                      collie_request **req)
{
    struct args a = args_of(1, topo, NULL, sendbuf, recvbuf, count, dtype, dtype);
    return run_request(comm, &a, req);
}

collie_status collie_neighbor_allreduce_dynamic(collie_comm *comm, const collie_neighbors *nb,
                                                const void *sendbuf, void *recvbuf, size_t count,
                                                collie_dtype dtype)
{
    if (!nb)
        return refuse(comm, "nb (this rank's neighbours) is NULL");
    struct args a = args_of(0, NULL, nb, sendbuf, recvbuf, count, dtype, dtype);
    return run_blocking(comm, &a);
}

collie_status collie_ineighbor_allreduce_dynamic(collie_comm *comm, const collie_neighbors *nb,
                                                 const void *sendbuf, void *recvbuf, size_t count,
                                                 collie_dtype dtype, collie_request **req)
{
    if (!nb)
        return refuse(comm, "nb (this rank's neighbours) is NULL");
    struct args a = args_of(0, NULL, nb, sendbuf, recvbuf, count, dtype, dtype);
    return run_request(comm, &a, req);
}
