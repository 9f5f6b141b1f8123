/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp.c - the data path across hosts: messages (xfer.h) on non-blocking
 * sockets, striped over the pair's connections, moved by the calling thread.
 * A send is one sendmsg() of header and payload; a receive reads the header,
 * checks it, then reads the payload straight into its destination.
 *
 * The cause travels: a rank that fails the communicator sends each peer on
 * another host one last message, the failure's status and text (a header
 * with COLLIE_WIRE_CAUSE_MAGIC), on every connection where no message is
 * half written, before it shuts them.  A peer reads it where it expected a
 * header (or, when its send failed, finds it waiting) and fails with that
 * cause instead of "the connection closed", passing it on in turn: every
 * rank on every host names the first cause.
 *
 * With COLLIE_ENCRYPT=1 the same bytes travel sealed (seal.h): every read
 * and write of a connection goes through link_recv and link_send, and a
 * message that fails authentication fails the communicator with
 * COLLIE_ERR_AUTH.  Small messages then take the general path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "../core/log.h"
#include "../core/seal.h"
#include "../core/status.h"
#include "net.h"
#include "transport.h"

#define HDR sizeof(struct collie__wire)
#define SMALL_MSG 4096 /* received with their header in one recv() */
#define CAUSE_MAX 511  /* bytes of a failure's text in its last message */

/* Stripe k's connection, as an index into the net's tables. */
static size_t stripe_index(const collie_comm *comm, const struct collie__xfer *x, int k)
{
    return collie__net_index(comm, x->peer, x->chan == COLLIE_XFER_USER ? comm->net->streams : k);
}

static int stripe_fd(const collie_comm *comm, const struct collie__xfer *x, int k)
{
    return comm->net->fd[stripe_index(comm, x, k)];
}

/* Connection i's seal, or NULL: plain. */
static struct collie__seal *seal_of(const collie_comm *comm, size_t i)
{
    return comm->net->seal ? comm->net->seal[i] : NULL;
}

/* recv() and sendmsg() on connection i, non-blocking, sealed or not. */
static ssize_t link_recv(const collie_comm *comm, size_t i, void *buf, size_t len)
{
    struct collie__seal *s = seal_of(comm, i);
    return s ? collie__seal_recv(s, comm->net->fd[i], buf, len)
             : recv(comm->net->fd[i], buf, len, MSG_DONTWAIT);
}

