/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neighbor_allreduce.c - one step of decentralized averaging (core/op.h's
 * plan): every rank sends its data to its out-neighbours and combines what
 * its in-neighbours send, with their weights.
 *
 * The data streams in chunks.  A chunk is combined as soon as every
 * in-neighbour's copy of it has arrived, while the next chunks are still
 * moving, so a rank holds two chunks per in-neighbour (one arriving, one
 * waiting for the others) and never degree x the model; sends run ahead on
 * their own.  Chunks are combined in order and the in-neighbours' terms in
 * the plan's order, so the result does not depend on arrival times.
 *
 * Gathering (plan->gather) is the same step without the combine: each
 * in-neighbour's chunks land straight in their place in recvbuf.
 *
 * No rank coordinates with any but its neighbours: each chunk's header
 * carries the call (its sequence number, the graph's fingerprint, count,
 * dtype and wire dtype), and a receiver whose neighbour is in another call
 * fails with MISMATCH naming both.  Per step each rank sends
 * out-degree x count x the wire's bytes and waits one latency per chunk in
 * flight.  It cannot deadlock: a rank's sends depend on nothing it
 * receives, every receiver drains its first two chunks unconditionally, and
 * a rank with several transfers pending never sleeps on one of them alone.
 */
#include <stdint.h>

#include "../transport/xfer.h"
#include "algo.h"
#include "cost_terms.h"

#define CHUNK_BYTES ((size_t)512 << 10) /* wire bytes per message */

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* The per-call state, carved out of the communicator's scratch. */
struct stream {
    struct collie__xfer *x; /* sends [0, ns), receives [ns, ns + nr) */
    size_t *next;           /* per transfer: chunks completed */
    int *busy;              /* per transfer: a chunk in flight */
    const void **ys;        /* per receive: the chunk being combined */
    unsigned char *slots;   /* per receive: two chunks */
    unsigned char *stage;   /* per send: the chunk scaled and converted, when it must be */
    size_t chunk;           /* elements per chunk */
    size_t nchunks;
    size_t chunk_bytes; /* on the wire */
};

static int carve(collie_comm *comm, const struct collie__op *op, struct stream *s, int staged)
{
    const struct collie__nbr_plan *p = op->nbr;
    size_t wes = collie__dtype_size(p->wire), nx = (size_t)(p->nsend + p->nrecv);
    s->chunk = CHUNK_BYTES / wes < op->count ? CHUNK_BYTES / wes : op->count;
    s->nchunks = (op->count + s->chunk - 1) / s->chunk;
    s->chunk_bytes = align64(s->chunk * wes);
    size_t slots = p->gather ? 0 : (size_t)p->nrecv * 2 * s->chunk_bytes;
    size_t stage = staged ? (size_t)p->nsend * s->chunk_bytes : 0;
    size_t xfers = align64(nx * sizeof *s->x), next = align64(nx * sizeof *s->next);
    size_t busy = align64(nx * sizeof *s->busy), ys = align64((size_t)p->nrecv * sizeof *s->ys);
    unsigned char *b =
        collie__scratch(comm, COLLIE_SCRATCH_TMP, slots + stage + xfers + next + busy + ys + 64);
    if (!b)
        return -1;
    s->slots = b;
    s->stage = b + slots;
    s->x = (struct collie__xfer *)(b + slots + stage);
    s->next = (size_t *)((unsigned char *)s->x + xfers);
    s->busy = (int *)((unsigned char *)s->next + next);
    s->ys = (const void **)((unsigned char *)s->busy + busy);
    memset(s->next, 0, nx * sizeof *s->next);
    memset(s->busy, 0, nx * sizeof *s->busy);
    for (size_t i = 0; i < nx; i++)
        s->x[i].left = 0;
    return 0;
}

static size_t chunk_len(const struct collie__op *op, const struct stream *s, size_t c)
{
    size_t lo = c * s->chunk;
    return op->count - lo < s->chunk ? op->count - lo : s->chunk;
}

/*
 * Starts every transfer that may start: the next chunk to each
 * out-neighbour, and from each in-neighbour whose slot is free.
 */
static void start(collie_comm *comm, const struct collie__op *op, struct stream *s, size_t folded,
                  int staged)
{
    const struct collie__nbr_plan *p = op->nbr;
    size_t es = op->elem_size, wes = collie__dtype_size(p->wire);
    for (int o = 0; o < p->nsend; o++) {
        size_t c = s->next[o];
        if (s->busy[o] || c == s->nchunks)
            continue;
        size_t m = chunk_len(op, s, c);
        const unsigned char *src = (const unsigned char *)op->sendbuf + c * s->chunk * es;
        if (staged) {
            unsigned char *stage = s->stage + (size_t)o * s->chunk_bytes;
            collie__scale(stage, p->wire, src, op->dtype, p->send_w ? p->send_w[o] : 1.0, m);
            src = stage;
        }
        collie__xfer_init(comm, &s->x[o], &comm->cur, p->send[o], 1, src, m * wes,
                          COLLIE_XFER_COLL);
        s->busy[o] = 1;
    }
    for (int d = 0; d < p->nrecv; d++) {
        int i = p->nsend + d;
        size_t c = s->next[i];
        if (s->busy[i] || c == s->nchunks || (!p->gather && c >= folded + 2))
            continue;
        unsigned char *slot =
            p->gather ? (unsigned char *)op->recvbuf + ((size_t)d * op->count + c * s->chunk) * es
                      : s->slots + ((size_t)d * 2 + (c & 1)) * s->chunk_bytes;
        collie__xfer_init(comm, &s->x[i], &comm->cur, p->recv[d], 0, slot,
                          chunk_len(op, s, c) * wes, COLLIE_XFER_COLL);
        s->busy[i] = 1;
    }
}

