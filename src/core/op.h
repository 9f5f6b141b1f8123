/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * op.h - what one call asks for: the descriptor every rank publishes so that
 * its peers can check they are in the same operation with the same arguments.
 */
#ifndef COLLIE_OP_H
#define COLLIE_OP_H

#include <stddef.h>
#include <stdint.h>

#include "collie.h"

enum collie__coll {
    COLLIE_COLL_ALLREDUCE,
    COLLIE_COLL_BROADCAST,
    COLLIE_COLL_REDUCE,
    COLLIE_COLL_ALLGATHER,
    COLLIE_COLL_REDUCE_SCATTER,
    COLLIE_COLL_ALLTOALL,
    COLLIE_COLL_BARRIER,
    COLLIE_COLL_SEND,
    COLLIE_COLL_RECV,
    COLLIE_COLL_NEIGHBOR_ALLREDUCE,
    COLLIE_COLL_HIER_NEIGHBOR_ALLREDUCE, /* between hosts: op->nbr in host numbers */
    COLLIE_COLL_NEIGHBOR_ALLGATHER,
    COLLIE_COLL_WIN_GET, /* a window's reply to a get (api/window_service.c) */
    COLLIE_COLL_COUNT
};

/*
 * The algorithm number of send/recv and of calls that run no algorithm.
 * The collective layer numbers its algorithms from 1 (coll/registry.c).
 */
#define COLLIE__ALGO_NONE 0

/* Fixed-size and pointer-free: it lives in shared memory and travels on the wire. */
struct collie__op_desc {
    uint32_t seq; /* collectives completed before this one on the communicator */
    uint8_t coll; /* enum collie__coll */
    uint8_t dtype;
    uint8_t op;
    uint8_t algo; /* the algorithm's number (coll/algo.h's wire): ranks must agree on it */
    int32_t root; /* root, or peer for send/recv, or a neighbour op's graph; -1 when unused */
    uint32_t pad; /* zero: the layout has no implicit padding */
    uint64_t count;
};
_Static_assert(sizeof(struct collie__op_desc) == 24, "the descriptor is shared between builds");

/*
 * This rank's part of one step of a neighbour operation, in global ranks:
 *     recvbuf = self_w * sendbuf + sum over d of recv_w[d] * (data of recv[d])
 * where each out-neighbour send[d] is sent send_w[d] * sendbuf (send_w
 * NULL: the data as is); or, when gather is set, recvbuf holds the data of
 * recv[0], recv[1], ... one after the other (weights unused).  The data
 * travels as `wire` (the call's dtype, or float16/bfloat16 for float32).
 * Its descriptor carries the graph's fingerprint in root (a static
 * topology's, nonzero; 0 for lists given per call) and the wire dtype in
 * op, so neighbours in different graphs or steps fail with MISMATCH.
 */
struct collie__nbr_plan {
    int nrecv, nsend;
    const int *recv, *send;
    const double *recv_w, *send_w;
    double self_w;
    uint32_t fingerprint;
    collie_dtype wire;
    int gather;
};

/* A call in flight: the descriptor plus this rank's buffers. */
struct collie__op {
    struct collie__op_desc desc;
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    collie_dtype dtype;
    collie_op op;
    int root;
    size_t elem_size;
    int stream_out;   /* write the output with non-temporal stores (COLLIE_NT_MIN) */
    int stream_stage; /* write the staging slots so (COLLIE_STAGE_STREAM; adaptive.c) */
    const struct collie__nbr_plan *nbr; /* neighbour operations: the step (owned by the caller) */
};

/* "allreduce", "broadcast", ... */
const char *collie__coll_name(enum collie__coll coll);
/* "float32", ... or "dtype(9)" for an invalid value (never NULL). */
const char *collie__dtype_name(int dtype);
/* "sum", ... or "op(9)". */
const char *collie__op_name(int op);
/* The number of collie_dtype values: COLLIE_FLOAT32 (0) .. COLLIE_INT64. */
#define COLLIE__DTYPE_COUNT (COLLIE_INT64 + 1)
/* Bytes per element, or 0 for an invalid dtype. */
size_t collie__dtype_size(int dtype);
/*
 * "ring", ... or "algo(42)" for a number no algorithm has (never NULL):
 * "none" for COLLIE__ALGO_NONE, the others as the namer says.
 */
const char *collie__algo_name(int algo);
/*
 * Sets who names the algorithm numbers: the collective layer, which defines
 * them (core is below it).  Until set, numbers print as "algo(N)".
 */
void collie__algo_set_namer(const char *(*namer)(int algo));
/* Whether two ranks' descriptors describe the same call (the algorithm included). */
int collie__desc_equal(const struct collie__op_desc *a, const struct collie__op_desc *b);
/* Writes e.g. "allreduce(count=1000, float32, sum)" into buf. */
void collie__op_describe(const struct collie__op_desc *d, char *buf, size_t len);

#endif
