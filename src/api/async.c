/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * async.c - the lanes of async.h: queues, their threads, and waiting on
 * requests.
 *
 * One mutex per communicator guards both queues and every request's
 * completion; it is never held while an operation runs.  The threads start
 * on first use, block every signal (the user's handlers run on the user's
 * threads), and sleep on a condition variable when their lane is empty.
 * Their waits inside an operation never poll (collie__wait_background):
 * the CPU belongs to the computation they overlap with.
 */
#define _GNU_SOURCE
#include "async.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/config.h"
#include "../coll/algo.h"
#include "../core/log.h"
#include "../transport/transport.h"
#include "../transport/xfer.h"
#include "api.h"
#include "timeline.h"

#define P2P_ACTIVE_MAX 64 /* transfers the point-to-point lane moves at once */
/* Collectives this large wake the lane's thread at issue (they take 20x the wake-up or more). */
#define WAKE_BYTES_HOST (64u << 10)
#define WAKE_BYTES_NET (4u << 10)
#define TICK_NS 1000000ull    /* a busy lane's thread looks at its queue this often */
#define BUSY_NS 100000000ull  /* a lane is busy for this long after a request's issue */
#define P2P_SLICE_NS 1000000u /* it looks for new requests at least this often */

struct lane {
    struct collie_request *head, *tail; /* queued, not started */
    int busy;                           /* a thread runs one of this lane's operations */
    int started;
    int ticking;            /* the thread sleeps for TICK_NS at most (busy communicator) */
    uint64_t last_issue_ns; /* the last request's issue */
    pthread_t thread;
    pthread_cond_t work; /* the lane's thread waits here for requests */
};

struct collie__async {
    pthread_mutex_t lock;
    pthread_cond_t done; /* a request completed, or a lane went idle */
    struct lane coll, p2p;
    int stopping;
    int group_depth;             /* collie_group_start calls not yet ended */
    _Atomic int callers_waiting; /* threads blocked in a wait on this communicator */
    struct lane held;            /* collectives issued inside the group (queue only) */
    size_t fusion_bytes;         /* COLLIE_FUSION_BYTES */
    void *spare;                 /* a fusion buffer kept for the next group */
    struct p2p_set *p2p_set;     /* the point-to-point lane's transfers (made with its thread) */
};

static int is_p2p(const struct collie__op *op)
{
    return collie__lane_of(op->desc.coll) == COLLIE_LANE_P2P;
}

static void push(struct lane *l, struct collie_request *r)
{
    r->next = NULL;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
}

static struct collie_request *pop(struct lane *l)
{
    struct collie_request *r = l->head;
    if (r && !(l->head = r->next))
        l->tail = NULL;
    return r;
}

static void complete(struct collie__async *a, struct collie_request *r, collie_status st);

static void complete_member(struct collie_request *m, collie_status st, void *arg)
{
    struct collie__async *a = arg;
    m->fused = 1; /* its carrier is in the timeline already */
    complete(a, m, st);
}

/* Under the lock. */
static void complete(struct collie__async *a, struct collie_request *r, collie_status st)
{
    collie_comm *comm = r->comm;
    /* A later failure of the communicator is the cause to report, not its echo. */
    collie_status sticky = atomic_load(&comm->failed);
    st = st != COLLIE_OK && sticky != COLLIE_OK ? sticky : st;
    if (r->fused != 1) /* a member's carrier shows it */
        collie__timeline_op(comm, r, collie__now_ns());
    if (r->fused > 1) { /* a carrier: nobody waits on it, its members are the requests */
        collie__fuse_done(r, st, &a->spare, complete_member, a);
        return;
    }
    r->status = st;
    atomic_store_explicit(&r->done, 1, memory_order_release);
    pthread_cond_broadcast(&a->done);
}

