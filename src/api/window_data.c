/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_data.c - what moves a window's data: deposits (put, accumulate),
 * gets, fences, and the local combines (update, collect).  A neighbour on
 * this host is written and read directly in its segment, under the box's
 * lock (window_shm.c); one on another host through messages to its
 * window's thread (window_service.c).  A published value's lock is never
 * held while waiting for another, so the box locks cannot deadlock.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../reduce/reduce.h"
#include "../transport/xfer.h"
#include "api.h"
#include "window.h"

collie_status collie__win_send(collie_win *win, const int *peers, int n, struct collie__win_msg *m,
                               const void *data, const double *weights)
{
    collie_comm *comm = win->comm;
    struct collie__op_desc md = collie__win_desc(win, COLLIE_WIN_DESC_MSG);
    struct collie__op_desc dd = collie__win_desc(win, COLLIE_WIN_DESC_DATA);
    struct collie__xfer *x = win->xfers;
    struct collie__win_msg *ms = win->msgs;
    int uniform = 1;
    for (int k = 1; weights && k < n; k++)
        uniform &= weights[k] == weights[0];
    /* One batch when every peer gets the same bytes; else one peer at a time. */
    int batch = uniform ? n : 1;
    collie_status st = COLLIE_OK;
    for (int lo = 0; lo < n && st == COLLIE_OK; lo += batch) {
        int hi = lo + batch;
        const void *bytes = data;
        double w = weights ? weights[lo] : 1.0;
        if (data && w != 1.0) {
            collie__scale(win->stage, win->dtype, data, win->dtype, w, win->count);
            bytes = win->stage;
        }
        for (int k = lo; k < hi; k++) { /* the messages first, then the data: one each per ring */
            ms[k - lo] = *m;
            ms[k - lo].weight = m->weight * (weights ? weights[k] : 1.0);
            collie__xfer_init(comm, &x[k - lo], &md, peers[k], 1, &ms[k - lo], sizeof *ms,
                              COLLIE_XFER_USER);
        }
        st = collie__xfer_run_all(comm, x, hi - lo);
        for (int k = lo; data && st == COLLIE_OK && k < hi; k++)
            collie__xfer_init(comm, &x[k - lo], &dd, peers[k], 1, bytes, win->bytes,
                              COLLIE_XFER_USER);
        if (data && st == COLLIE_OK)
            st = collie__xfer_run_all(comm, x, hi - lo);
    }
    return st;
}

static struct collie__win_msg message(const collie_win *win, enum collie__win_kind kind, double w)
{
    return (struct collie__win_msg){
        .magic = COLLIE_WIN_MAGIC, .kind = kind, .weight = w, .count = win->count};
}

/* A deposit into box b (this rank's mailbox at a neighbour of this host): w x buf, weight w p. */
static collie_status deposit_here(collie_win *win, struct collie__win_box *b,
                                  enum collie__win_kind kind, const void *buf, double w)
{
    collie_status st = collie__win_box_lock(win, b);
    if (st != COLLIE_OK)
        return st;
    unsigned char *data = collie__win_box_data(b);
    if (kind == COLLIE_WIN_PUT) {
        if (w == 1.0)
            memcpy(data, buf, win->bytes);
        else
            collie__scale(data, win->dtype, buf, win->dtype, w, win->count);
        b->weight = w * win->p;
    } else {
        collie__combine(data, data, 1.0, &buf, &w, 1, win->count, win->dtype, win->dtype);
        b->weight += w * win->p;
    }
    b->version++;
    collie__win_box_unlock(b);
    return COLLIE_OK;
}

