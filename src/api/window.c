/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window.c - one-sided neighbour windows (collie.h's collie_win): making
 * and freeing one, and what it reports.  Creation splits off the window's
 * own communicator, maps the segments of the neighbours on this host
 * (window_shm.c), fills the mailboxes with the in-neighbours' initial
 * values (a neighbor_allgather) and starts the thread that takes the other
 * hosts' deposits in (window_service.c); the data move in window_data.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "window.h"

int collie__win_find(const int *list, int n, int r)
{
    for (int i = 0; i < n; i++)
        if (list[i] == r)
            return i;
    return -1;
}

struct collie__op_desc collie__win_desc(const collie_win *win, int what)
{
    switch (what) {
    case COLLIE_WIN_DESC_MSG:
        return (struct collie__op_desc){.coll = COLLIE_COLL_SEND,
                                        .dtype = COLLIE_UINT8,
                                        .count = sizeof(struct collie__win_msg)};
    case COLLIE_WIN_DESC_DATA:
        return (struct collie__op_desc){
            .coll = COLLIE_COLL_SEND, .dtype = (uint8_t)win->dtype, .count = win->count};
    default:
        return (struct collie__op_desc){.coll = COLLIE_COLL_WIN_GET,
                                        .dtype = (uint8_t)win->dtype,
                                        .count = win->count,
                                        .root = -1};
    }
}

collie_status collie__win_usable(collie_win *win, const char *call, const void *buf, int needs_buf)
{
    if (!win)
        return collie__refuse(NULL, call, "win is NULL");
    pthread_mutex_lock(&win->lock);
    collie_status st = win->failed; /* the thread's, or the communicator's: sticky */
    pthread_mutex_unlock(&win->lock);
    if (st == COLLIE_OK)
        st = atomic_load(&win->comm->failed);
    if (st != COLLIE_OK)
        return st;
    if (needs_buf && !buf && win->count)
        return collie__refuse(win->comm, call, "buf is NULL but the window holds %zu elements",
                              win->count);
    return COLLIE_OK;
}

collie_status collie__win_publish(collie_win *win, const void *buf)
{
    struct collie__win_box *b = collie__win_box_published(win);
    collie_status st = collie__win_box_lock(win, b);
    if (st != COLLIE_OK)
        return st;
    if (buf)
        memcpy(collie__win_box_data(b), buf, win->bytes);
    else
        memset(collie__win_box_data(b), 0, win->bytes);
    b->weight = win->p;
    collie__win_box_unlock(b);
    return COLLIE_OK;
}

static void release(collie_win *win)
{
    free(win->boxes);
    free(win->front);
    free(win->in);
    free(win->in_w);
    free(win->stage);
    free(win->front_p);
    free(win->deposits);
    free(win->remote_out);
    free(win->peer_w);
    free(win->xfers);
    free(win->msgs);
    pthread_mutex_destroy(&win->lock);
    pthread_cond_destroy(&win->changed);
    free(win);
}

/* Neighbour lists and per-neighbour state of a new window over topo; NULL when out of memory. */
static collie_win *make(const collie_topology *topo, int rank, size_t count, collie_dtype dtype)
{
    collie_win *win = calloc(1, sizeof *win);
    if (!win)
        return NULL;
    pthread_mutex_init(&win->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&win->changed, &ca);
    pthread_condattr_destroy(&ca);
    int n = collie_topology_size(topo);
    win->count = count;
    win->dtype = dtype;
    win->bytes = count * collie__dtype_size(dtype);
    win->p = 1.0;
    win->self_w = collie_topology_self_weight(topo, rank);
    win->in = malloc(3 * (size_t)n * sizeof *win->in); /* in, out, listen */
    win->in_w = malloc((size_t)n * sizeof *win->in_w);
    win->front = calloc(2 * (size_t)n + 1, sizeof *win->front);
    win->front_p = calloc((size_t)n + 1, sizeof *win->front_p);
    win->deposits = calloc(2 * (size_t)n + 1, sizeof *win->deposits);
    win->stage = malloc(win->bytes ? win->bytes : 1);
    win->remote_out = malloc(3 * (size_t)n * sizeof *win->remote_out); /* remote_out, _in, peers */
    win->peer_w = malloc(2 * (size_t)n * sizeof *win->peer_w);         /* peer_w, ones */
    win->xfers = malloc((size_t)n * sizeof *win->xfers);
    win->msgs = malloc((size_t)n * sizeof *win->msgs);
    if (!win->in || !win->in_w || !win->front || !win->front_p || !win->deposits || !win->stage ||
        !win->remote_out || !win->peer_w || !win->xfers || !win->msgs) {
        release(win);
        return NULL;
    }
    win->remote_in = win->remote_out + n;
    win->peers = win->remote_out + 2 * n;
    win->ones = win->peer_w + n;
    for (int d = 0; d < n; d++)
        win->ones[d] = 1.0;
    win->out = win->in + n;
    win->listen = win->in + 2 * n;
    win->fences = win->deposits + n;
    win->back = win->front + n;
    win->nin = collie_topology_in(topo, rank, win->in, win->in_w, n);
    win->nout = collie_topology_out(topo, rank, win->out, NULL, n);
    for (int k = 0; k < win->nin; k++)
        win->listen[win->nlisten++] = win->in[k];
    for (int k = 0; k < win->nout; k++)
        if (collie__win_find(win->in, win->nin, win->out[k]) < 0)
            win->listen[win->nlisten++] = win->out[k];
    return win;
}

/*
 * The mailboxes: a local in-neighbour's is its box in this rank's segment;
 * the others' a front and a back buffer here; and the lists of the
 * neighbours on other hosts.  Once the segment is open.
 */
static collie_status mailboxes(collie_win *win)
{
    for (int k = 0; k < win->nout; k++)
        if (!collie__win_box_at(win, k))
            win->remote_out[win->nremote_out++] = k;
    for (int d = 0; d < win->nin; d++)
        if (!collie__win_box_in(win, d))
            win->remote_in[win->nremote_in++] = d;
    int remote = win->nremote_in;
    win->boxes = calloc(2 * (size_t)remote * win->bytes + 1, 1);
    if (!win->boxes)
        return collie__fail(win->comm, COLLIE_ERR_NOMEM,
                            "rank %d: no memory for %d mailboxes of %zu bytes", win->comm->rank,
                            2 * remote, win->bytes);
    for (int d = 0, r = 0; d < win->nin; d++) {
        struct collie__win_box *b = collie__win_box_in(win, d);
        if (b) {
            win->front[d] = collie__win_box_data(b);
            continue;
        }
        win->front[d] = win->boxes + (size_t)r * win->bytes;
        win->back[d] = win->boxes + ((size_t)remote + r) * win->bytes;
        r++;
    }
    return COLLIE_OK;
}

/* Fills the mailboxes with the in-neighbours' init and weights (1, or 0 for NULL). */
static collie_status first_values(collie_win *win, const collie_topology *topo, const void *init)
{
    collie_comm *comm = win->comm;
    double w = init ? 1.0 : 0.0;
    unsigned char *all = malloc((size_t)win->nin * win->bytes + 1);
    if (!all)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for %d first values",
                            comm->rank, win->nin);
    collie_status st = collie_neighbor_allgather(comm, topo, &w, win->front_p, 1, COLLIE_FLOAT64);
    if (st == COLLIE_OK && win->count)
        st = collie_neighbor_allgather(comm, topo, init ? init : win->stage, all, win->count,
                                       win->dtype);
    for (int d = 0; st == COLLIE_OK && d < win->nin; d++) {
        memcpy(win->front[d], all + (size_t)d * win->bytes, win->bytes);
        struct collie__win_box *b = collie__win_box_in(win, d);
        if (b) /* nobody deposits before the create's last barrier */
            b->weight = win->front_p[d];
    }
    free(all);
    return st;
}

