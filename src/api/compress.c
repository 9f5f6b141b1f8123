/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compress.c - collie_[i]allreduce_compressed: float32 in and out, float16
 * or bfloat16 on the wire.  The inputs are rounded to the wire type (the
 * library's own conversion, collie_convert), the allreduce of the wire type
 * widens to float32 to combine and rounds once per message hop, and the
 * result is widened back.  The conversions run where the allreduce runs:
 * on the lane for a request, so they overlap with the caller's work too.
 */
#include <stdint.h>
#include <stdlib.h>

#include "api.h"
#include "async.h"

struct compressed {
    const float *send;
    float *recv;
    size_t count;
    collie_dtype wire;
    unsigned char buf[]; /* count elements of the wire type */
};

static collie_status exec_compressed(collie_comm *comm, struct collie_request *r)
{
    struct compressed *c = r->ctx;
    collie_status st = collie_convert(c->buf, c->wire, c->send, COLLIE_FLOAT32, c->count);
    if (st == COLLIE_OK)
        st = collie__op_execute(comm, &r->op);
    if (st == COLLIE_OK)
        st = collie_convert(c->recv, COLLIE_FLOAT32, c->buf, c->wire, c->count);
    return st;
}

/* Checks the call and builds its request state; NULL with *st set when it is refused. */
static struct compressed *prepare(collie_comm *comm, const float *sendbuf, float *recvbuf,
                                  size_t count, collie_dtype wire, collie_op op,
                                  struct collie__op *o, collie_status *st)
{
    const char *bad = NULL;
    if (!comm)
        bad = "comm is NULL";
    else if (wire != COLLIE_FLOAT16 && wire != COLLIE_BFLOAT16)
        bad = "wire_dtype must be COLLIE_FLOAT16 or COLLIE_BFLOAT16";
    else if ((unsigned)op > COLLIE_AVG)
        bad = "op is not a collie_op (COLLIE_SUM..COLLIE_AVG)";
    else if (count && (!sendbuf || !recvbuf))
        bad = sendbuf ? "recvbuf is NULL but count > 0" : "sendbuf is NULL but count > 0";
    else if (count > SIZE_MAX / 4)
        bad = "count overflows the address space";
    if (bad) {
        collie__api_error("collie_allreduce_compressed: %s", bad);
        *st = comm ? collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                                  "collie_allreduce_compressed on "
                                  "rank %d: %s",
                                  comm->rank, bad)
                   : COLLIE_ERR_INVALID_ARG;
        return NULL;
    }
    struct compressed *c = malloc(sizeof *c + count * 2 + 1);
    if (!c) {
        *st = collie__fail(comm, COLLIE_ERR_NOMEM,
                           "rank %d: no memory for %zu float16 elements of a compressed allreduce",
                           comm->rank, count);
        return NULL;
    }
    *c = (struct compressed){.send = sendbuf, .recv = recvbuf, .count = count, .wire = wire};
    *o = (struct collie__op){
        .desc = {.coll = COLLIE_COLL_ALLREDUCE, .root = -1},
        .sendbuf = c->buf,
        .recvbuf = c->buf,
        .count = count,
        .dtype = wire,
        .op = op,
        .root = -1,
    };
    *st = collie__op_check(comm, o);
    if (*st != COLLIE_OK) {
        free(c);
        return NULL;
    }
    return c;
}

collie_status collie_iallreduce_compressed(collie_comm *comm, const float *sendbuf, float *recvbuf,
                                           size_t count, collie_dtype wire_dtype, collie_op op,
                                           collie_request **req)
{
    if (!req) {
        collie__api_error("collie_iallreduce_compressed: req (the output pointer) is NULL");
        return COLLIE_ERR_INVALID_ARG;
    }
    *req = NULL;
    struct collie__op o;
    collie_status st;
    struct compressed *c = prepare(comm, sendbuf, recvbuf, count, wire_dtype, op, &o, &st);
    if (!c)
        return st;
    st = collie__async_issue(comm, &o, exec_compressed, c, req);
    if (st != COLLIE_OK)
        free(c);
    return st;
}

collie_status collie_allreduce_compressed(collie_comm *comm, const float *sendbuf, float *recvbuf,
                                          size_t count, collie_dtype wire_dtype, collie_op op)
{
    struct collie__op o;
    collie_status st;
    struct compressed *c = prepare(comm, sendbuf, recvbuf, count, wire_dtype, op, &o, &st);
    if (!c)
        return st;
    /* The conversions on this thread; the allreduce in order with pending requests. */
    st = collie_convert(c->buf, wire_dtype, sendbuf, COLLIE_FLOAT32, count);
    if (st == COLLIE_OK)
        st = collie__async_blocking(comm, &o);
    if (st == COLLIE_OK)
        st = collie_convert(recvbuf, COLLIE_FLOAT32, c->buf, wire_dtype, count);
    free(c);
    return st;
}
