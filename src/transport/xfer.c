/*
 * xfer.c - the message engine of xfer.h: framing, header checks, and driving
 * several transfers at once on whatever transports they use.
 *
 * Waiting: transfers that can move are moved; when none can, the caller
 * sleeps on what it waits for, so that oversubscribed ranks give their CPU
 * to the peers they wait on.  All-shared-memory waits use the ring's flag
 * (shm_wait.c: poll, yield, then futex).  Waits on sockets go straight to
 * poll(): measured between emulated hosts, a rank that polls its socket for
 * S microseconds receives the answer S + 8 us later (the packet's receive
 * processing waits for the polling CPU), while sleeping at once gives
 * 10-14 us.  A mix polls the sockets with a short timeout between looks at
 * the rings.
 */
#define _GNU_SOURCE
#include "xfer.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "shm.h"
#include "transport.h"
#include "../coll/algo.h"

#define WIRE_MAGIC 0x434c5733u     /* "CLW3" */
#define MIXED_POLL_MS 1            /* poll slice when rings and sockets are both pending */
#define TCP_POLL_MS 100            /* poll slice when only sockets are: abort checks between */

void collie__xfer_init(collie_comm *comm, struct collie__xfer *x, int peer, int send,
                       const void *buf, size_t len, enum collie__xfer_chan chan)
{
    x->peer = peer;
    x->send = send;
    x->chan = chan;
    x->buf = (unsigned char *)buf;
    x->len = len;
    x->t = comm->peer_transport[peer];
    x->nstripes = chan == COLLIE_XFER_USER ? 1 : x->t->stripes(comm, peer, len);
    x->left = x->nstripes;
    const struct collie__op_desc *d = &comm->cur;
    for (int k = 0; k < x->nstripes; k++) {
        size_t lo = len * (size_t)k / (size_t)x->nstripes;
        size_t hi = len * (size_t)(k + 1) / (size_t)x->nstripes;
        x->st[k] = (struct collie__xfer_stripe){.off = lo, .len = hi - lo};
        if (send)
            x->hdr[k] = (struct collie__wire){
                .magic = WIRE_MAGIC,
                .seq = chan == COLLIE_XFER_USER ? 0 : d->seq,
                .coll = d->coll,
                .dtype = d->dtype,
                .op = d->op,
                .stripe = (uint8_t)k,
                .algo = chan == COLLIE_XFER_USER ? 0 : comm->cur_algo,
                .root = chan == COLLIE_XFER_USER ? -1 : d->root,
                .count = d->count,
                .len = hi - lo,
            };
    }
}

collie_status collie__xfer_check(collie_comm *comm, const struct collie__xfer *x, int k)
{
    const struct collie__wire *h = &x->hdr[k];
    const struct collie__op_desc *d = &comm->cur;
    if (h->magic != WIRE_MAGIC)
        return collie__fail(comm, COLLIE_ERR_INTERNAL,
                            "rank %d: the stream from rank %d lost its framing (magic %#x): "
                            "does every rank run the same collie version?",
                            comm->rank, x->peer, h->magic);
    if (x->chan == COLLIE_XFER_USER) {
        if (h->coll == COLLIE_COLL_SEND && h->count == d->count && h->dtype == d->dtype)
            return COLLIE_OK;
        return collie__fail(comm, COLLIE_ERR_MISMATCH,
                            "rank %d called recv(count=%llu, %s) but rank %d sent "
                            "(count=%llu, %s)",
                            comm->rank, (unsigned long long)d->count,
                            collie__dtype_name(d->dtype), x->peer, (unsigned long long)h->count,
                            collie__dtype_name(h->dtype));
    }
    if (h->seq == d->seq && h->coll == d->coll && h->dtype == d->dtype && h->op == d->op &&
        h->root == d->root && h->count == d->count && h->stripe == k && h->len == x->st[k].len &&
        h->algo == comm->cur_algo)
        return COLLIE_OK;
    struct collie__op_desc theirs = {.seq = h->seq, .coll = h->coll, .dtype = h->dtype,
                                     .op = h->op, .root = h->root, .count = h->count};
    char mine[160], other[160];
    collie__op_describe(d, mine, sizeof mine);
    collie__op_describe(&theirs, other, sizeof other);
    if (h->seq == d->seq && h->coll == d->coll && h->count == d->count && h->algo != comm->cur_algo)
        return collie__fail(comm, COLLIE_ERR_MISMATCH,
                            "rank %d runs %s #%u with algorithm %s but rank %d with %s: give every "
                            "rank the same COLLIE_ALGO and COLLIE_NET_* settings",
                            comm->rank, mine, d->seq, collie__algo_name(comm->cur_algo), x->peer,
                            collie__algo_name(h->algo));
    if (h->seq == d->seq && h->coll == d->coll && h->count == d->count)
        return collie__fail(comm, COLLIE_ERR_MISMATCH,
                            "rank %d expected %zu bytes in stripe %d of a message of %s #%u from "
                            "rank %d, which sent %llu in stripe %u: do all ranks set the same "
                            "COLLIE_TCP_STREAMS, COLLIE_SHM_SLOT and COLLIE_ALGO?",
                            comm->rank, x->st[k].len, k, mine, d->seq, x->peer,
                            (unsigned long long)h->len, h->stripe);
    return collie__fail(comm, COLLIE_ERR_MISMATCH,
                        "rank %d called %s as collective #%u but rank %d called %s as #%u",
                        comm->rank, mine, d->seq, x->peer, other, h->seq);
}

