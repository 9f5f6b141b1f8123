/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce_tree.c - reduce as a binomial tree over messages, broadcast_tree's
 * mirror: in step k every rank whose number (counted from the root) has bit
 * k set sends what it holds 2^k ranks down and leaves; the others take that
 * from 2^k ranks up and combine it into theirs.  log2(n) steps; a rank waits
 * for its children only, and a leaf sends and moves on, so ranks that
 * outnumber the cores are not all made to meet on every call.
 *
 * A rank combines (its data) op (its child's), children in a fixed order:
 * the same inputs give the same bits.  What a rank holds is its input until
 * it first combines: a leaf sends straight from the user's buffer, and the
 * first combine reads the input where it lies, so no rank copies its input
 * first (at 2 ranks, 16-64 KiB: one copy of the call's bytes on each rank).
 */
#include "../reduce/reduce.h"
#include "../transport/xfer.h"
#include "algo.h"

collie_status collie__reduce_tree(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->size, vme = (comm->rank - op->root + n) % n;
    const size_t bytes = op->count * op->elem_size;
    const collie_op step_op = op->op == COLLIE_AVG ? COLLIE_SUM : op->op;
    const unsigned char *held = op->sendbuf;
    unsigned char *work = NULL, *tmp = NULL;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vme & mask)
            return collie__xfer_send(comm, (vme - mask + op->root) % n, held, bytes);
        if (vme + mask >= n)
            continue;
        if (!tmp) { /* the first child: where this rank combines */
            work = vme ? collie__scratch(comm, COLLIE_SCRATCH_WORK, bytes) : op->recvbuf;
            tmp = work ? collie__scratch(comm, COLLIE_SCRATCH_TMP, bytes) : NULL;
            if (!tmp)
                return comm->failed;
        }
        collie_status st = collie__xfer_recv(comm, (vme + mask + op->root) % n, tmp, bytes);
        if (st != COLLIE_OK)
            return st;
        const void *srcs[2] = {held, tmp};
        collie__reduce(work, srcs, 2, op->count, op->dtype, step_op, 1, 0);
        held = work;
    }
    return collie__average(op->recvbuf, op->count, op->dtype, op->op, n); /* the root */
}
