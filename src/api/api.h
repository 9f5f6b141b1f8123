/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api.h - what the public calls of src/api/ share: the description of the
 * last failure that had no communicator to hold it.
 */
#ifndef COLLIE_API_INTERNAL_H
#define COLLIE_API_INTERNAL_H

#include <stdint.h>

#include "../core/comm.h"

struct collie__async;

/*
 * What the API layer keeps per communicator (comm->api): made with the
 * communicator (init.c's make_comm), freed with it (collie__api_close).
 */
struct collie__api_state {
    struct collie__async *async; /* the asynchronous core (async.c), NULL until first used */
    int timeline_id; /* this communicator's number in COLLIE_TIMELINE's trace; 0: none */
};

/* Frees comm->api; nothing if it was never made. */
void collie__api_close(collie_comm *comm);

/* Describes a failure without a communicator (collie_last_error(NULL) shows it). */
void collie__api_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Refuses a call with INVALID_ARG: on comm (its last error, "CALL on rank R:
 * why"), or without one (collie_last_error(NULL), "collie_CALL: why").
 */
collie_status collie__refuse(collie_comm *comm, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether dtype is one neighbour averaging and windows take: float32, float64, float16, bfloat16. */
static inline int collie__float_dtype(collie_dtype dtype)
{
    return dtype == COLLIE_FLOAT32 || dtype == COLLIE_FLOAT64 || dtype == COLLIE_FLOAT16 ||
           dtype == COLLIE_BFLOAT16;
}

/* Whether the buffers [a, a + alen) and [b, b + blen) share a byte. */
static inline int collie__overlaps(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return alen && blen && x < y + blen && y < x + alen;
}

/* collie_get_unique_id with rank 0 listening on host (NULL: the default address). */
collie_status collie__get_unique_id_at(collie_unique_id *id, const char *host);

struct collie__bootstrap_over;
/*
 * rank of a new communicator of size ranks, made inside over->parent (a
 * split): its exchanges are the parent's (bootstrap.h).  As collie_init_rank.
 */
collie_status collie__init_over(collie_comm **out, int size, int rank,
                                struct collie__bootstrap_over *over);

/* Where collie_allreduce_ef on comm runs its codes, in words (`collie info`). */
const char *collie__ef_describe(const collie_comm *comm);

/*
 * For the tests: what c's residuals on this rank hold, in the units of the
 * result of calls with op (count elements); summed over the ranks, it is
 * what the results so far lack of the inputs' exact sum (or mean).
 */
void collie__ef_residual_total(const collie_compressor *c, collie_op op, float *out);

#endif