/* Runs one collective request; called without the lock, with the lane marked busy. */
static collie_status execute(collie_comm *comm, struct collie_request *r)
{
    collie_status sticky = atomic_load(&comm->failed);
    if (sticky != COLLIE_OK)
        return sticky;
    return r->exec(comm, r);
}

/* Takes the next queued collective and runs it; under the lock, returns under it. */
static void run_next(collie_comm *comm, struct collie__async *a)
{
    struct collie_request *r = pop(&a->coll);
    a->coll.busy = 1;
    r->t_start = collie__now_ns(); /* under the lock: collie_test reads it */
    pthread_mutex_unlock(&a->lock);
    collie_status st = execute(comm, r);
    pthread_mutex_lock(&a->lock);
    a->coll.busy = 0;
    complete(a, r, st);
}

/*
 * Sleeps until the lane is signalled or, while requests came recently, for
 * one tick at most: small requests do not wake it (see the issue), so that
 * it starts those the caller leaves queued within a tick.  Under the lock.
 */
static void lane_sleep(struct collie__async *a, struct lane *l)
{
    uint64_t now = collie__now_ns();
    l->ticking = now - l->last_issue_ns < BUSY_NS;
    if (!l->ticking) {
        pthread_cond_wait(&l->work, &a->lock);
        return;
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until); /* the condition's clock (async_of) */
    until.tv_nsec += (long)TICK_NS;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&l->work, &a->lock, &until);
}

