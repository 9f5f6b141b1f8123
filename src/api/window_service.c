/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_service.c - a window's thread: it hears every neighbour of the
 * window at once (one posted receive each), takes the deposits of the
 * other hosts into their mailboxes as they come, answers their get requests
 * with a snapshot of the published value, and counts fence markers (from
 * every in-neighbour: the local ones deposit straight into their boxes).  It owns the receiving side of
 * the window communicator's user channel and the sending side of its
 * collective channel (window.h), so it never races the caller.
 *
 * A deposit's data lands in the mailbox's back buffer, and becomes the
 * mailbox under the lock only once whole (a put swaps the buffers; an
 * accumulate adds the back into the front): the owner never sees part of a
 * deposit.  The thread never polls while its owner computes: it sleeps on
 * the transfer in progress (relooking every 100 us for the others), and
 * when idle on all of them, relooking ever more rarely up to every 10 ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../reduce/reduce.h"
#include "../transport/transport.h"
#include "../transport/xfer.h"
#include "window.h"

#define IDLE_MIN_NS 100000ull   /* relook after 100 us once something moved ... */
#define IDLE_MAX_NS 10000000ull /* ... doubling while nothing does, up to 10 ms */

/* One neighbour the thread hears: its posted receive and what arrived. */
struct ear {
    struct collie__win_msg msg;
    int data; /* receiving a deposit's data (else the next message) */
    int in;   /* index among the in-neighbours, or -1 */
    int out;  /* among the out-neighbours, or -1 */
};

struct service {
    collie_win *win;
    struct ear *ears;
    struct collie__xfer *x; /* one per ear */
    struct collie__op_desc msg_desc, data_desc, reply_desc;
    unsigned char *reply; /* a snapshot of the published value, for a get */
};

static void listen_msg(struct service *s, int i)
{
    s->ears[i].data = 0;
    collie__xfer_init(s->win->comm, &s->x[i], &s->msg_desc, s->win->listen[i], 0, &s->ears[i].msg,
                      sizeof s->ears[i].msg, COLLIE_XFER_USER);
}

static collie_status refuse_msg(collie_win *win, int peer, const struct collie__win_msg *m,
                                const char *why)
{
    return collie__fail(win->comm, COLLIE_ERR_MISMATCH,
                        "rank %d's window got a message (kind %u, count %llu) from rank %d that "
                        "%s: do both ranks use the same window, topology and count?",
                        win->comm->rank, m->kind, (unsigned long long)m->count, peer, why);
}

/* Sends the published value to the out-neighbour that asked for it. */
static collie_status reply(struct service *s, int peer)
{
    collie_win *win = s->win;
    struct collie__win_box *b = collie__win_box_published(win);
    collie_status st = collie__win_box_lock(win, b);
    if (st != COLLIE_OK)
        return st;
    struct collie__win_msg m = {.magic = COLLIE_WIN_MAGIC,
                                .kind = COLLIE_WIN_GET,
                                .weight = b->weight,
                                .count = win->count};
    memcpy(s->reply, collie__win_box_data(b), win->bytes);
    memcpy(s->reply + win->bytes, &m, sizeof m);
    collie__win_box_unlock(b);
    struct collie__xfer x;
    collie__xfer_init(win->comm, &x, &s->reply_desc, peer, 1, s->reply,
                      win->bytes + sizeof(struct collie__win_msg), COLLIE_XFER_COLL);
    return collie__xfer_run(win->comm, &x, 1);
}

/* A deposit's data is whole: it becomes the mailbox. */
static void deposit(collie_win *win, const struct ear *e)
{
    int d = e->in;
    pthread_mutex_lock(&win->lock);
    if (e->msg.kind == COLLIE_WIN_PUT) {
        unsigned char *t = win->front[d];
        win->front[d] = win->back[d];
        win->back[d] = t;
        win->front_p[d] = e->msg.weight;
    } else {
        static const double one = 1.0;
        const void *y = win->back[d];
        collie__combine(win->front[d], win->front[d], 1.0, &y, &one, 1, win->count, win->dtype,
                        win->dtype);
        win->front_p[d] += e->msg.weight;
    }
    win->deposits[d]++;
    pthread_mutex_unlock(&win->lock);
}

