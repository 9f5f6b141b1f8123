/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oneshot.c - allreduce and reduce for small messages: every rank copies its
 * input into its slot once, one sync, then each receiving rank reduces all
 * slots itself, in rank order.  One synchronisation per round; each receiver
 * reads n inputs, so it loses to twoshot as messages grow.
 */
#include <string.h>

#include "../reduce/reduce.h"
#include "../transport/shm.h"
#include "algo.h"

collie_status collie__oneshot(collie_comm *comm, const struct collie__op *op, int root)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size, chunk = collie__win_bytes(comm) / es;
    const unsigned char *send = op->sendbuf;
    unsigned char *recv = op->recvbuf;
    const void **srcs = comm->scratch_srcs;
    int receives = root < 0 || root == comm->rank;
    if (op->count * es <= COLLIE__WIN_CARRY) { /* the data rides with the sync */
        memcpy(collie__win_carry(comm), send, op->count * es);
        collie__count_sent(comm, COLLIE_LANE_COLL, op->count * es);
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK || !receives)
            return st;
        for (int r = 0; r < n; r++)
            srcs[r] = collie__win_carried(comm, r);
        collie__reduce(recv, srcs, n, op->count, op->dtype, op->op, comm->size, op->stream_out);
        return COLLIE_OK;
    }
    for (size_t off = 0; off < op->count; off += chunk) {
        size_t m = op->count - off < chunk ? op->count - off : chunk;
        unsigned parity = collie__win_round(comm);
        collie__copy(collie__win_slot(comm, me, parity), send + off * es, m * es);
        collie__count_sent(comm, COLLIE_LANE_COLL, m * es);
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;
        if (!receives)
            continue;
        for (int r = 0; r < n; r++)
            srcs[r] = collie__win_slot(comm, r, parity);
        collie__reduce(recv + off * es, srcs, n, m, op->dtype, op->op, comm->size, op->stream_out);
    }
    return COLLIE_OK;
}