static void *coll_lane(void *arg)
{
    collie_comm *comm = arg;
    struct collie__async *a = comm->api->async;
    collie__wait_background(&a->callers_waiting);
    pthread_mutex_lock(&a->lock);
    for (;;) {
        if (a->coll.head && !a->coll.busy) {
            run_next(comm, a);
            continue;
        }
        if (a->stopping && !a->coll.head && !a->coll.busy)
            break;
        lane_sleep(a, &a->coll);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

/* The point-to-point lane's transfers in flight, and their requests. */
struct p2p_set {
    int n;
    struct collie_request *req[P2P_ACTIVE_MAX];
    struct collie__xfer x[P2P_ACTIVE_MAX];
};

static int p2p_key_busy(const struct p2p_set *s, const struct collie_request *r)
{
    for (int i = 0; i < s->n; i++)
        if (s->req[i]->op.root == r->op.root && s->req[i]->op.desc.coll == r->op.desc.coll)
            return 1;
    return 0;
}

/* Moves queued requests into the set, in order, the first of each peer and direction. */
static void p2p_admit(collie_comm *comm, struct lane *l, struct p2p_set *s)
{
    struct collie_request **link = &l->head, *prev = NULL;
    while (*link && s->n < P2P_ACTIVE_MAX) {
        struct collie_request *r = *link;
        if (p2p_key_busy(s, r)) {
            prev = r;
            link = &r->next;
            continue;
        }
        *link = r->next;
        if (l->tail == r)
            l->tail = prev;
        struct collie__op *op = &r->op;
        int send = op->desc.coll == COLLIE_COLL_SEND;
        r->t_start = collie__now_ns();
        collie__xfer_init(comm, &s->x[s->n], &op->desc, op->root, send,
                          send ? op->sendbuf : op->recvbuf, op->count * op->elem_size,
                          COLLIE_XFER_USER);
        s->req[s->n++] = r;
    }
}

/* Completes the set's finished transfers (all of them with st if st fails); under the lock. */
static void p2p_retire(collie_comm *comm, struct collie__async *a, struct p2p_set *s,
                       collie_status st)
{
    int kept = 0;
    for (int i = 0; i < s->n; i++) {
        if (st == COLLIE_OK && s->x[i].left) {
            if (kept != i) {
                s->req[kept] = s->req[i];
                s->x[kept] = s->x[i];
            }
            kept++;
            continue;
        }
        if (st == COLLIE_OK)
            collie__count_op(comm, COLLIE_LANE_P2P, 1);
        complete(a, s->req[i], st);
    }
    s->n = kept;
}

static collie_status p2p_timeout(collie_comm *comm, const struct p2p_set *s)
{
    const struct collie__xfer *x = &s->x[0];
    return collie__fail(comm, COLLIE_ERR_TIMEOUT,
                        "rank %d waited COLLIE_TIMEOUT=%.1f s for rank %d to %s a message of %zu "
                        "bytes (collie_i%s) without progress",
                        comm->rank, comm->timeout_s, x->peer, x->send ? "take" : "send", x->len,
                        x->send ? "send" : "recv");
}

static void *p2p_lane(void *arg)
{
    collie_comm *comm = arg;
    struct collie__async *a = comm->api->async;
    struct p2p_set *s = a->p2p_set; /* allocated with the thread: it cannot fail here */
    uint64_t timeout_ns = (uint64_t)(comm->timeout_s * 1e9), stalled_since = 0;
    collie__wait_background(&a->callers_waiting);
    pthread_mutex_lock(&a->lock);
    for (;;) {
        collie_status st = atomic_load(&comm->failed);
        if (st != COLLIE_OK) { /* everything pending fails with the communicator */
            struct collie_request *r;
            p2p_retire(comm, a, s, st);
            while ((r = pop(&a->p2p)))
                complete(a, r, st);
        } else {
            p2p_admit(comm, &a->p2p, s);
        }
        if (!s->n) {
            stalled_since = 0;
            if (a->stopping && !a->p2p.head)
                break;
            pthread_cond_wait(&a->p2p.work, &a->lock);
            continue;
        }
        a->p2p.busy = 1;
        pthread_mutex_unlock(&a->lock);
        int moved = 0;
        st = collie__xfer_poll(comm, s->x, s->n, &moved);
        uint64_t now = moved ? 0 : collie__now_ns();
        if (st == COLLIE_OK && !moved) {
            if (!stalled_since)
                stalled_since = now;
            else if (now - stalled_since >= timeout_ns)
                st = p2p_timeout(comm, s);
            if (st == COLLIE_OK)
                st = collie__xfer_sleep(comm, s->x, s->n, now + P2P_SLICE_NS);
        } else {
            stalled_since = 0;
        }
        pthread_mutex_lock(&a->lock);
        a->p2p.busy = 0;
        p2p_retire(comm, a, s, st);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

static struct collie__async *async_of(collie_comm *comm)
{
    if (comm->api->async)
        return comm->api->async;
    struct collie__async *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->done, NULL);
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&a->coll.work, &monotonic);
    pthread_condattr_destroy(&monotonic);
    pthread_cond_init(&a->p2p.work, NULL);
    a->fusion_bytes = (size_t)collie__config_int(COLLIE_CFG_FUSION_BYTES);
    comm->api->async = a;
    return a;
}

/* Starts a lane's thread with every signal blocked; under the lock. */
static collie_status start_lane(collie_comm *comm, struct lane *l, void *(*fn)(void *),
                                const char *name)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&l->thread, NULL, fn, comm);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err)
        return collie__fail(comm, COLLIE_ERR_SYSTEM, "rank %d: pthread_create (%s): %s", comm->rank,
                            name, strerror(err));
    pthread_setname_np(l->thread, name);
    l->started = 1;
    return COLLIE_OK;
}