static collie_status deposit(collie_win *win, const char *call, enum collie__win_kind kind,
                             const void *buf, const double *weights)
{
    collie_status st = collie__win_usable(win, call, buf, 1);
    if (st != COLLIE_OK)
        return st;
    if (!buf) /* an empty window */
        buf = win->stage;
    for (int k = 0; st == COLLIE_OK && k < win->nout; k++) {
        struct collie__win_box *b = collie__win_box_at(win, k);
        if (b)
            st = deposit_here(win, b, kind, buf, weights ? weights[k] : 1.0);
    }
    for (int i = 0; i < win->nremote_out; i++) {
        int k = win->remote_out[i];
        win->peers[i] = win->out[k];
        win->peer_w[i] = weights ? weights[k] : 1.0;
    }
    struct collie__win_msg m = message(win, kind, win->p);
    if (st == COLLIE_OK && win->nremote_out)
        st = collie__win_send(win, win->peers, win->nremote_out, &m, buf,
                              weights ? win->peer_w : NULL);
    if (st == COLLIE_OK && kind == COLLIE_WIN_PUT)
        st = collie__win_publish(win, buf);
    return st;
}

collie_status collie_win_put(collie_win *win, const void *buf, const double *weights)
{
    return deposit(win, "win_put", COLLIE_WIN_PUT, buf, weights);
}

collie_status collie_win_accumulate(collie_win *win, const void *buf, const double *weights)
{
    return deposit(win, "win_accumulate", COLLIE_WIN_ACC, buf, weights);
}

/* A get from in-neighbour d on this host: its published value into d's box here. */
static collie_status get_here(collie_win *win, int d)
{
    struct collie__win_box *mine = collie__win_box_in(win, d);
    struct collie__win_box *theirs = collie__win_box_theirs(win, d);
    collie_status st = collie__win_box_lock(win, mine);
    if (st != COLLIE_OK)
        return st;
    st = collie__win_box_lock(win, theirs);
    if (st == COLLIE_OK) {
        memcpy(collie__win_box_data(mine), collie__win_box_data(theirs), win->bytes);
        mine->weight = theirs->weight;
        collie__win_box_unlock(theirs);
    }
    collie__win_box_unlock(mine);
    return st;
}

/* Gets from the in-neighbours on other hosts: a request each, then every reply at once. */
static collie_status get_remote(collie_win *win)
{
    collie_comm *comm = win->comm;
    int n = win->nremote_in;
    size_t len = win->bytes + sizeof(struct collie__win_msg);
    unsigned char *replies = malloc((size_t)n * len);
    if (!replies)
        return collie__fail(comm, COLLIE_ERR_NOMEM,
                            "rank %d: no memory for %d replies of %zu bytes", comm->rank, n, len);
    for (int i = 0; i < n; i++)
        win->peers[i] = win->in[win->remote_in[i]];
    struct collie__win_msg m = message(win, COLLIE_WIN_GET, 0);
    collie_status st = collie__win_send(win, win->peers, n, &m, NULL, NULL);
    struct collie__op_desc rd = collie__win_desc(win, COLLIE_WIN_DESC_REPLY);
    for (int i = 0; st == COLLIE_OK && i < n; i++)
        collie__xfer_init(comm, &win->xfers[i], &rd, win->peers[i], 0, replies + (size_t)i * len,
                          len, COLLIE_XFER_COLL);
    if (st == COLLIE_OK)
        st = collie__xfer_run_all(comm, win->xfers, n);
    if (st == COLLIE_OK) {
        pthread_mutex_lock(&win->lock);
        for (int i = 0; i < n; i++) {
            int d = win->remote_in[i];
            struct collie__win_msg r;
            memcpy(&r, replies + (size_t)i * len + win->bytes, sizeof r);
            memcpy(win->front[d], replies + (size_t)i * len, win->bytes);
            win->front_p[d] = r.weight;
        }
        pthread_mutex_unlock(&win->lock);
    }
    free(replies);
    return st;
}

collie_status collie_win_get(collie_win *win)
{
    collie_status st = collie__win_usable(win, "win_get", NULL, 0);
    for (int d = 0; st == COLLIE_OK && d < win->nin; d++)
        if (collie__win_box_in(win, d))
            st = get_here(win, d);
    if (st == COLLIE_OK && win->nremote_in)
        st = get_remote(win);
    return st;
}

/*
 * Locks every mailbox (the window's lock, then each local box in order) and
 * reads the weights of the local ones into front_p; 0, or the failure with
 * nothing held.
 */
