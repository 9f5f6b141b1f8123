/*
 * window.c - one-sided neighbour windows (collie.h's collie_win): the
 * public calls.  Creation splits off the window's own communicator and
 * fills the mailboxes with the in-neighbours' initial values (a
 * neighbor_allgather); deposits, get requests and fence markers are
 * messages to the owners' service threads (window_service.c); update and
 * collect are local, under the window's lock.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../reduce/reduce.h"
#include "../transport/xfer.h"
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

/* The thread's failure, or the window communicator's: what every call returns once failed. */
static collie_status failed(collie_win *win)
{
    pthread_mutex_lock(&win->lock);
    collie_status st = win->failed;
    pthread_mutex_unlock(&win->lock);
    if (st == COLLIE_OK)
        st = atomic_load(&win->comm->failed);
    return st;
}

static void release(collie_win *win)
{
    free(win->boxes);
    free(win->front);
    free(win->in);
    free(win->in_w);
    free(win->stage);
    free(win->published);
    free(win->front_p);
    free(win->deposits);
    pthread_mutex_destroy(&win->lock);
    pthread_cond_destroy(&win->changed);
    free(win);
}

/* Neighbour lists and buffers of a new window over topo; NULL when out of memory. */
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
    win->published = malloc(win->bytes + sizeof(struct collie__win_msg));
    win->stage = malloc(win->bytes ? win->bytes : 1);
    if (!win->in || !win->in_w || !win->front || !win->front_p || !win->deposits ||
        !win->published || !win->stage) {
        release(win);
        return NULL;
    }
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
    win->boxes = calloc(2 * (size_t)win->nin * win->bytes + 1, 1);
    if (!win->boxes) {
        release(win);
        return NULL;
    }
    for (int d = 0; d < win->nin; d++) {
        win->front[d] = win->boxes + (size_t)d * win->bytes;
        win->back[d] = win->boxes + ((size_t)win->nin + d) * win->bytes;
    }
    return win;
}

/* Sets the published value (count elements, or zeros) and its weight; under the lock. */
static void publish(collie_win *win, const void *buf)
{
    struct collie__win_msg m = {
        .magic = COLLIE_WIN_MAGIC, .kind = COLLIE_WIN_GET, .weight = win->p, .count = win->count};
    pthread_mutex_lock(&win->lock);
    if (buf)
        memcpy(win->published, buf, win->bytes);
    else
        memset(win->published, 0, win->bytes);
    memcpy(win->published + win->bytes, &m, sizeof m);
    pthread_mutex_unlock(&win->lock);
}

/* Fills the mailboxes with the in-neighbours' init and weights (1, or 0 for NULL). */
static collie_status first_values(collie_win *win, const collie_topology *topo, const void *init)
{
    collie_comm *comm = win->comm;
    double w = init ? 1.0 : 0.0;
    collie_status st = collie_neighbor_allgather(comm, topo, &w, win->front_p, 1, COLLIE_FLOAT64);
    if (st != COLLIE_OK || !win->count)
        return st;
    return collie_neighbor_allgather(comm, topo, win->published, win->boxes, win->count,
                                     win->dtype); /* the fronts, in order */
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
    if (dtype != COLLIE_FLOAT32 && dtype != COLLIE_FLOAT64 && dtype != COLLIE_FLOAT16 &&
        dtype != COLLIE_BFLOAT16)
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
    publish(win, init);
    st = first_values(win, topo, init);
    if (st == COLLIE_OK)
        st = collie__win_service_start(win);
    if (st != COLLIE_OK) {
        collie_finalize(win->comm);
        release(win);
        return st;
    }
    *out = win;
    return COLLIE_OK;
}

/* Common checks of a call on a window; COLLIE_OK to go on. */
static collie_status usable(collie_win *win, const char *call, const void *buf, int needs_buf)
{
    if (!win)
        return collie__refuse(NULL, call, "win is NULL");
    collie_status st = failed(win);
    if (st != COLLIE_OK)
        return st;
    if (needs_buf && !buf && win->count)
        return collie__refuse(win->comm, call, "buf is NULL but the window holds %zu elements",
                              win->count);
    return COLLIE_OK;
}

/* Sends msg (and, for a deposit, data: or stage scaled per neighbour) to each of n peers. */
static collie_status send_all(collie_win *win, const int *peers, int n, struct collie__win_msg *m,
                              const void *data, const double *weights)
{
    collie_comm *comm = win->comm;
    struct collie__op_desc md = collie__win_desc(win, COLLIE_WIN_DESC_MSG);
    struct collie__op_desc dd = collie__win_desc(win, COLLIE_WIN_DESC_DATA);
    int uniform = 1;
    for (int k = 1; weights && k < n; k++)
        uniform &= weights[k] == weights[0];
    /* One batch when every peer gets the same bytes; else one peer at a time. */
    int batch = uniform ? n : 1;
    struct collie__xfer *x = malloc(((size_t)batch + 1) * sizeof *x);
    struct collie__win_msg *ms = malloc(((size_t)batch + 1) * sizeof *ms);
    if (!x || !ms) {
        free(x), free(ms);
        return collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory to send to %d neighbours",
                            comm->rank, n);
    }
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
    free(x), free(ms);
    return st;
}

static struct collie__win_msg message(const collie_win *win, enum collie__win_kind kind, double w)
{
    return (struct collie__win_msg){
        .magic = COLLIE_WIN_MAGIC, .kind = kind, .weight = w, .count = win->count};
}

