/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * broadcast_staged.c - broadcast through the window: per round, the root
 * stages a slot-sized piece of its buffer, one sync, every other rank copies
 * it out.  Two slots alternate, so the root fills the next piece while the
 * others still copy the last.
 */
#include <string.h>

#include "../transport/shm.h"
#include "algo.h"

collie_status collie__broadcast_staged(collie_comm *comm, const struct collie__op *op)
{
    const size_t es = op->elem_size, chunk = collie__win_bytes(comm) / es;
    const int root = collie__local_index(comm, op->root), is_root = comm->rank == op->root;
    unsigned char *buf = op->recvbuf;
    for (size_t off = 0; off < op->count; off += chunk) {
        size_t m = op->count - off < chunk ? op->count - off : chunk;
        unsigned parity = collie__win_round(comm);
        if (is_root) {
            collie__copy(collie__win_slot(comm, root, parity), buf + off * es, m * es);
            collie__count_sent(comm, COLLIE_LANE_COLL, m * es);
        }
        collie_status st = collie__win_sync(comm);
        if (st != COLLIE_OK)
            return st;
        if (!is_root)
            collie__copy_out(op, buf + off * es, collie__win_slot(comm, root, parity), m * es);
    }
    return COLLIE_OK;
}