collie_status collie_win_create(collie_comm *comm, const collie_topology *topo, const void *init,
                                size_t count, collie_dtype dtype, collie_win **out)
{
    static const char *call = "win_create";
    if (!out)
        return collie__refuse(comm, call, "win (the output pointer) is NULL");
    *out = NULL;
    if (!comm)
        return collie__refuse(NULL, call, "comm is NULL");
    collie_status st = atomic_load(&comm->failed);
    if (st != COLLIE_OK)
        return st;
    if (!topo || collie_topology_size(topo) != comm->size)
        return collie__refuse(comm, call,
                              topo ? "the topology has %d nodes, the communicator %d ranks"
                                   : "topo is NULL (%d, %d)",
                              topo ? collie_topology_size(topo) : 0, comm->size);
    if (!collie__float_dtype(dtype))
        return collie__refuse(comm, call,
                              "dtype=%d: a window holds COLLIE_FLOAT32, FLOAT64, FLOAT16 or "
                              "BFLOAT16",
                              (int)dtype);
    if (count > SIZE_MAX / 8 / (size_t)(2 * comm->size + 4))
        return collie__refuse(comm, call, "count=%zu elements do not fit this process's memory",
                              count);
    collie_win *win = make(topo, comm->rank, count, dtype);
    if (!win)
        return collie__fail(comm, COLLIE_ERR_NOMEM,
                            "rank %d: no memory for a window of %zu elements (%d in-neighbours)",
                            comm->rank, count, collie_topology_in(topo, comm->rank, NULL, NULL, 0));
    st = collie_comm_split(comm, 0, comm->rank, &win->comm);
    if (st != COLLIE_OK) {
        release(win);
        return st;
    }
    if (!init)
        memset(win->stage, 0, win->bytes);
    st = collie__win_shm_open(win, topo);
    if (st == COLLIE_OK)
        st = mailboxes(win);
    if (st == COLLIE_OK)
        st = collie__win_publish(win, init);
    if (st == COLLIE_OK)
        st = first_values(win, topo, init);
    if (st == COLLIE_OK)
        st = collie__win_service_start(win);
    if (st == COLLIE_OK) /* every mailbox holds its first value before any deposit */
        st = collie_barrier(win->comm);
    if (st != COLLIE_OK) {
        collie__win_service_stop(win);
        collie__win_shm_close(win);
        collie_finalize(win->comm);
        release(win);
        return st;
    }
    *out = win;
    return COLLIE_OK;
}