collie_status collie__async_issue(collie_comm *comm, const struct collie__op *op,
                                  collie__exec_fn exec, void *ctx, collie_request **out)
{
    struct collie__async *a = async_of(comm);
    struct collie_request *r = calloc(1, sizeof *r);
    if (!a || !r) {
        free(r);
        return collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for a request", comm->rank);
    }
    r->comm = comm;
    r->op = *op;
    r->exec = exec;
    r->ctx = ctx;
    r->t_issue = collie__now_ns();
    int p2p = is_p2p(op);
    struct lane *l = p2p ? &a->p2p : &a->coll;
    pthread_mutex_lock(&a->lock);
    collie_status st = COLLIE_OK;
    if (p2p && !a->p2p_set && !(a->p2p_set = calloc(1, sizeof *a->p2p_set)))
        st = collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for the send/recv lane",
                          comm->rank);
    if (st == COLLIE_OK && !l->started)
        st = start_lane(comm, l, p2p ? p2p_lane : coll_lane, p2p ? "collie-p2p" : "collie-coll");
    if (st == COLLIE_OK && !p2p && a->group_depth) {
        r->held = 1; /* collie_group_end issues it, fused or not */
        push(&a->held, r);
    } else if (st == COLLIE_OK) {
        push(l, r);
        /*
         * Waking the lane's thread costs a small call 2-3 us (measured: the
         * thread takes a CPU from a peer, or the call from its caller): a
         * small one is left to the caller's wait, or to the thread's next
         * tick, unless the thread sleeps without ticking.
         */
        size_t wake_bytes = comm->nhosts > 1 ? WAKE_BYTES_NET : WAKE_BYTES_HOST;
        if (p2p || !l->ticking || op->count * op->elem_size >= wake_bytes)
            pthread_cond_signal(&l->work);
        l->last_issue_ns = r->t_issue;
    }
    pthread_mutex_unlock(&a->lock);
    if (st != COLLIE_OK) {
        free(r);
        return st;
    }
    *out = r;
    return COLLIE_OK;
}

collie_status collie__async_blocking(collie_comm *comm, struct collie__op *op)
{
    struct collie__async *a = comm->api->async;
    if (!a) /* never went non-blocking: nothing to wait for */
        return collie__op_execute(comm, op);
    if (is_p2p(op)) {
        pthread_mutex_lock(&a->lock);
        int idle = !a->p2p.head && !a->p2p.busy;
        pthread_mutex_unlock(&a->lock);
        if (idle) /* the user's thread is the only one that queues: it stays idle */
            return collie__op_execute(comm, op);
        collie_request *r;
        collie_status st = collie__async_issue(comm, op, NULL, NULL, &r);
        return st == COLLIE_OK ? collie_wait(r) : st;
    }
    pthread_mutex_lock(&a->lock);
    if (a->group_depth) {
        pthread_mutex_unlock(&a->lock);
        return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                            "blocking %s on rank %d inside collie_group_start/collie_group_end: "
                            "it would wait for the calls the group holds; use collie_i%s",
                            collie__coll_name(op->desc.coll), comm->rank,
                            collie__coll_name(op->desc.coll));
    }
    atomic_fetch_add(&a->callers_waiting, 1);
    while (a->coll.head || a->coll.busy) {
        if (!a->coll.busy)
            run_next(comm, a); /* lend this thread to the requests before us */
        else
            pthread_cond_wait(&a->done, &a->lock);
    }
    atomic_fetch_sub(&a->callers_waiting, 1);
    a->coll.busy = 1;
    pthread_mutex_unlock(&a->lock);
    collie_status st = collie__op_execute(comm, op);
    pthread_mutex_lock(&a->lock);
    a->coll.busy = 0;
    pthread_cond_broadcast(&a->done);
    pthread_mutex_unlock(&a->lock);
    return st;
}

/* Frees a completed request and returns its status. */
static collie_status finish(collie_request *r)
{
    collie_status st = r->status;
    free(r->ctx);
    free(r);
    return st;
}