/* What ear i received is complete: act on it and listen again. */
static collie_status heard(struct service *s, int i)
{
    collie_win *win = s->win;
    struct ear *e = &s->ears[i];
    int peer = win->listen[i];
    if (e->data) {
        deposit(win, e);
        listen_msg(s, i);
        return COLLIE_OK;
    }
    const struct collie__win_msg *m = &e->msg;
    if (m->magic != COLLIE_WIN_MAGIC || m->count != win->count)
        return refuse_msg(win, peer, m, "is not of this window");
    switch (m->kind) {
    case COLLIE_WIN_PUT:
    case COLLIE_WIN_ACC:
        if (e->in < 0)
            return refuse_msg(win, peer, m, "deposits, but is not an in-neighbour");
        e->data = 1;
        collie__xfer_init(win->comm, &s->x[i], &s->data_desc, peer, 0, win->back[e->in], win->bytes,
                          COLLIE_XFER_USER);
        return COLLIE_OK;
    case COLLIE_WIN_GET: {
        if (e->out < 0)
            return refuse_msg(win, peer, m,
                              "asks for this rank's value, but is not an out-neighbour");
        collie_status st = reply(s, peer);
        listen_msg(s, i);
        return st;
    }
    case COLLIE_WIN_FENCE:
        if (e->in < 0)
            return refuse_msg(win, peer, m, "fences, but is not an in-neighbour");
        pthread_mutex_lock(&win->lock);
        win->fences[e->in]++;
        pthread_cond_broadcast(&win->changed);
        pthread_mutex_unlock(&win->lock);
        listen_msg(s, i);
        return COLLIE_OK;
    default: return refuse_msg(win, peer, m, "is of no known kind");
    }
}

/* Sleeps until something may move: on a deposit in progress, else on all, up to *idle_ns. */
static collie_status doze(struct service *s, uint64_t *idle_ns)
{
    collie_win *win = s->win;
    for (int i = 0; i < win->nlisten; i++)
        if (s->ears[i].data)
            return collie__xfer_sleep(win->comm, &s->x[i], 1,
                                      collie__now_ns() + COLLIE_XFER_RELOOK_NS);
    collie_status st =
        collie__xfer_sleep(win->comm, s->x, win->nlisten, collie__now_ns() + *idle_ns);
    *idle_ns = *idle_ns * 2 < IDLE_MAX_NS ? *idle_ns * 2 : IDLE_MAX_NS;
    return st;
}

static collie_status serve(struct service *s)
{
    collie_win *win = s->win;
    for (int i = 0; i < win->nlisten; i++)
        listen_msg(s, i);
    uint64_t idle_ns = IDLE_MIN_NS;
    while (!atomic_load(&win->stop)) {
        int moved = 0;
        collie_status st = collie__xfer_poll(win->comm, s->x, win->nlisten, &moved);
        for (int i = 0; st == COLLIE_OK && i < win->nlisten; i++)
            if (!s->x[i].left)
                st = heard(s, i);
        if (st == COLLIE_OK && !moved)
            st = doze(s, &idle_ns);
        else
            idle_ns = IDLE_MIN_NS;
        if (st != COLLIE_OK)
            return st;
    }
    return COLLIE_OK;
}

static void *service_main(void *arg)
{
    struct service *s = arg;
    collie_win *win = s->win;
    collie__wait_background(&win->caller_waiting);
    collie_status st = win->nlisten ? serve(s) : COLLIE_OK;
    pthread_mutex_lock(&win->lock);
    if (st != COLLIE_OK)
        win->failed = st;
    win->running = 0;
    pthread_cond_broadcast(&win->changed);
    pthread_mutex_unlock(&win->lock);
    free(s->reply);
    free(s->x);
    free(s->ears);
    free(s);
    return NULL;
}

collie_status collie__win_service_start(collie_win *win)
{
    struct service *s = calloc(1, sizeof *s);
    int n = win->nlisten;
    if (s) {
        s->win = win;
        s->ears = calloc((size_t)n + 1, sizeof *s->ears);
        s->x = calloc((size_t)n + 1, sizeof *s->x);
        s->reply = malloc(win->bytes + sizeof(struct collie__win_msg));
    }
    if (!s || !s->ears || !s->x || !s->reply) {
        if (s)
            free(s->reply), free(s->x), free(s->ears);
        free(s);
        return collie__fail(win->comm, COLLIE_ERR_NOMEM,
                            "rank %d: no memory for a window's thread (%d neighbours)",
                            win->comm->rank, n);
    }
    s->msg_desc = collie__win_desc(win, COLLIE_WIN_DESC_MSG);
    s->data_desc = collie__win_desc(win, COLLIE_WIN_DESC_DATA);
    s->reply_desc = collie__win_desc(win, COLLIE_WIN_DESC_REPLY);
    for (int i = 0; i < n; i++) {
        s->ears[i].in = collie__win_find(win->in, win->nin, win->listen[i]);
        s->ears[i].out = collie__win_find(win->out, win->nout, win->listen[i]);
    }
    win->running = 1;
    int err = pthread_create(&win->thread, NULL, service_main, s);
    if (err) {
        win->running = 0;
        free(s->reply), free(s->x), free(s->ears), free(s);
        return collie__fail(win->comm, COLLIE_ERR_SYSTEM, "rank %d: a window's thread: %s",
                            win->comm->rank, strerror(err));
    }
    win->started = 1;
    return COLLIE_OK;
}

void collie__win_service_stop(collie_win *win)
{
    if (!win->started)
        return;
    atomic_store(&win->stop, 1);
    pthread_join(win->thread, NULL);
    win->started = 0;
}
