/*
 * algo.h - the algorithms, each in its own file, and how one is chosen.
 *
 * Algorithms work on the shared-memory window of the host (transport/shm.h)
 * or on point-to-point transports (transport/transport.h); they never see
 * sockets or mappings.  Arguments reach them already checked and normalised
 * by coll.c (in-place forms resolved, count > 0).
 */
#ifndef COLLIE_ALGO_H
#define COLLIE_ALGO_H

#include <stdio.h>

#include <string.h>

#include "../core/comm.h"
#include "../reduce/stream.h"

typedef collie_status (*collie__algo_fn)(collie_comm *comm, const struct collie__op *op);

struct collie__algo {
    const char *name;
    enum collie__coll coll;
    collie__algo_fn run;
    /* Predicted seconds for op on comm; the cheapest algorithm runs. */
    double (*cost)(const collie_comm *comm, const struct collie__op *op);
};

/* Copies into the user's output: streaming past the caches when op->stream_out says so. */
static inline void collie__copy_out(const struct collie__op *op, void *dst, const void *src,
                                    size_t n)
{
    if (op->stream_out)
        collie__copy_stream(dst, src, n);
    else
        memcpy(dst, src, n);
}

/* root < 0: every rank receives the result (allreduce); else only root (reduce). */
collie_status collie__oneshot(collie_comm *comm, const struct collie__op *op, int root);
collie_status collie__twoshot(collie_comm *comm, const struct collie__op *op, int root);
collie_status collie__broadcast_staged(collie_comm *comm, const struct collie__op *op);
collie_status collie__allgather_staged(collie_comm *comm, const struct collie__op *op);
collie_status collie__reduce_scatter_staged(collie_comm *comm, const struct collie__op *op);
collie_status collie__alltoall_staged(collie_comm *comm, const struct collie__op *op);
collie_status collie__barrier_sync(collie_comm *comm, const struct collie__op *op);

/*
 * Reads COLLIE_ALGO into comm's forced choices.  Unknown names are an error
 * that lists what exists (a typo must not silently fall back).
 */
collie_status collie__select_init(collie_comm *comm);

/* The algorithm for op: COLLIE_ALGO's, else the cost model's; logged once at INFO. */
const struct collie__algo *collie__select(collie_comm *comm, const struct collie__op *op);

/* The same choice, without logging it: for tools that report which algorithm ran. */
const struct collie__algo *collie__select_peek(const collie_comm *comm, const struct collie__op *op);

/* Prints every collective with its algorithms, for `collie info`. */
void collie__algo_print(FILE *out);

#endif