static collie_status lock_mailboxes(collie_win *win)
{
    pthread_mutex_lock(&win->lock);
    for (int d = 0; d < win->nin; d++) {
        struct collie__win_box *b = collie__win_box_in(win, d);
        if (!b)
            continue;
        collie_status st = collie__win_box_lock(win, b);
        if (st != COLLIE_OK) {
            while (d-- > 0)
                if (collie__win_box_in(win, d))
                    collie__win_box_unlock(collie__win_box_in(win, d));
            pthread_mutex_unlock(&win->lock);
            return st;
        }
        win->front_p[d] = b->weight;
    }
    return COLLIE_OK;
}

/* Unlocks what lock_mailboxes took; empty: the mailboxes are emptied first. */
static void unlock_mailboxes(collie_win *win, int empty)
{
    for (int d = 0; d < win->nin; d++) {
        struct collie__win_box *b = collie__win_box_in(win, d);
        if (empty) {
            memset(win->front[d], 0, win->bytes);
            win->front_p[d] = 0;
            if (b)
                b->weight = 0;
        }
        if (b)
            collie__win_box_unlock(b);
    }
    pthread_mutex_unlock(&win->lock);
}

collie_status collie_win_update(collie_win *win, void *buf)
{
    collie_status st = collie__win_usable(win, "win_update", buf, 1);
    if (st == COLLIE_OK)
        st = lock_mailboxes(win);
    if (st != COLLIE_OK)
        return st;
    double p = win->self_w * win->p;
    for (int d = 0; d < win->nin; d++)
        p += win->in_w[d] * win->front_p[d];
    collie__combine(buf, buf, win->self_w, (const void *const *)win->front, win->in_w, win->nin,
                    win->count, win->dtype, win->dtype);
    unlock_mailboxes(win, 0);
    win->p = p;
    return collie__win_publish(win, buf);
}

collie_status collie_win_collect(collie_win *win, void *buf, double self_weight)
{
    collie_status st = collie__win_usable(win, "win_collect", buf, 1);
    if (st != COLLIE_OK)
        return st;
    if (!isfinite(self_weight))
        return collie__refuse(win->comm, "win_collect", "self_weight=%g is not a finite number",
                              self_weight);
    st = lock_mailboxes(win);
    if (st != COLLIE_OK)
        return st;
    double p = self_weight * win->p;
    for (int d = 0; d < win->nin; d++)
        p += win->front_p[d];
    collie__combine(buf, buf, self_weight, (const void *const *)win->front, win->ones, win->nin,
                    win->count, win->dtype, win->dtype);
    unlock_mailboxes(win, 1);
    win->p = p;
    return collie__win_publish(win, buf);
}

collie_status collie_win_fence(collie_win *win)
{
    collie_status st = collie__win_usable(win, "win_fence", NULL, 0);
    if (st != COLLIE_OK)
        return st;
    struct collie__win_msg m = message(win, COLLIE_WIN_FENCE, 0);
    st = collie__win_send(win, win->out, win->nout, &m, NULL, NULL);
    if (st != COLLIE_OK)
        return st;
    unsigned long long gen = ++win->fenced;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)win->comm->timeout_s;
    atomic_fetch_add(&win->caller_waiting, 1);
    pthread_mutex_lock(&win->lock);
    int late = -1, err = 0;
    for (;;) {
        late = -1;
        for (int d = 0; d < win->nin && late < 0; d++)
            if (win->fences[d] < gen)
                late = d;
        if (late < 0 || win->failed != COLLIE_OK || !win->running || err == ETIMEDOUT)
            break;
        err = pthread_cond_timedwait(&win->changed, &win->lock, &until);
    }
    st = win->failed;
    pthread_mutex_unlock(&win->lock);
    atomic_fetch_sub(&win->caller_waiting, 1);
    if (st != COLLIE_OK || late < 0)
        return st;
    return collie__fail(win->comm, COLLIE_ERR_TIMEOUT,
                        "rank %d waited COLLIE_TIMEOUT=%.1f s in win_fence #%llu for rank %d's "
                        "marker (is it in the fence, with this rank among its out-neighbours?)",
                        win->comm->rank, win->comm->timeout_s, gen, win->in[late]);
}
