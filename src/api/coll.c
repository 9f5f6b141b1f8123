/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll.c - the public collectives and point-to-point calls.  Each fills one
 * descriptor and enters run(), the single checked path: argument checks
 * (on this rank, before any communication), the communicator's health, the
 * in-place forms, then the chosen algorithm, or the message engine for
 * send/recv.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../coll/algo.h"
#include "../core/log.h"
#include "../transport/shm.h"
#include "../transport/transport.h"
#include "../transport/xfer.h"
#include "api.h"
#include "async.h"
#include "timeline.h"

static collie_status invalid(collie_comm *comm, const struct collie__op *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static collie_status invalid(collie_comm *comm, const struct collie__op *op, const char *fmt, ...)
{
    char detail[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return collie__fail(comm, COLLIE_ERR_INVALID_ARG, "%s on rank %d: %s",
                        collie__coll_name(op->desc.coll), comm->rank, detail);
}

/* Bytes of the send and receive buffers that op touches on this rank; -1 on overflow. */
static int buffer_sizes(const collie_comm *comm, const struct collie__op *op, size_t *send,
                        size_t *recv)
{
    size_t n = (size_t)comm->size, block, all;
    /* Not count > SIZE_MAX / elem_size / n: two divisions were 3% of a tiny broadcast's time. */
    if (__builtin_mul_overflow(op->count, op->elem_size, &block) ||
        __builtin_mul_overflow(block, n, &all))
        return -1;
    *send = *recv = block;
    if (op->desc.coll == COLLIE_COLL_ALLGATHER || op->desc.coll == COLLIE_COLL_ALLTOALL)
        *recv = block * n;
    if (op->desc.coll == COLLIE_COLL_REDUCE_SCATTER || op->desc.coll == COLLIE_COLL_ALLTOALL)
        *send = block * n;
    return 0;
}

/* Bytes this rank's output buffer receives. */
static size_t output_bytes(const collie_comm *comm, const struct collie__op *op)
{
    size_t block = op->count * op->elem_size;
    return op->desc.coll == COLLIE_COLL_ALLGATHER || op->desc.coll == COLLIE_COLL_ALLTOALL
               ? block * (size_t)comm->size
               : block;
}

/* Whether coll takes a collie_op. */
static int reduces(enum collie__coll coll)
{
    return coll == COLLIE_COLL_ALLREDUCE || coll == COLLIE_COLL_REDUCE ||
           coll == COLLIE_COLL_REDUCE_SCATTER;
}

/* Whether coll takes a root (or a peer: send and recv). */
static int rooted(enum collie__coll coll)
{
    return coll == COLLIE_COLL_BROADCAST || coll == COLLIE_COLL_REDUCE ||
           coll == COLLIE_COLL_SEND || coll == COLLIE_COLL_RECV;
}

static collie_status check_args(collie_comm *comm, struct collie__op *op)
{
    enum collie__coll coll = op->desc.coll;
    const char *root_name = coll == COLLIE_COLL_SEND || coll == COLLIE_COLL_RECV ? "peer" : "root";
    if (coll == COLLIE_COLL_BARRIER)
        return COLLIE_OK;
    op->elem_size = collie__dtype_size(op->dtype);
    if (!op->elem_size)
        return invalid(comm, op, "dtype=%d is not a collie_dtype (COLLIE_FLOAT32..COLLIE_INT64)",
                       (int)op->dtype);
    if (reduces(coll) && ((unsigned)op->op > COLLIE_AVG))
        return invalid(comm, op, "op=%d is not a collie_op (COLLIE_SUM..COLLIE_AVG)", (int)op->op);
    if (rooted(coll) && (op->root < 0 || op->root >= comm->size))
        return invalid(comm, op, "%s=%d is outside [0, %d)", root_name, op->root, comm->size);
    if ((coll == COLLIE_COLL_SEND || coll == COLLIE_COLL_RECV) && op->root == comm->rank)
        return invalid(comm, op, "%s=%d is this rank: a blocking send to oneself cannot complete",
                       root_name, op->root);
    size_t send_bytes, recv_bytes;
    if (buffer_sizes(comm, op, &send_bytes, &recv_bytes) != 0)
        return invalid(comm, op, "count=%zu elements of %zu bytes overflow the address space",
                       op->count, op->elem_size);
    if (!op->count)
        return COLLIE_OK;
    int needs_recv = coll != COLLIE_COLL_SEND && coll != COLLIE_COLL_BROADCAST &&
                     (coll != COLLIE_COLL_REDUCE || op->root == comm->rank);
    int needs_send = coll != COLLIE_COLL_RECV;
    if (needs_send && !op->sendbuf)
        return invalid(comm, op, "%s is NULL but count is %zu",
                       coll == COLLIE_COLL_BROADCAST || coll == COLLIE_COLL_SEND ? "buf"
                                                                                 : "sendbuf",
                       op->count);
    if (needs_recv && !op->recvbuf)
        return invalid(comm, op, "%s is NULL but count is %zu",
                       coll == COLLIE_COLL_RECV ? "buf" : "recvbuf", op->count);
    /* (a neighbour gather's output size depends on its plan: api/neighbor.c checks it) */
    if (needs_send && needs_recv && op->sendbuf != op->recvbuf &&
        coll != COLLIE_COLL_NEIGHBOR_ALLGATHER) {
        /* The NCCL in-place forms point sendbuf/recvbuf at this rank's own block. */
        size_t own = (size_t)comm->rank * op->count * op->elem_size;
        const unsigned char *s = op->sendbuf, *r = op->recvbuf;
        int nccl_in_place = (coll == COLLIE_COLL_ALLGATHER && s == r + own) ||
                            (coll == COLLIE_COLL_REDUCE_SCATTER && r == s + own);
        if (!nccl_in_place && collie__overlaps(s, send_bytes, r, recv_bytes))
            return invalid(comm, op,
                           "sendbuf and recvbuf overlap without being the same buffer (in place "
                           "needs sendbuf == recvbuf)");
    }
    return COLLIE_OK;
}

collie_status collie__op_check(collie_comm *comm, struct collie__op *op)
{
    if (!comm) {
        collie__api_error("collie_%s: comm is NULL", collie__coll_name(op->desc.coll));
        return COLLIE_ERR_INVALID_ARG;
    }
    collie_status st = atomic_load(&comm->failed);
    if (st != COLLIE_OK)
        return st; /* last_error still says why */
    st = check_args(comm, op);
    enum collie__coll coll = op->desc.coll;
    /* A call that moves nothing touches no transport: a peer's abort reaches the next that does. */
    if (st == COLLIE_OK && (op->count || coll == COLLIE_COLL_BARRIER))
        st = collie__transports_check(comm);
    if (st != COLLIE_OK)
        return st;
    if (coll == COLLIE_COLL_ALLGATHER && op->count && op->sendbuf == op->recvbuf)
        op->sendbuf = (unsigned char *)op->recvbuf + (size_t)comm->rank * op->count * op->elem_size;
    /* The descriptor: what every rank's call must agree on (the sequence number comes later). */
    struct collie__op_desc *d = &op->desc;
    d->dtype = coll == COLLIE_COLL_BARRIER ? 0 : (uint8_t)op->dtype;
    d->op = coll == COLLIE_COLL_ALLREDUCE || coll == COLLIE_COLL_REDUCE ||
                    coll == COLLIE_COLL_REDUCE_SCATTER
                ? (uint8_t)op->op
                : 0;
    d->root = op->root;
    d->count = op->count;
    d->algo = COLLIE__ALGO_NONE;
    return COLLIE_OK;
}

/*
 * A neighbour operation: numbered apart from the other collectives (a rank
 * may finish several steps while a host peer that is not its neighbour is
 * still in an earlier one, so they must not advance the window's turns), and
 * kept off the window: its messages carry its number.
 */
static collie_status run_neighbor(collie_comm *comm, struct collie__op *op)
{
    struct collie__op_desc *d = &op->desc;
    d->seq = comm->nbr_seq++;
    const struct collie__algo *algo = collie__select(comm, op);
    d->algo = algo->wire;
    COLLIE_TRACE("coll", "neighbour #%u of %zu elements: %d in, %d out", d->seq, op->count,
                 op->nbr->nrecv, op->nbr->nsend);
    comm->cur = *d;
    collie_status st = algo->run(comm, op);
    if (st == COLLIE_OK)
        collie__count_op(comm, COLLIE_LANE_COLL, 1);
    return st;
}

collie_status collie__op_execute(collie_comm *comm, struct collie__op *op)
{
    enum collie__coll coll = op->desc.coll;
    enum collie__lane lane = collie__lane_of(coll);
    if (!op->count && coll != COLLIE_COLL_BARRIER) {
        collie__count_op(comm, lane, 1);
        return COLLIE_OK;
    }
    struct collie__op_desc *d = &op->desc;
    collie_status st;
    if (lane == COLLIE_LANE_P2P) {
        int send = coll == COLLIE_COLL_SEND;
        d->seq = 0;
        COLLIE_TRACE("p2p", "%s of %zu elements %s rank %d", collie__coll_name(coll), op->count,
                     send ? "to" : "from", op->root);
        st = collie__xfer_user(comm, d, op->root, send, send ? (void *)op->sendbuf : op->recvbuf,
                               op->count * op->elem_size);
        if (st == COLLIE_OK)
            collie__count_op(comm, lane, 1);
        return st;
    }
    if (coll == COLLIE_COLL_NEIGHBOR_ALLREDUCE || coll == COLLIE_COLL_NEIGHBOR_ALLGATHER)
        /* each rank waits only for its neighbours */
        return run_neighbor(comm, op);
    d->seq = comm->seq;
    if (comm->size == 1) { /* every collective of one rank is a copy, if anything */
        size_t bytes = coll == COLLIE_COLL_BARRIER ? 0 : op->count * op->elem_size;
        if (bytes && op->sendbuf != op->recvbuf)
            memcpy(op->recvbuf, op->sendbuf, bytes);
        comm->seq++;
        collie__count_op(comm, lane, 1);
        return COLLIE_OK;
    }
    op->stream_out = comm->nt_min && output_bytes(comm, op) >= comm->nt_min;
    op->stream_stage = comm->stage_stream > 0;
    const struct collie__algo *algo = collie__select(comm, op);
    d->algo = algo->wire;
    COLLIE_TRACE("coll", "#%u %s of %zu elements: %s", d->seq, collie__coll_name(coll), op->count,
                 algo->name);
    comm->cur = *d;
    collie__shm_begin(comm, d);
    comm->seq++;
    st = algo->run(comm, op);
    if (op->stream_out)
        collie__stream_fence();
    if (st == COLLIE_OK)
        collie__count_op(comm, lane, 1);
    return st;
}

/*
 * Fills every field one by one: a compound literal zeroes the whole struct
 * first (gcc: `rep stos`), whose stores the call's first loads of the
 * descriptor cannot forward from - a third of a zero-count call's time.
 */
static void make_op(struct collie__op *o, enum collie__coll coll, const void *sendbuf,
                    void *recvbuf, size_t count, collie_dtype dtype, collie_op op, int root)
{
    o->desc.seq = 0;
    o->desc.coll = (uint8_t)coll;
    o->desc.dtype = 0;
    o->desc.op = 0;
    o->desc.algo = 0;
    o->desc.root = root;
    o->desc.pad = 0;
    o->desc.count = 0;
    o->sendbuf = sendbuf;
    o->recvbuf = recvbuf;
    o->count = count;
    o->dtype = dtype;
    o->op = op;
    o->root = root;
    o->elem_size = 0;
    o->stream_out = 0;
    o->stream_stage = 0;
    o->nbr = NULL;
}

/*
 * Whether a blocking collective may return at once, counted: it moves
 * nothing (count 0, not a barrier), its arguments are valid and this rank
 * has not failed.  Not on a communicator that went non-blocking (its lane's
 * thread writes the same counters) or that records a timeline: those take
 * the full path, as does every invalid call, which says what was wrong.
 * Nothing is called on the way: measured in a loop at 1 rank, an empty
 * call took 18-31 ns through the full path, 5.0-8.1 here, where Open MPI's
 * MPI_Allgather took 6.9-11.
 */
static int empty_call(collie_comm *comm, enum collie__coll coll, size_t count, collie_dtype dtype,
                      collie_op op, int root)
{
    if (count || !comm || comm->api->async || comm->api->timeline_id ||
        coll == COLLIE_COLL_BARRIER || coll == COLLIE_COLL_SEND || coll == COLLIE_COLL_RECV ||
        (unsigned)dtype >= COLLIE__DTYPE_COUNT || (reduces(coll) && (unsigned)op > COLLIE_AVG) ||
        (rooted(coll) && (unsigned)root >= (unsigned)comm->size))
        return 0;
    return atomic_load(&comm->failed) == COLLIE_OK;
}

/* A blocking call: checked, then run in order with any pending requests. */
static collie_status start(collie_comm *comm, enum collie__coll coll, const void *sendbuf,
                           void *recvbuf, size_t count, collie_dtype dtype, collie_op op, int root)
{
    if (empty_call(comm, coll, count, dtype, op, root)) {
        collie__count_op(comm, COLLIE_LANE_COLL, 1);
        return COLLIE_OK;
    }
    struct collie__op o;
    make_op(&o, coll, sendbuf, recvbuf, count, dtype, op, root);
    collie_status st = collie__op_check(comm, &o);
    if (st != COLLIE_OK)
        return st;
    if (!collie__timeline_on())
        return collie__async_blocking(comm, &o);
    uint64_t t0 = collie__now_ns();
    st = collie__async_blocking(comm, &o);
    if (st != COLLIE_ERR_INVALID_ARG) /* refused calls did not run */
        collie__timeline_blocking(comm, &o, t0, collie__now_ns());
    return st;
}

static collie_status execute_request(collie_comm *comm, struct collie_request *r)
{
    return collie__op_execute(comm, &r->op);
}

/* A non-blocking call: checked now, queued on its lane. */
static collie_status istart(collie_comm *comm, enum collie__coll coll, const void *sendbuf,
                            void *recvbuf, size_t count, collie_dtype dtype, collie_op op, int root,
                            collie_request **req)
{
    struct collie__op o;
    make_op(&o, coll, sendbuf, recvbuf, count, dtype, op, root);
    if (!req) {
        collie__api_error("collie_i%s: req (the output pointer) is NULL", collie__coll_name(coll));
        if (comm)
            collie__fail(comm, COLLIE_ERR_INVALID_ARG, "collie_i%s: req is NULL",
                         collie__coll_name(coll));
        return COLLIE_ERR_INVALID_ARG;
    }
    *req = NULL;
    collie_status st = collie__op_check(comm, &o);
    return st == COLLIE_OK ? collie__async_issue(comm, &o, execute_request, NULL, req) : st;
}
collie_status collie_allreduce(collie_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               collie_dtype dtype, collie_op op)
{
    return start(comm, COLLIE_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, -1);
}

collie_status collie_broadcast(collie_comm *comm, void *buf, size_t count, collie_dtype dtype,
                               int root)
{
    return start(comm, COLLIE_COLL_BROADCAST, buf, buf, count, dtype, COLLIE_SUM, root);
}

collie_status collie_reduce(collie_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                            collie_dtype dtype, collie_op op, int root)
{
    return start(comm, COLLIE_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root);
}

collie_status collie_allgather(collie_comm *comm, const void *sendbuf, void *recvbuf,
                               size_t sendcount, collie_dtype dtype)
{
    return start(comm, COLLIE_COLL_ALLGATHER, sendbuf, recvbuf, sendcount, dtype, COLLIE_SUM, -1);
}

collie_status collie_reduce_scatter(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                    size_t recvcount, collie_dtype dtype, collie_op op)
{
    return start(comm, COLLIE_COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dtype, op, -1);
}

collie_status collie_alltoall(collie_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                              collie_dtype dtype)
{
    return start(comm, COLLIE_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, COLLIE_SUM, -1);
}

collie_status collie_barrier(collie_comm *comm)
{
    return start(comm, COLLIE_COLL_BARRIER, NULL, NULL, 0, COLLIE_FLOAT32, COLLIE_SUM, -1);
}

collie_status collie_send(collie_comm *comm, const void *buf, size_t count, collie_dtype dtype,
                          int peer)
{
    return start(comm, COLLIE_COLL_SEND, buf, NULL, count, dtype, COLLIE_SUM, peer);
}

collie_status collie_recv(collie_comm *comm, void *buf, size_t count, collie_dtype dtype, int peer)
{
    return start(comm, COLLIE_COLL_RECV, NULL, buf, count, dtype, COLLIE_SUM, peer);
}

collie_status collie_iallreduce(collie_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                                collie_dtype dtype, collie_op op, collie_request **req)
{
    return istart(comm, COLLIE_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, -1, req);
}

collie_status collie_ibroadcast(collie_comm *comm, void *buf, size_t count, collie_dtype dtype,
                                int root, collie_request **req)
{
    return istart(comm, COLLIE_COLL_BROADCAST, buf, buf, count, dtype, COLLIE_SUM, root, req);
}

collie_status collie_ireduce(collie_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             collie_dtype dtype, collie_op op, int root, collie_request **req)
{
    return istart(comm, COLLIE_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root, req);
}

collie_status collie_iallgather(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                size_t sendcount, collie_dtype dtype, collie_request **req)
{
    return istart(comm, COLLIE_COLL_ALLGATHER, sendbuf, recvbuf, sendcount, dtype, COLLIE_SUM, -1,
                  req);
}

collie_status collie_ireduce_scatter(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                     size_t recvcount, collie_dtype dtype, collie_op op,
                                     collie_request **req)
{
    return istart(comm, COLLIE_COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dtype, op, -1,
                  req);
}

collie_status collie_ialltoall(collie_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                               collie_dtype dtype, collie_request **req)
{
    return istart(comm, COLLIE_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, COLLIE_SUM, -1, req);
}

collie_status collie_ibarrier(collie_comm *comm, collie_request **req)
{
    return istart(comm, COLLIE_COLL_BARRIER, NULL, NULL, 0, COLLIE_FLOAT32, COLLIE_SUM, -1, req);
}

collie_status collie_isend(collie_comm *comm, const void *buf, size_t count, collie_dtype dtype,
                           int peer, collie_request **req)
{
    return istart(comm, COLLIE_COLL_SEND, buf, NULL, count, dtype, COLLIE_SUM, peer, req);
}

collie_status collie_irecv(collie_comm *comm, void *buf, size_t count, collie_dtype dtype, int peer,
                           collie_request **req)
{
    return istart(comm, COLLIE_COLL_RECV, NULL, buf, count, dtype, COLLIE_SUM, peer, req);
}
