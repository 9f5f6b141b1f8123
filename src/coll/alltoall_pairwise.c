/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall_pairwise.c - alltoall in n-1 exchanges: at step k every rank
 * sends its block for rank me+k while receiving rank me-k's block for it, so
 * each step is a permutation and no rank is ever the target of two.
 */
#include "../transport/xfer.h"
#include "algo.h"

collie_status collie__alltoall_pairwise(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->size, me = comm->rank;
    const size_t block = op->count * op->elem_size;
    const unsigned char *send = op->sendbuf;
    unsigned char *recv = op->recvbuf;
    if (send == recv) { /* in place: the blocks still to send must survive the receives */
        unsigned char *copy = collie__scratch(comm, COLLIE_SCRATCH_WORK, block * (size_t)n);
        if (!copy)
            return comm->failed;
        collie__copy(copy, send, block * (size_t)n);
        send = copy;
    }
    collie__copy(recv + (size_t)me * block, send + (size_t)me * block, block);
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        collie_status st = collie__xfer_sendrecv(comm, to, send + (size_t)to * block, block, from,
                                                 recv + (size_t)from * block, block);
        if (st != COLLIE_OK)
            return st;
    }
    return COLLIE_OK;
}