collie_status collie_wait(collie_request *r)
{
    if (!r)
        return COLLIE_OK;
    if (atomic_load_explicit(&r->done, memory_order_acquire))
        return finish(r); /* possibly after collie_finalize: the communicator is gone */
    collie_comm *comm = r->comm;
    struct collie__async *a = comm->api->async;
    uint64_t t0 = collie__now_ns();
    pthread_mutex_lock(&a->lock);
    if (r->held) {
        pthread_mutex_unlock(&a->lock);
        return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                            "collie_wait on rank %d inside collie_group_start/collie_group_end: "
                            "the group holds the call until collie_group_end (the request "
                            "stays pending)",
                            comm->rank);
    }
    atomic_fetch_add(&a->callers_waiting, 1); /* nobody computes now: the lanes may poll */
    while (!atomic_load_explicit(&r->done, memory_order_relaxed)) {
        if (!is_p2p(&r->op) && a->coll.head && !a->coll.busy)
            run_next(comm, a); /* the lane's thread has not started it: run it here */
        else
            pthread_cond_wait(&a->done, &a->lock);
    }
    atomic_fetch_sub(&a->callers_waiting, 1);
    pthread_mutex_unlock(&a->lock);
    collie__timeline_wait(comm, t0, collie__now_ns());
    return finish(r);
}

collie_status collie_test(collie_request *r, int *done)
{
    if (!done) {
        collie__api_error("collie_test: done (the output flag) is NULL");
        return COLLIE_ERR_INVALID_ARG;
    }
    *done = !r || atomic_load_explicit(&r->done, memory_order_acquire);
    if (*done)
        return r ? finish(r) : COLLIE_OK;
    /* A caller that polls is not computing: start what it polls for now, not at the tick. */
    struct collie__async *a = r->comm->api->async;
    pthread_mutex_lock(&a->lock);
    if (!is_p2p(&r->op) && !r->held && !r->t_start)
        pthread_cond_signal(&a->coll.work);
    pthread_mutex_unlock(&a->lock);
    return COLLIE_OK;
}

collie_status collie_waitall(size_t n, collie_request **reqs)
{
    if (n && !reqs) {
        collie__api_error("collie_waitall: reqs is NULL but n is %zu", n);
        return COLLIE_ERR_INVALID_ARG;
    }
    collie_status first = COLLIE_OK;
    for (size_t i = 0; i < n; i++) {
        collie_status st = collie_wait(reqs[i]);
        reqs[i] = NULL;
        if (first == COLLIE_OK)
            first = st;
    }
    return first;
}

/* Whether r may ride in a carrier: a latency-bound allreduce that fits one. */
static int fusible(const struct collie__async *a, const struct collie_request *r)
{
    const struct collie__op *o = &r->op;
    return a->fusion_bytes && o->desc.coll == COLLIE_COLL_ALLREDUCE && o->count &&
           r->comm->size > 1 && o->count * o->elem_size <= a->fusion_bytes &&
           collie__latency_bound(r->comm, o);
}

static int same_kind(const struct collie_request *x, const struct collie_request *y)
{
    return x->op.dtype == y->op.dtype && x->op.op == y->op.op;
}

/*
 * Queues the group's calls; under the lock.  The latency-bound allreduces of
 * one dtype and op ride together in carriers of at most fusion_bytes, each
 * queued where its first member was issued (nothing outside a group can see
 * the order within it); every other call keeps its place.  The packing
 * depends only on the calls, so every rank packs alike.
 */
