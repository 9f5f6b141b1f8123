/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * broadcast_tree.c - broadcast as a binomial tree over every rank: in step k
 * each rank that has the data sends it 2^k ranks further (counted from the
 * root), so n ranks are reached in log2(n) steps and the root sends log2(n)
 * messages, not n-1.
 */
#include "../transport/xfer.h"
#include "algo.h"

collie_status collie__broadcast_tree(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->size, vme = (comm->rank - op->root + n) % n;
    const size_t bytes = op->count * op->elem_size;
    void *buf = op->recvbuf;
    int mask = 1;
    while (mask < n && !(vme & mask)) /* the lowest set bit of vme names the parent */
        mask <<= 1;
    if (vme) {
        collie_status st = collie__xfer_recv(comm, ((vme - mask) + op->root) % n, buf, bytes);
        if (st != COLLIE_OK)
            return st;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vme + mask < n) {
            collie_status st = collie__xfer_send(comm, (vme + mask + op->root) % n, buf, bytes);
            if (st != COLLIE_OK)
                return st;
        }
    return COLLIE_OK;
}