static collie_status deposit(collie_win *win, const char *call, enum collie__win_kind kind,
                             const void *buf, const double *weights)
{
    collie_status st = usable(win, call, buf, 1);
    if (st != COLLIE_OK)
        return st;
    struct collie__win_msg m = message(win, kind, win->p);
    st = send_all(win, win->out, win->nout, &m, buf ? buf : win->published, weights);
    if (st == COLLIE_OK && kind == COLLIE_WIN_PUT)
        publish(win, buf);
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

collie_status collie_win_get(collie_win *win)
{
    collie_status st = usable(win, "win_get", NULL, 0);
    if (st != COLLIE_OK || !win->nin)
        return st;
    collie_comm *comm = win->comm;
    size_t len = win->bytes + sizeof(struct collie__win_msg);
    struct collie__xfer *x = malloc((size_t)win->nin * sizeof *x);
    if (!x)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for a get", comm->rank);
    struct collie__win_msg m = message(win, COLLIE_WIN_GET, 0);
    st = send_all(win, win->in, win->nin, &m, NULL, NULL);
    /* The replies land in the back buffers (each one longer by its message: a block of len). */
    unsigned char *replies = st == COLLIE_OK ? malloc((size_t)win->nin * len) : NULL;
    if (st == COLLIE_OK && !replies)
        st = collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for %d replies", comm->rank,
                          win->nin);
    struct collie__op_desc rd = collie__win_desc(win, COLLIE_WIN_DESC_REPLY);
    for (int d = 0; st == COLLIE_OK && d < win->nin; d++)
        collie__xfer_init(comm, &x[d], &rd, win->in[d], 0, replies + (size_t)d * len, len,
                          COLLIE_XFER_COLL);
    if (st == COLLIE_OK)
        st = collie__xfer_run_all(comm, x, win->nin);
    if (st == COLLIE_OK) {
        pthread_mutex_lock(&win->lock);
        for (int d = 0; d < win->nin; d++) {
            struct collie__win_msg r;
            memcpy(&r, replies + (size_t)d * len + win->bytes, sizeof r);
            memcpy(win->front[d], replies + (size_t)d * len, win->bytes);
            win->front_p[d] = r.weight;
        }
        pthread_mutex_unlock(&win->lock);
    }
    free(replies);
    free(x);
    return st;
}

collie_status collie_win_update(collie_win *win, void *buf)
{
    collie_status st = usable(win, "win_update", buf, 1);
    if (st != COLLIE_OK)
        return st;
    pthread_mutex_lock(&win->lock);
    double p = win->self_w * win->p;
    for (int d = 0; d < win->nin; d++) {
        p += win->in_w[d] * win->front_p[d];
    }
    collie__combine(buf, buf, win->self_w, (const void *const *)win->front, win->in_w, win->nin,
                    win->count, win->dtype, win->dtype);
    pthread_mutex_unlock(&win->lock);
    win->p = p;
    publish(win, buf);
    return COLLIE_OK;
}

collie_status collie_win_collect(collie_win *win, void *buf, double self_weight)
{
    collie_status st = usable(win, "win_collect", buf, 1);
    if (st != COLLIE_OK)
        return st;
    if (!isfinite(self_weight))
        return collie__refuse(win->comm, "win_collect", "self_weight=%g is not a finite number",
                              self_weight);
    double *ones = malloc(((size_t)win->nin + 1) * sizeof *ones);
    if (!ones)
        return collie__fail(win->comm, COLLIE_ERR_NOMEM, "rank %d: no memory for a collect",
                            win->comm->rank);
    pthread_mutex_lock(&win->lock);
    double p = self_weight * win->p;
    for (int d = 0; d < win->nin; d++) {
        ones[d] = 1.0;
        p += win->front_p[d];
    }
    collie__combine(buf, buf, self_weight, (const void *const *)win->front, ones, win->nin,
                    win->count, win->dtype, win->dtype);
    for (int d = 0; d < win->nin; d++) {
        memset(win->front[d], 0, win->bytes);
        win->front_p[d] = 0;
    }
    pthread_mutex_unlock(&win->lock);
    free(ones);
    win->p = p;
    publish(win, buf);
    return COLLIE_OK;
}

collie_status collie_win_fence(collie_win *win)
{
    collie_status st = usable(win, "win_fence", NULL, 0);
    if (st != COLLIE_OK)
        return st;
    struct collie__win_msg m = message(win, COLLIE_WIN_FENCE, 0);
    st = send_all(win, win->out, win->nout, &m, NULL, NULL);
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

double collie_win_weight(const collie_win *win) { return win ? win->p : NAN; }

const char *collie_win_last_error(const collie_win *win)
{
    return win ? collie_last_error(win->comm) : "";
}

int collie_win_deposits(const collie_win *win, unsigned long long *counts, int max)
{
    if (!win)
        return -1;
    collie_win *w = (collie_win *)win; /* the lock is the only thing written */
    pthread_mutex_lock(&w->lock);
    for (int d = 0; counts && d < win->nin && d < max; d++)
        counts[d] = win->deposits[d];
    pthread_mutex_unlock(&w->lock);
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
    collie_status fin = collie_finalize(win->comm);
    release(win);
    return st != COLLIE_OK ? st : fin;
}
