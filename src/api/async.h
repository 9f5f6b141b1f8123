/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * async.h - the asynchronous core: requests, and the two lanes of a
 * communicator that run them.
 *
 * The collective lane runs collectives one at a time, in issue order (every
 * rank issues them in the same order, so every rank runs the same one): the
 * lane's thread, or a caller blocked in collie_wait, takes the next queued
 * request and runs the blocking algorithm on it.  A blocking call waits
 * until the lane is idle and runs on the caller's thread.  The
 * point-to-point lane keeps every pending send and receive moving at once
 * (the first of each peer and direction: messages of a pair stay in order),
 * so that two ranks that isend to each other before they irecv complete.
 * The lanes share nothing but the communicator's failure record: a failure
 * in either completes every pending request of both with the sticky status.
 */
#ifndef COLLIE_ASYNC_H
#define COLLIE_ASYNC_H

#include "../core/comm.h"
#include "../transport/wire.h"

struct collie_request;

/* Runs a request on its lane (the lane's thread or a waiting caller). */
typedef collie_status (*collie__exec_fn)(collie_comm *comm, struct collie_request *req);

struct collie_request {
    collie_comm *comm;
    struct collie__op op;        /* the call, its arguments already checked */
    collie__exec_fn exec;        /* collie__op_execute on op, unless fused or compressed */
    void *ctx;                   /* exec's own state (a fusion pack, a float16 buffer) */
    struct collie_request *next; /* in its lane's queue */
    struct collie__xfer *x;      /* point-to-point requests: the transfer */
    _Atomic int done;            /* written under the lane lock, read without */
    collie_status status;        /* valid once done */
    uint64_t t_issue, t_start;   /* for the timeline */
    unsigned fused; /* a carrier (fusion.c): its members, > 1; a member of one: 1; else 0 */
    int held;       /* issued inside a group, not yet issued by its end (under the lock) */
};

/*
 * Issues a checked operation: queues it on its lane (starting the lane's
 * thread on first use) and returns the request in *req.
 */
collie_status collie__async_issue(collie_comm *comm, const struct collie__op *op,
                                  collie__exec_fn exec, void *ctx, collie_request **req);

/*
 * Runs a checked blocking operation in order with the pending ones: at once
 * on this thread when the lane is idle, else after the requests before it.
 */
collie_status collie__async_blocking(collie_comm *comm, struct collie__op *op);

/*
 * Fusion's carrier (fusion.c): one allreduce request that runs the n held
 * members (consecutive allreduces of one dtype and op, bytes in all) packed
 * in one buffer, and completes them with its status.  *spare is a buffer
 * kept from an earlier carrier, taken if large enough.  NULL when out of
 * memory (the members then run one by one).
 */
struct collie_request *collie__fuse(collie_comm *comm, struct collie_request **members, int n,
                                    size_t bytes, void **spare);

/* Completes a carrier's members with st, keeps its buffer in *spare or frees it, frees it. */
void collie__fuse_done(struct collie_request *carrier, collie_status st, void **spare,
                       void (*complete)(struct collie_request *member, collie_status st, void *arg),
                       void *arg);

/* Frees the kept buffer. */
void collie__fuse_free_spare(void *spare);

/* Completes or fails every pending request, stops the lanes' threads, frees the state. */
void collie__async_shutdown(collie_comm *comm);

/*
 * The checks made when a call is issued (api/coll.c): the communicator's
 * health, the arguments (INVALID_ARG names the bad one), in-place forms
 * resolved, and the descriptor every rank's call must agree on.
 */
collie_status collie__op_check(collie_comm *comm, struct collie__op *op);

/*
 * What the lanes call to run one operation (api/coll.c): the checks made at
 * issue passed, this runs the chosen algorithm or the message engine.
 */
collie_status collie__op_execute(collie_comm *comm, struct collie__op *op);

#endif