/* Sleeps until one of the pending transfers may move, or a slice passes. */
static collie_status wait_some(collie_comm *comm, struct collie__xfer *x, int n)
{
    struct pollfd fds[2 * COLLIE_MAX_STREAMS + 2];
    int nfds = 0, shm_pending = 0;
    const struct collie__xfer *first_shm = NULL;
    for (int i = 0; i < n; i++) {
        if (!x[i].left)
            continue;
        if (x[i].t != &collie__tcp_transport) {
            shm_pending++;
            /* Receives first: a rank stuck sending waits for a peer that can always drain. */
            if (!first_shm || (first_shm->send && !x[i].send))
                first_shm = &x[i];
            continue;
        }
        for (int k = 0; k < x[i].nstripes && nfds < (int)(sizeof fds / sizeof *fds); k++)
            if (!collie__xfer_stripe_done(&x[i], k))
                collie__tcp_pollfd(comm, &x[i], k, &fds[nfds++]);
    }
    if (!nfds)
        return collie__shm_xfer_wait(comm, first_shm);
    collie_status st = collie__shm_check_abort(comm);
    if (st != COLLIE_OK)
        return st;
    if (poll(fds, (nfds_t)nfds, shm_pending ? MIXED_POLL_MS : TCP_POLL_MS) < 0 && errno != EINTR)
        return collie__fail(comm, COLLIE_ERR_SYSTEM, "rank %d: poll: %s", comm->rank,
                            strerror(errno));
    return COLLIE_OK;
}

/* Header and payload bytes x has moved so far, over all its stripes. */
static size_t moved_bytes(const struct collie__xfer *x)
{
    size_t bytes = 0;
    for (int k = 0; k < x->nstripes; k++)
        bytes += x->st[k].hdr_done + x->st[k].done;
    return bytes;
}

collie_status collie__xfer_run(collie_comm *comm, struct collie__xfer *x, int n)
{
    uint64_t timeout_ns = (uint64_t)(comm->timeout_s * 1e9);
    uint64_t last_move = collie__now_ns();
    for (;;) {
        int left = 0, moved = 0;
        for (int i = 0; i < n; i++) {
            if (!x[i].left)
                continue;
            size_t before = moved_bytes(&x[i]); /* a stripe only completes by moving bytes */
            collie_status st = x[i].t->progress(comm, &x[i]);
            if (st != COLLIE_OK)
                return st;
            moved |= moved_bytes(&x[i]) != before;
            left += x[i].left;
        }
        if (!left)
            return COLLIE_OK;
        uint64_t now = collie__now_ns();
        if (moved)
            last_move = now;
        else if (now - last_move >= timeout_ns) {
            const struct collie__xfer *w = NULL;
            for (int i = 0; i < n && !w; i++)
                w = x[i].left ? &x[i] : NULL;
            return collie__fail(comm, COLLIE_ERR_TIMEOUT,
                                "rank %d waited COLLIE_TIMEOUT=%.1f s for rank %d to %s %zu bytes "
                                "of %s #%u without progress",
                                comm->rank, comm->timeout_s, w->peer,
                                w->send ? "take" : "send", w->len,
                                collie__coll_name(comm->cur.coll), comm->cur.seq);
        }
        if (!moved) {
            collie_status st = wait_some(comm, x, n);
            if (st != COLLIE_OK)
                return st;
        }
    }
}

collie_status collie__sendrecv(collie_comm *comm, int to, const void *sbuf, size_t slen, int from,
                               void *rbuf, size_t rlen)
{
    struct collie__xfer x[2]; /* the send first: its bytes are on their way while we look */
    collie__xfer_init(comm, &x[0], to, 1, sbuf, slen, COLLIE_XFER_COLL);
    collie__xfer_init(comm, &x[1], from, 0, rbuf, rlen, COLLIE_XFER_COLL);
    return collie__xfer_run(comm, x, 2);
}

collie_status collie__xsend(collie_comm *comm, int to, const void *buf, size_t len)
{
    struct collie__xfer x;
    collie__xfer_init(comm, &x, to, 1, buf, len, COLLIE_XFER_COLL);
    return collie__xfer_run(comm, &x, 1);
}

collie_status collie__xrecv(collie_comm *comm, int from, void *buf, size_t len)
{
    struct collie__xfer x;
    collie__xfer_init(comm, &x, from, 0, buf, len, COLLIE_XFER_COLL);
    return collie__xfer_run(comm, &x, 1);
}