static ssize_t link_send(const collie_comm *comm, size_t i, const struct iovec *iov, int n)
{
    struct collie__seal *s = seal_of(comm, i);
    if (s)
        return collie__seal_sendv(s, comm->net->fd[i], iov, n);
    struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
    return sendmsg(comm->net->fd[i], &m, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static collie_status lost(collie_comm *comm, const struct collie__xfer *x, const char *why)
{
    return collie__fail(comm, COLLIE_ERR_PEER_LOST,
                        "rank %d lost its connection to rank %d (another host) during %s #%u: %s",
                        comm->rank, x->peer, collie__coll_name(x->desc->coll), x->desc->seq, why);
}

/* A receive on x's connection failed with errno err. */
static collie_status recv_failed(collie_comm *comm, const struct collie__xfer *x, int err)
{
    if (err == EBADMSG)
        return collie__fail(comm, COLLIE_ERR_AUTH,
                            "rank %d refused what rank %d (another host) sent during %s #%u: it "
                            "failed authentication (COLLIE_ENCRYPT=1), so it was altered, "
                            "replayed, reordered or cut on the way",
                            comm->rank, x->peer, collie__coll_name(x->desc->coll), x->desc->seq);
    if (err == ENOMEM)
        return collie__fail(comm, COLLIE_ERR_NOMEM,
                            "rank %d has no memory for the records of its link to rank %d",
                            comm->rank, x->peer);
    return lost(comm, x, strerror(err));
}

static int relayable(uint32_t status)
{
    return status == COLLIE_ERR_TIMEOUT || status == COLLIE_ERR_PEER_LOST ||
           status == COLLIE_ERR_MISMATCH || status == COLLIE_ERR_NOMEM ||
           status == COLLIE_ERR_AUTH || status == COLLIE_ERR_SYSTEM ||
           status == COLLIE_ERR_INTERNAL || status == COLLIE_ERR_ABORTED;
}

/*
 * The peer's last message (header h, and nhave bytes of its text already
 * read): why it failed.  Adopted as this rank's cause and passed on.  A
 * report that is not one is the peer's loss, as a closed connection.
 */
static collie_status take_cause(collie_comm *comm, const struct collie__xfer *x, size_t i,
                                const struct collie__wire *h, const unsigned char *have,
                                size_t nhave)
{
    char text[CAUSE_MAX + 1];
    size_t len = (size_t)h->len, got = nhave;
    if (!relayable(h->coll) || len == 0 || len > CAUSE_MAX || nhave > len)
        return lost(comm, x, "it closed it after a failure report that is not one");
    if (nhave) /* have may be NULL when nothing was read with the header */
        memcpy(text, have, nhave);
    uint64_t deadline = collie__now_ns() + 1000000000ull; /* sent whole: it is on its way */
    while (got < len) {
        struct pollfd p = {comm->net->fd[i], POLLIN, 0};
        if (poll(&p, 1, collie__poll_ms(collie__now_ns(), deadline, 100)) == 0 &&
            collie__now_ns() >= deadline)
            return lost(comm, x, "its failure report stopped half-way");
        ssize_t r = link_recv(comm, i, text + got, len - got);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (r < 0 && errno == EBADMSG)
            return recv_failed(comm, x, errno);
        if (r <= 0)
            return lost(comm, x, "its failure report stopped half-way");
        got += (size_t)r;
    }
    text[len] = 0;
    for (size_t c = 0; c < len; c++)
        if ((unsigned char)text[c] < 0x20)
            return lost(comm, x, "it closed it after a failure report that is not text");
    /* Aborted there; here the peer is gone (the aborting rank's text names it). */
    collie_status status = h->coll == COLLIE_ERR_ABORTED ? COLLIE_ERR_PEER_LOST : h->coll;
    COLLIE_WARN("error", "%s: %s (the cause, from rank %d on another host)",
                collie__status_name(status), text, x->peer);
    return collie__fail_from_peer(comm, status, text);
}

/*
 * A send failed: if the peer's failure report is waiting, its cause; else
 * the loss.  Sealed, the report cannot be peeked at, and reading it would
 * race with a thread receiving on the connection: the loss, and the cause
 * comes to whoever receives.
 */
static collie_status send_failed(collie_comm *comm, const struct collie__xfer *x, size_t i,
                                 const char *why)
{
    unsigned char buf[HDR + CAUSE_MAX];
    struct collie__wire h;
    int fd = comm->net->fd[i];
    if (seal_of(comm, i))
        return lost(comm, x, why);
    ssize_t got = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (got >= (ssize_t)HDR) {
        memcpy(&h, buf, HDR);
        if (h.magic == COLLIE_WIRE_CAUSE_MAGIC && h.len <= CAUSE_MAX &&
            (size_t)got >= HDR + h.len && recv(fd, buf, HDR + h.len, MSG_DONTWAIT) > 0)
            return take_cause(comm, x, i, &h, buf + HDR, (size_t)h.len);
    }
    return lost(comm, x, why);
}

static collie_status send_claimed(collie_comm *comm, struct collie__xfer *x, int k, size_t i)
{
    struct collie__xfer_stripe *st = &x->st[k];
    while (!collie__xfer_stripe_done(x, k)) {
        struct iovec iov[2];
        int n = 0;
        if (st->hdr_done < HDR)
            iov[n++] =
                (struct iovec){(unsigned char *)&x->hdr[k] + st->hdr_done, HDR - st->hdr_done};
        if (st->done < st->len)
            iov[n++] = (struct iovec){x->buf + st->off + st->done, st->len - st->done};
        ssize_t sent = link_send(comm, i, iov, n);
        if (sent < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return COLLIE_OK;
            if (errno == EINTR)
                continue;
            if (errno == ENOMEM)
                return collie__fail(comm, COLLIE_ERR_NOMEM,
                                    "rank %d has no memory for the records of its link to rank %d",
                                    comm->rank, x->peer);
            return send_failed(comm, x, i, strerror(errno));
        }
        size_t h = HDR - st->hdr_done < (size_t)sent ? HDR - st->hdr_done : (size_t)sent;
        st->hdr_done += h;
        st->done += (size_t)sent - h;
        collie__count_sent(comm, (enum collie__lane)x->chan, (size_t)sent - h);
    }
    return COLLIE_OK;
}

/* Sends what it can of stripe k, holding its connection's claim meanwhile (net.h). */
static collie_status send_stripe(collie_comm *comm, struct collie__xfer *x, int k)
{
    struct collie__net *n = comm->net;
    size_t i = stripe_index(comm, x, k);
    unsigned char expect = COLLIE_NET_CLAIM_FREE;
    if (!atomic_compare_exchange_strong(&n->claim[i], &expect, COLLIE_NET_CLAIM_SENDING)) {
        if (expect == COLLIE_NET_CLAIM_SENDING)
            return COLLIE_OK; /* another thread's message: this one goes on after it */
        collie_status failed = atomic_load(&comm->failed); /* ended by the failure */
        return failed != COLLIE_OK ? failed : COLLIE_ERR_INTERNAL;
    }
    collie_status st = send_claimed(comm, x, k, i);
    n->mid[i] = (!collie__xfer_stripe_done(x, k) && (x->st[k].hdr_done || x->st[k].done)) ||
                (seal_of(comm, i) && collie__seal_sending(seal_of(comm, i)));
    atomic_store(&n->claim[i], COLLIE_NET_CLAIM_FREE);
    return st;
}

/*
 * A small message in one recv(): header and payload land in a bounce buffer,
 * the header is checked, then the payload is copied.  Returns 1 if it handled
 * the stripe (complete or partly), 0 to take the general path.
 */
static int recv_small(collie_comm *comm, struct collie__xfer *x, int k, int fd, collie_status *st)
{
    struct collie__xfer_stripe *s = &x->st[k];
    unsigned char bounce[HDR + SMALL_MSG];
    if (s->hdr_done || s->len > SMALL_MSG || seal_of(comm, stripe_index(comm, x, k)))
        return 0;
    ssize_t got = recv(fd, bounce, HDR + s->len, MSG_DONTWAIT);
    if (got <= 0)
        return 0; /* nothing yet, closed, or an error: the general path says which */
    size_t h = (size_t)got < HDR ? (size_t)got : HDR;
    memcpy(&x->hdr[k], bounce, h);
    s->hdr_done = h;
    *st = COLLIE_OK;
    if (h == HDR && x->hdr[k].magic == COLLIE_WIRE_CAUSE_MAGIC) {
        *st = take_cause(comm, x, stripe_index(comm, x, k), &x->hdr[k], bounce + HDR,
                         (size_t)got - HDR);
        return 1;
    }
    if (h == HDR) {
        *st = collie__wire_check(comm, x, k);
        if (*st == COLLIE_OK && (size_t)got > HDR) {
            memcpy(x->buf + s->off, bounce + HDR, (size_t)got - HDR);
            s->done = (size_t)got - HDR;
        }
    }
    return 1;
}

static collie_status recv_stripe(collie_comm *comm, struct collie__xfer *x, int k)
{
    struct collie__xfer_stripe *st = &x->st[k];
    size_t i = stripe_index(comm, x, k);
    collie_status small;
    if (recv_small(comm, x, k, comm->net->fd[i], &small) && small != COLLIE_OK)
        return small;
    while (!collie__xfer_stripe_done(x, k)) {
        int header = st->hdr_done < HDR;
        unsigned char *to =
            header ? (unsigned char *)&x->hdr[k] + st->hdr_done : x->buf + st->off + st->done;
        size_t want = header ? HDR - st->hdr_done : st->len - st->done;
        ssize_t got = link_recv(comm, i, to, want);
        if (got == 0)
            return lost(comm, x, "the peer closed it (it exited, or failed)");
        if (got < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return COLLIE_OK;
            if (errno == EINTR)
                continue;
            return recv_failed(comm, x, errno);
        }
        if (!header) {
            st->done += (size_t)got;
            continue;
        }
        st->hdr_done += (size_t)got;
        if (st->hdr_done == HDR && x->hdr[k].magic == COLLIE_WIRE_CAUSE_MAGIC)
            return take_cause(comm, x, i, &x->hdr[k], NULL, 0);
        if (st->hdr_done == HDR) {
            collie_status bad = collie__wire_check(comm, x, k);
            if (bad != COLLIE_OK)
                return bad;
        }
    }
    return COLLIE_OK;
}

static int tcp_stripes(const collie_comm *comm, int peer, size_t len)
{
    (void)peer;
    if (len < comm->net->stripe_min || comm->hosts.one_stream)
        return 1;
    return comm->net->streams;
}

static collie_status tcp_progress(collie_comm *comm, struct collie__xfer *x)
{
    for (int k = 0; k < x->nstripes; k++) {
        if (collie__xfer_stripe_done(x, k))
            continue;
        collie_status st = x->send ? send_stripe(comm, x, k) : recv_stripe(comm, x, k);
        if (st != COLLIE_OK)
            return st;
        if (collie__xfer_stripe_done(x, k))
            x->left--;
    }
    return COLLIE_OK;
}

static void tcp_pollfd(const collie_comm *comm, const struct collie__xfer *x, int k,
                       struct pollfd *p)
{
    *p = (struct pollfd){.fd = stripe_fd(comm, x, k), .events = x->send ? POLLOUT : POLLIN};
}

static uint64_t tcp_yield_ns(const collie_comm *comm) { return comm->net->yield_ns; }

static int tcp_reaches(const collie_comm *comm, int peer)
{
    return comm->net && collie__local_index(comm, peer) < 0;
}

/*
 * The first failure: each peer on another host gets the cause on every
 * connection that no thread is writing and where no message is half
 * written; then every connection is shut, so that they see it at once.
 */
static void tcp_abort(collie_comm *comm, collie_status status, const char *msg)
{
    struct collie__net *n = comm->net;
    struct {
        struct collie__wire h;
        char text[CAUSE_MAX];
    } cause = {.h = {.magic = COLLIE_WIRE_CAUSE_MAGIC, .coll = (uint8_t)status}};
    size_t len = strnlen(msg, CAUSE_MAX);
    memcpy(cause.text, msg, len);
    cause.h.len = len;
    for (int peer = 0; n && len && relayable(status) && peer < comm->size; peer++)
        for (int k = 0; k <= n->streams; k++) {
            size_t i = collie__net_index(comm, peer, k);
            unsigned char expect = COLLIE_NET_CLAIM_FREE;
            if (n->fd[i] >= 0 &&
                atomic_compare_exchange_strong(&n->claim[i], &expect, COLLIE_NET_CLAIM_ENDED) &&
                !n->mid[i]) /* best effort: one small message into an idle socket's buffer */
                link_send(comm, i, &(struct iovec){&cause, HDR + len}, 1);
        }
    collie__net_shutdown(comm); /* ranks on other hosts see the connections end at once */
}

const struct collie__transport collie__tcp_transport = {
    .name = "tcp",
    .open = collie__net_open,
    .close = collie__net_close,
    .reaches = tcp_reaches,
    .abort = tcp_abort,
    .check = NULL, /* a peer's failure shows as an ended connection, in progress() */
    .stripes = tcp_stripes,
    .progress = tcp_progress,
    .pollfd = tcp_pollfd,
    .yield_ns = tcp_yield_ns,
    .wait = NULL, /* waits in the engine's poll(): pollfd() */
};
