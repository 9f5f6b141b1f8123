/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer.c - the message engine of xfer.h: driving several transfers at once
 * on whatever transports they use.
 *
 * Waiting: transfers that can move are moved; when none can, the caller
 * sleeps on what it waits for, so that oversubscribed ranks give their CPU
 * to the peers they wait on.  Transfers whose transport has no file
 * descriptor (shared memory) wait in that transport's wait() (poll, yield,
 * then futex).  Waits on descriptors alone look at them and call
 * sched_yield in turn for up to COLLIE_YIELD_US, then sleep in poll(): the
 * answer is seen as soon as this rank runs again, where a sleeper waits for
 * the kernel to wake it, and a peer that needs this CPU gets it at the
 * yield.  Measured between emulated hosts, a 4-byte allreduce of 2 ranks
 * took 4.7 us where sleeping at once took 22.5, of 4 ranks on 2 cores 21 us
 * where it took 47.  COLLIE_YIELD_US=0 sleeps at
 * once, as before; so does a thread that waits beside the user's
 * computation (collie__wait_background).  A mix polls the descriptors with
 * a short timeout between looks at the others.
 */
#define _GNU_SOURCE
#include "xfer.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "transport.h"

#define MIXED_POLL_MS 1 /* poll slice when transfers without descriptors are pending too */
#define FD_POLL_MS 100  /* poll slice when only descriptors are: abort checks between */

void collie__xfer_init(collie_comm *comm, struct collie__xfer *x,
                       const struct collie__op_desc *desc, int peer, int send, const void *buf,
                       size_t len, enum collie__xfer_chan chan)
{
    x->desc = desc;
    x->peer = peer;
    x->send = send;
    x->chan = chan;
    x->buf = (unsigned char *)buf;
    x->len = len;
    x->t = collie__transport_of(comm, peer);
    x->nstripes = chan == COLLIE_XFER_USER ? 1 : x->t->stripes(comm, peer, len);
    x->left = x->nstripes;
    for (int k = 0; k < x->nstripes; k++) {
        size_t lo = len * (size_t)k / (size_t)x->nstripes;
        size_t hi = len * (size_t)(k + 1) / (size_t)x->nstripes;
        x->st[k] = (struct collie__xfer_stripe){.off = lo, .len = hi - lo};
        if (send)
            collie__wire_fill(x, k);
    }
}

/*
 * Looks at fds and yields the CPU in turn until one is ready or `end`:
 * poll()'s result (0: none), and 0 at once after a yield that ran another
 * thread's slice (COLLIE__YIELD_LOST_NS): the caller then sleeps.
 */
static int look_and_yield(struct pollfd *fds, int nfds, uint64_t end)
{
    for (uint64_t now = collie__now_ns();;) {
        int ready = poll(fds, (nfds_t)nfds, 0);
        if (ready != 0 || now >= end)
            return ready;
        sched_yield();
        uint64_t then = now;
        now = collie__now_ns();
        if (now - then > COLLIE__YIELD_LOST_NS)
            return 0;
    }
}

/*
 * Sleeps until one of the pending transfers may move, or a slice passes, or
 * until_ns (0: a wait without descriptors fails at its own COLLIE_TIMEOUT).
 */
