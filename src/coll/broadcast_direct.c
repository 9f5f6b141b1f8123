/*
 * broadcast_direct.c - broadcast in one copy: every other rank reads the
 * root's buffer where the user keeps it (transport/shm.h's cross-memory
 * attach), all at once, instead of the root staging it through its slot
 * and each rank copying it out.
 *
 * The root publishes its buffer and every rank syncs (the descriptors are
 * compared there, before anybody touches a peer); each receiver copies the
 * whole message in one system call; a last sync, and the root may touch
 * its buffer again.  Two syncs a call where the window takes one per slot.
 */
#include "../transport/shm.h"
#include "algo.h"

collie_status collie__broadcast_direct(collie_comm *comm, const struct collie__op *op)
{
    const int root = collie__local_index(comm, op->root);
    const size_t bytes = op->count * op->elem_size;
    unsigned parity = collie__publish(comm, op->recvbuf, NULL);
    collie_status st = collie__win_sync(comm);
    if (st == COLLIE_OK && comm->rank != op->root) {
        uintptr_t from = collie__published_input(comm, root, parity);
        st = collie__attach_read(comm, root, op->recvbuf, from, bytes);
        if (st == COLLIE_OK)
            collie__count_sent(comm, COLLIE_LANE_COLL, bytes);
    }
    /* Every rank passes the last sync, a failed one too: its peers then learn at once. */
    collie_status last = collie__win_sync(comm);
    return st != COLLIE_OK ? st : last;
}