double collie_win_weight(const collie_win *win) { return win ? win->p : NAN; }

const char *collie_win_last_error(const collie_win *win)
{
    return win ? collie_last_error(win->comm) : "";
}

int collie_win_deposits(const collie_win *win, unsigned long long *counts, int max)
{
    if (!win)
        return -1;
    collie_win *w = (collie_win *)win; /* the locks are the only thing written */
    for (int d = 0; counts && d < win->nin && d < max; d++) {
        struct collie__win_box *b = collie__win_box_in(w, d);
        if (b && collie__win_box_lock(w, b) == COLLIE_OK) {
            counts[d] = b->version;
            collie__win_box_unlock(b);
        } else if (!b) {
            pthread_mutex_lock(&w->lock);
            counts[d] = win->deposits[d];
            pthread_mutex_unlock(&w->lock);
        }
    }
    return win->nin;
}

collie_status collie_win_free(collie_win *win)
{
    if (!win)
        return COLLIE_OK;
    /* Nobody stops hearing before everyone has stopped talking, nor leaves before all stopped. */
    collie_status st = collie_barrier(win->comm);
    collie__win_service_stop(win);
    if (st == COLLIE_OK)
        st = collie_barrier(win->comm);
    collie__win_shm_close(win);
    collie_status fin = collie_finalize(win->comm);
    release(win);
    return st != COLLIE_OK ? st : fin;
}
