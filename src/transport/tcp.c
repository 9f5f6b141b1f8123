/*
 * tcp.c - the data path across hosts: messages (xfer.h) on non-blocking
 * sockets, striped over the pair's connections, moved by the calling thread.
 * A send is one sendmsg() of header and payload; a receive reads the header,
 * checks it, then reads the payload straight into its destination.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "net.h"
#include "transport.h"

#define HDR sizeof(struct collie__wire)
#define SMALL_MSG 4096 /* received with their header in one recv() */

static int stripe_fd(const collie_comm *comm, const struct collie__xfer *x, int k)
{
    return collie__net_fd(comm, x->peer, x->chan == COLLIE_XFER_USER ? comm->net->streams : k);
}

static collie_status lost(collie_comm *comm, const struct collie__xfer *x, const char *why)
{
    return collie__fail(comm, COLLIE_ERR_PEER_LOST,
                        "rank %d lost its connection to rank %d (another host) during %s #%u: %s",
                        comm->rank, x->peer, collie__coll_name(x->desc->coll), x->desc->seq, why);
}

static collie_status send_stripe(collie_comm *comm, struct collie__xfer *x, int k)
{
    struct collie__xfer_stripe *st = &x->st[k];
    int fd = stripe_fd(comm, x, k);
    while (!collie__xfer_stripe_done(x, k)) {
        struct iovec iov[2];
        int n = 0;
        if (st->hdr_done < HDR)
            iov[n++] =
                (struct iovec){(unsigned char *)&x->hdr[k] + st->hdr_done, HDR - st->hdr_done};
        if (st->done < st->len)
            iov[n++] = (struct iovec){x->buf + st->off + st->done, st->len - st->done};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t sent = sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return COLLIE_OK;
            if (errno == EINTR)
                continue;
            return lost(comm, x, strerror(errno));
        }
        size_t h = HDR - st->hdr_done < (size_t)sent ? HDR - st->hdr_done : (size_t)sent;
        st->hdr_done += h;
        st->done += (size_t)sent - h;
        collie__count_sent(comm, (enum collie__lane)x->chan, (size_t)sent - h);
    }
    return COLLIE_OK;
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
    if (s->hdr_done || s->len > SMALL_MSG)
        return 0;
    ssize_t got = recv(fd, bounce, HDR + s->len, MSG_DONTWAIT);
    if (got <= 0)
        return 0; /* nothing yet, closed, or an error: the general path says which */
    size_t h = (size_t)got < HDR ? (size_t)got : HDR;
    memcpy(&x->hdr[k], bounce, h);
    s->hdr_done = h;
    *st = COLLIE_OK;
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
    int fd = stripe_fd(comm, x, k);
    collie_status small;
    if (recv_small(comm, x, k, fd, &small) && small != COLLIE_OK)
        return small;
    while (!collie__xfer_stripe_done(x, k)) {
        int header = st->hdr_done < HDR;
        unsigned char *to =
            header ? (unsigned char *)&x->hdr[k] + st->hdr_done : x->buf + st->off + st->done;
        size_t want = header ? HDR - st->hdr_done : st->len - st->done;
        ssize_t got = recv(fd, to, want, MSG_DONTWAIT);
        if (got == 0)
            return lost(comm, x, "the peer closed it (it exited, or failed)");
        if (got < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return COLLIE_OK;
            if (errno == EINTR)
                continue;
            return lost(comm, x, strerror(errno));
        }
        if (!header) {
            st->done += (size_t)got;
            continue;
        }
        st->hdr_done += (size_t)got;
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
    return len >= comm->net->stripe_min ? comm->net->streams : 1;
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

static int tcp_reaches(const collie_comm *comm, int peer)
{
    return comm->net && collie__local_index(comm, peer) < 0;
}

static void tcp_abort(collie_comm *comm, collie_status status, const char *msg)
{
    (void)status, (void)msg;
    collie__net_shutdown(comm); /* ranks on other hosts see the connections end at once */
}

static collie_status tcp_check(collie_comm *comm)
{
    (void)comm; /* a peer's failure shows as an ended connection, in progress() */
    return COLLIE_OK;
}

const struct collie__transport collie__tcp_transport = {
    .name = "tcp",
    .open = collie__net_open,
    .close = collie__net_close,
    .reaches = tcp_reaches,
    .abort = tcp_abort,
    .check = tcp_check,
    .stripes = tcp_stripes,
    .progress = tcp_progress,
    .pollfd = tcp_pollfd,
    .wait = NULL, /* waits in the engine's poll(): pollfd() */
};