static void flush_group(struct collie__async *a)
{
    size_t n = 0, k = 0;
    for (struct collie_request *r = a->held.head; r; r = r->next)
        n++;
    struct collie_request **all = malloc(sizeof *all * (n + 1)),
                          **run = malloc(sizeof *run * (n + 1));
    char *taken = calloc(n + 1, 1), *fits = calloc(n + 1, 1);
    struct collie_request *r;
    while ((r = pop(&a->held))) {
        r->held = 0;
        if (all)
            all[k++] = r;
        else
            push(&a->coll, r); /* out of memory: no fusion, the calls one by one */
    }
    if (!fits)
        free(taken), taken = NULL;
    for (size_t i = 0; all && taken && i < n; i++)
        fits[i] = (char)fusible(a, all[i]);
    for (size_t i = 0; all && run && taken && i < n; i++) {
        if (taken[i])
            continue;
        int m = 0;
        size_t bytes = 0;
        for (size_t j = i; fits[i] && j < n; j++) {
            size_t b = all[j]->op.count * all[j]->op.elem_size;
            if (taken[j] || !fits[j] || !same_kind(all[i], all[j]) || bytes + b > a->fusion_bytes)
                continue;
            run[m++] = all[j];
            bytes += b;
        }
        struct collie_request *carrier =
            m > 1 ? collie__fuse(all[i]->comm, run, m, bytes, &a->spare) : NULL;
        if (!carrier) {
            push(&a->coll, all[i]);
            continue;
        }
        for (size_t j = i; j < n; j++)
            for (int q = 0; q < m; q++)
                taken[j] |= all[j] == run[q];
        push(&a->coll, carrier);
    }
    if (all && (!run || !taken)) /* out of memory midway: what is left, one by one */
        for (size_t i = 0; i < n; i++)
            if (!taken || !taken[i])
                push(&a->coll, all[i]);
    free(all), free(run), free(taken), free(fits);
    pthread_cond_signal(&a->coll.work);
}

collie_status collie_group_start(collie_comm *comm)
{
    if (!comm) {
        collie__api_error("collie_group_start: comm is NULL");
        return COLLIE_ERR_INVALID_ARG;
    }
    struct collie__async *a = async_of(comm);
    if (!a)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for a group", comm->rank);
    pthread_mutex_lock(&a->lock);
    collie_status st =
        a->coll.started ? COLLIE_OK : start_lane(comm, &a->coll, coll_lane, "collie-coll");
    a->group_depth += st == COLLIE_OK;
    pthread_mutex_unlock(&a->lock);
    return st;
}

collie_status collie_group_end(collie_comm *comm)
{
    struct collie__async *a = comm ? comm->api->async : NULL;
    if (a)
        pthread_mutex_lock(&a->lock);
    if (!a || !a->group_depth) {
        if (a)
            pthread_mutex_unlock(&a->lock);
        collie__api_error("collie_group_end without collie_group_start");
        return comm ? collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                                   "rank %d: collie_group_end without collie_group_start",
                                   comm->rank)
                    : COLLIE_ERR_INVALID_ARG;
    }
    if (!--a->group_depth)
        flush_group(a);
    pthread_mutex_unlock(&a->lock);
    return COLLIE_OK;
}

void collie__async_shutdown(collie_comm *comm)
{
    struct collie__async *a = comm->api->async;
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    a->group_depth = 0; /* a group left open: its calls run now */
    flush_group(a);
    a->stopping = 1; /* the threads finish their queues, then leave */
    pthread_cond_signal(&a->coll.work);
    pthread_cond_signal(&a->p2p.work);
    pthread_mutex_unlock(&a->lock);
    if (a->coll.started)
        pthread_join(a->coll.thread, NULL);
    if (a->p2p.started)
        pthread_join(a->p2p.thread, NULL);
    collie__fuse_free_spare(a->spare);
    free(a->p2p_set);
    pthread_cond_destroy(&a->coll.work);
    pthread_cond_destroy(&a->p2p.work);
    pthread_cond_destroy(&a->done);
    pthread_mutex_destroy(&a->lock);
    free(a);
    comm->api->async = NULL;
}

collie_status collie_comm_abort(collie_comm *comm)
{
    if (!comm) {
        collie__api_error("collie_comm_abort: comm is NULL");
        return COLLIE_ERR_INVALID_ARG;
    }
    collie__fail(comm, COLLIE_ERR_ABORTED, "rank %d: collie_comm_abort() was called", comm->rank);
    struct collie__async *a = comm->api->async;
    if (a) { /* the point-to-point lane notices at its next look; wake it for that */
        pthread_mutex_lock(&a->lock);
        pthread_cond_signal(&a->p2p.work);
        pthread_mutex_unlock(&a->lock);
    }
    return COLLIE_OK;
}
