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
    COLLIE_COLL_COUNT
};

/* Fixed-size and pointer-free: it lives in shared memory and travels on the wire. */
struct collie__op_desc {
    uint32_t seq; /* collectives completed before this one on the communicator */
    uint8_t coll; /* enum collie__coll */
    uint8_t dtype;
    uint8_t op;
    uint8_t reserved;
    int32_t root; /* root, or peer for send/recv; -1 when unused */
    uint32_t reserved2;
    uint64_t count;
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
    int stream_out; /* write the output with non-temporal stores (COLLIE_NT_MIN) */
};

/* "allreduce", "broadcast", ... */
const char *collie__coll_name(enum collie__coll coll);
/* "float32", ... or "dtype(9)" for an invalid value (never NULL). */
const char *collie__dtype_name(int dtype);
/* "sum", ... or "op(9)". */
const char *collie__op_name(int op);
/* Bytes per element, or 0 for an invalid dtype. */
size_t collie__dtype_size(int dtype);
/* Writes e.g. "allreduce(count=1000, float32, sum)" into buf. */
void collie__op_describe(const struct collie__op_desc *d, char *buf, size_t len);

#endif