/* Whether chunk c can be combined: every in-neighbour's copy is here, and in place, sent. */
static int ready(const struct collie__op *op, const struct stream *s, size_t c)
{
    const struct collie__nbr_plan *p = op->nbr;
    for (int d = 0; d < p->nrecv; d++)
        if (s->next[p->nsend + d] <= c)
            return 0;
    if (op->sendbuf == op->recvbuf)
        for (int o = 0; o < p->nsend; o++)
            if (s->next[o] <= c)
                return 0;
    return 1;
}

static void combine(const struct collie__op *op, struct stream *s, size_t c)
{
    const struct collie__nbr_plan *p = op->nbr;
    if (p->gather) /* in place already */
        return;
    size_t off = c * s->chunk * op->elem_size;
    for (int d = 0; d < p->nrecv; d++)
        s->ys[d] = s->slots + ((size_t)d * 2 + (c & 1)) * s->chunk_bytes;
    collie__combine((unsigned char *)op->recvbuf + off, (const unsigned char *)op->sendbuf + off,
                    p->self_w, s->ys, p->recv_w, p->nrecv, chunk_len(op, s, c), op->dtype, p->wire);
}

static int needs_stage(const struct collie__op *op)
{
    const struct collie__nbr_plan *p = op->nbr;
    int staged = p->wire != op->dtype;
    for (int o = 0; p->send_w && o < p->nsend && !staged; o++)
        staged = p->send_w[o] != 1.0;
    return staged;
}

collie_status collie__neighbor_allreduce(collie_comm *comm, const struct collie__op *op)
{
    const struct collie__nbr_plan *p = op->nbr;
    int staged = needs_stage(op), nx = p->nsend + p->nrecv;
    struct stream s;
    if (!op->count) /* an empty slice of hierarchical's: empty on every rank */
        return COLLIE_OK;
    if (carve(comm, op, &s, staged) != 0)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for %s's %d chunk buffers",
                            comm->rank, collie__coll_name(op->desc.coll),
                            (p->gather ? 0 : 2 * p->nrecv) + (staged ? p->nsend : 0));
    uint64_t stalled_since = 0;
    size_t folded = 0;
    for (;;) {
        start(comm, op, &s, folded, staged);
        int progress = 0;
        collie_status st = collie__xfer_poll(comm, s.x, nx, &progress);
        if (st != COLLIE_OK)
            return st;
        int sending = 0;
        for (int i = 0; i < nx; i++) {
            if (s.busy[i] && !s.x[i].left) {
                s.busy[i] = 0;
                s.next[i]++;
                progress = 1;
            }
            sending |= i < p->nsend && s.next[i] < s.nchunks;
        }
        for (; folded < s.nchunks && ready(op, &s, folded); folded++, progress = 1)
            combine(op, &s, folded);
        if (folded == s.nchunks && !sending)
            return COLLIE_OK;
        if (progress) {
            stalled_since = 0;
            continue;
        }
        if (collie__xfer_timed_out(comm, &stalled_since)) {
            int w = 0;
            while (w < nx - 1 && !s.busy[w])
                w++;
            return collie__fail(comm, COLLIE_ERR_TIMEOUT,
                                "rank %d waited COLLIE_TIMEOUT=%.1f s for rank %d to %s chunk %zu "
                                "of %s #%u without progress (is rank %d in the same step, with "
                                "rank %d among its %s-neighbours?)",
                                comm->rank, comm->timeout_s, s.x[w].peer,
                                s.x[w].send ? "take" : "send", s.next[w],
                                collie__coll_name(op->desc.coll), comm->cur.seq, s.x[w].peer,
                                comm->rank, s.x[w].send ? "in" : "out");
        }
        int pending = 0;
        for (int i = 0; i < nx; i++)
            pending += s.busy[i];
        st = collie__xfer_sleep(comm, s.x, nx,
                                pending > 1 ? collie__now_ns() + COLLIE_XFER_RELOOK_NS : 0);
        if (st != COLLIE_OK)
            return st;
    }
}

/*
 * Neighbour averaging: `degree` sends and receives of s at once.  Across
 * hosts, the share of peers on other hosts is that of the exponential graph
 * over ranks placed in blocks: of its log2(n) distances 2^k, those >= L
 * leave the host; all of a host's ranks send through its link at once.
 */
static double neighbor_cost(machine *m, double s, int degree)
{
    if (m->hosts == 1)
        return collie__cost_sync(m) +
               collie__cost_move(m, m->host_beta, (1.0 + degree) * s, (1.0 + degree) * s);
    double all = collie__cost_log2_steps(m->ranks),
           near = collie__cost_log2_steps(m->ranks_per_host);
    double away = all > near ? (all - near) / all : 1;
    return collie__cost_over_links(m, 1, away * collie__cost_flows(m) * degree * s) +
           collie__cost_move(m, m->host_beta, (1.0 + degree) * s, 0);
}

const struct collie__algo collie__algo_neighbor_allreduce = {
    .name = "neighbor",
    .wire = 12,
    .coll = COLLIE_COLL_NEIGHBOR_ALLREDUCE,
    .scope = COLLIE_SCOPE_ANY,
    .run = collie__neighbor_allreduce,
    .cost = neighbor_cost,
};

const struct collie__algo collie__algo_neighbor_allgather = {
    .name = "neighbor",
    .wire = 12,
    .coll = COLLIE_COLL_NEIGHBOR_ALLGATHER,
    .scope = COLLIE_SCOPE_ANY,
    .run = collie__neighbor_allreduce,
    .cost = neighbor_cost,
};