static collie_status wait_some(collie_comm *comm, struct collie__xfer *x, int n, uint64_t until_ns)
{
    struct pollfd fds[2 * COLLIE_MAX_STREAMS + 2];
    int nfds = 0, fdless = 0;
    uint64_t yield_ns = 0; /* the longest of the transports' with descriptors */
    const struct collie__xfer *first_fdless = NULL;
    for (int i = 0; i < n; i++) {
        if (!x[i].left)
            continue;
        if (!x[i].t->pollfd) {
            fdless++;
            /* Receives first: a rank stuck sending waits for a peer that can always drain. */
            if (!first_fdless || (first_fdless->send && !x[i].send))
                first_fdless = &x[i];
            continue;
        }
        uint64_t y = x[i].t->yield_ns(comm);
        yield_ns = y > yield_ns ? y : yield_ns;
        for (int k = 0; k < x[i].nstripes && nfds < (int)(sizeof fds / sizeof *fds); k++)
            if (!collie__xfer_stripe_done(&x[i], k))
                x[i].t->pollfd(comm, &x[i], k, &fds[nfds++]);
    }
    if (!nfds)
        return first_fdless->t->wait(comm, first_fdless, until_ns);
    collie_status st = collie__transports_check(comm);
    if (st != COLLIE_OK)
        return st;
    int ready = 0;
    if (!fdless && yield_ns && collie__wait_may_poll()) {
        uint64_t end = collie__now_ns() + yield_ns;
        ready = look_and_yield(fds, nfds, until_ns && until_ns < end ? until_ns : end);
    }
    if (!ready) {
        int ms = fdless ? MIXED_POLL_MS : FD_POLL_MS;
        if (until_ns)
            ms = collie__poll_ms(collie__now_ns(), until_ns, ms);
        ready = poll(fds, (nfds_t)nfds, ms);
    }
    if (ready < 0 && errno != EINTR)
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

collie_status collie__xfer_poll(collie_comm *comm, struct collie__xfer *x, int n, int *moved)
{
    *moved = 0;
    for (int i = 0; i < n; i++) {
        if (!x[i].left)
            continue;
        size_t before = moved_bytes(&x[i]); /* a stripe only completes by moving bytes */
        collie_status st = x[i].t->progress(comm, &x[i]);
        if (st != COLLIE_OK)
            return st;
        *moved |= moved_bytes(&x[i]) != before;
    }
    return COLLIE_OK;
}

collie_status collie__xfer_sleep(collie_comm *comm, struct collie__xfer *x, int n,
                                 uint64_t until_ns)
{
    return wait_some(comm, x, n, until_ns);
}

collie_status collie__xfer_stalled(collie_comm *comm, const struct collie__xfer *x, int n)
{
    const struct collie__xfer *w = NULL;
    for (int i = 0; i < n && !w; i++)
        w = x[i].left ? &x[i] : NULL;
    if (!w)
        return collie__fail(comm, COLLIE_ERR_TIMEOUT,
                            "rank %d waited COLLIE_TIMEOUT=%.1f s without progress", comm->rank,
                            comm->timeout_s);
    return collie__fail(comm, COLLIE_ERR_TIMEOUT,
                        "rank %d waited COLLIE_TIMEOUT=%.1f s for rank %d to %s %zu bytes of %s "
                        "#%u without progress",
                        comm->rank, comm->timeout_s, w->peer, w->send ? "take" : "send", w->len,
                        collie__coll_name(w->desc->coll), w->desc->seq);
}

/* xfer_run's loop; relook_ns > 0: with several transfers pending, a wait looks again this often. */
static collie_status run(collie_comm *comm, struct collie__xfer *x, int n, uint64_t relook_ns)
{
    uint64_t stalled_since = 0;
    for (;;) {
        int left = 0, moved = 0;
        collie_status st = collie__xfer_poll(comm, x, n, &moved);
        if (st != COLLIE_OK)
            return st;
        for (int i = 0; i < n; i++)
            left += x[i].left;
        if (!left)
            return COLLIE_OK;
        if (moved) {
            stalled_since = 0;
            continue;
        }
        if (collie__xfer_timed_out(comm, &stalled_since))
            return collie__xfer_stalled(comm, x, n);
        st = wait_some(comm, x, n, relook_ns && left > 1 ? collie__now_ns() + relook_ns : 0);
        if (st != COLLIE_OK)
            return st;
    }
}

collie_status collie__xfer_run(collie_comm *comm, struct collie__xfer *x, int n)
{
    return run(comm, x, n, 0);
}

collie_status collie__xfer_run_all(collie_comm *comm, struct collie__xfer *x, int n)
{
    return run(comm, x, n, COLLIE_XFER_RELOOK_NS);
}

collie_status collie__xfer_sendrecv(collie_comm *comm, int to, const void *sbuf, size_t slen,
                                    int from, void *rbuf, size_t rlen)
{
    struct collie__xfer x[2]; /* the send first: its bytes are on their way while we look */
    collie__xfer_init(comm, &x[0], &comm->cur, to, 1, sbuf, slen, COLLIE_XFER_COLL);
    collie__xfer_init(comm, &x[1], &comm->cur, from, 0, rbuf, rlen, COLLIE_XFER_COLL);
    return collie__xfer_run(comm, x, 2);
}

collie_status collie__xfer_send(collie_comm *comm, int to, const void *buf, size_t len)
{
    struct collie__xfer x;
    collie__xfer_init(comm, &x, &comm->cur, to, 1, buf, len, COLLIE_XFER_COLL);
    return collie__xfer_run(comm, &x, 1);
}

collie_status collie__xfer_recv(collie_comm *comm, int from, void *buf, size_t len)
{
    struct collie__xfer x;
    collie__xfer_init(comm, &x, &comm->cur, from, 0, buf, len, COLLIE_XFER_COLL);
    return collie__xfer_run(comm, &x, 1);
}

collie_status collie__xfer_user(collie_comm *comm, const struct collie__op_desc *desc, int peer,
                                int send, void *buf, size_t len)
{
    struct collie__xfer x;
    collie__xfer_init(comm, &x, desc, peer, send, buf, len, COLLIE_XFER_USER);
    return collie__xfer_run(comm, &x, 1);
}
