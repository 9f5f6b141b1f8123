/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce_scatter_direct.c - reduce_scatter in one copy: rank r reads block
 * r of every peer's send buffer (transport/shm.h's cross-memory attach) a
 * cache-sized piece at a time and reduces it with its own into its output,
 * instead of every rank staging all its blocks through its slot.
 *
 * Every rank publishes its send buffer and syncs (the descriptors are
 * compared there); each reduces its block (direct.c's pieces); a last sync.
 * In place with the result in the first block (recvbuf == sendbuf, as
 * MPI_IN_PLACE), a rank other than 0 would overwrite block 0 of its input,
 * which rank 0 reads: there the result lands in scratch and reaches the
 * output after the last sync.  The NCCL form (recvbuf the rank's own
 * block) writes only what this rank alone reads.
 */
#include <string.h>

#include "../transport/shm.h"
#include "algo.h"

collie_status collie__reduce_scatter_direct(collie_comm *comm, const struct collie__op *op)
{
    const size_t es = op->elem_size, count = op->count, base = (size_t)comm->rank * count;
    size_t piece;
    unsigned char *tmp = collie__direct_pieces(comm, es, &piece);
    unsigned char *out = op->recvbuf;
    if (tmp && op->recvbuf == op->sendbuf && comm->rank != 0)
        out = collie__scratch(comm, COLLIE_SCRATCH_WORK, count * es);
    if (!tmp || !out)
        return comm->failed;

    unsigned parity = collie__publish(comm, op->sendbuf, NULL);
    collie_status st = collie__win_sync(comm);
    for (size_t off = 0; st == COLLIE_OK && off < count; off += piece) {
        size_t m = count - off < piece ? count - off : piece;
        st = collie__direct_reduce_piece(comm, op, parity, base + off, m, tmp, out + off * es);
    }
    /* Every rank passes the last sync, a failed one too: its peers then learn at once. */
    collie_status last = collie__win_sync(comm);
    if (st == COLLIE_OK && last == COLLIE_OK && out != op->recvbuf)
        collie__copy(op->recvbuf, out, count * es);
    return st != COLLIE_OK ? st : last;
}
