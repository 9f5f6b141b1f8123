/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * collectives.c - the interposed collectives.
 *
 * Each takes the call when collie can honour it as MPI defines it: a
 * communicator with a collie twin (comms.c), types and ops that map
 * (types.c), MPI_IN_PLACE in the collective's own meaning, counts and roots
 * in range.  Anything else -- including arguments MPI would reject, so that
 * MPI reports them its way -- goes to PMPI_* unchanged and is counted with
 * its reason.  Ranks decide alone, from their own arguments: MPI requires
 * them to pass matching types and counts, and a program that pairs a derived
 * type on one rank with a predefined one on another is the one case that
 * would split (one rank on collie, one on MPI); it is not detected.
 *
 * The non-blocking forms (MPI_Iallreduce, ...) are not interposed: MPI runs
 * them and their requests.  Mixing is safe: every rank still issues one
 * communicator's collectives in one order, and the two engines never wait on
 * each other.
 */
#include <stdint.h>

#include "interpose.h"

/* Why a call on comm cannot go to collie before its arguments are looked at. */
static enum cmpi_reason comm_reason(collie_comm *cc)
{
    return cc ? CMPI_ON_COLLIE : cmpi_active() ? CMPI_COMM : CMPI_OFF;
}

/* Payload bytes of count elements of type on this rank, for the counts. */
static size_t payload(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return 0;
    return (size_t)count * (size_t)size;
}

static int finish(MPI_Comm comm, collie_comm *cc, collie_status st, const char *call)
{
    return st == COLLIE_OK ? MPI_SUCCESS : cmpi_fail(comm, cc, st, call);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    collie_comm *cc = cmpi_comm(comm);
    collie_dtype d;
    collie_op o;
    enum cmpi_reason why = comm_reason(cc);
    if (why == CMPI_ON_COLLIE)
        why = cmpi_map_reduction(type, op, &d, &o);
    if (why != CMPI_ON_COLLIE || count < 0 || (count > 0 && !recvbuf)) {
        cmpi_count(CMPI_ALLREDUCE, why, payload(count, type));
        return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    }
    cmpi_count(CMPI_ALLREDUCE, why, (size_t)count * cmpi_dtype_size(d));
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    return finish(comm, cc, collie_allreduce(cc, in, recvbuf, (size_t)count, d, o),
                  "MPI_Allreduce");
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    collie_comm *cc = cmpi_comm(comm);
    collie_dtype d;
    collie_op o;
    enum cmpi_reason why = comm_reason(cc);
    if (why == CMPI_ON_COLLIE)
        why = cmpi_map_reduction(type, op, &d, &o);
    int at_root = cc && collie_rank(cc) == root;
    if (why != CMPI_ON_COLLIE || count < 0 || root < 0 || root >= collie_size(cc) ||
        (sendbuf == MPI_IN_PLACE && !at_root) || (count > 0 && at_root && !recvbuf)) {
        cmpi_count(CMPI_REDUCE, why, payload(count, type));
        return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    }
    cmpi_count(CMPI_REDUCE, why, (size_t)count * cmpi_dtype_size(d));
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    return finish(comm, cc,
                  collie_reduce(cc, in, at_root ? recvbuf : NULL, (size_t)count, d, o, root),
                  "MPI_Reduce");
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    collie_comm *cc = cmpi_comm(comm);
    enum cmpi_reason why = comm_reason(cc);
    size_t esize = why == CMPI_ON_COLLIE ? cmpi_movable_size(type) : 0;
    if (why == CMPI_ON_COLLIE && !esize)
        why = CMPI_DATATYPE;
    if (why != CMPI_ON_COLLIE || count < 0 || root < 0 || root >= collie_size(cc) ||
        (count > 0 && !buf)) {
        cmpi_count(CMPI_BCAST, why, payload(count, type));
        return PMPI_Bcast(buf, count, type, root, comm);
    }
    size_t n = (size_t)count * esize;
    cmpi_count(CMPI_BCAST, why, n);
    return finish(comm, cc, collie_broadcast(cc, buf, n, COLLIE_UINT8, root), "MPI_Bcast");
}

/*
 * Allgather and alltoall move bytes: one element size for both sides, and
 * the same count, unless the send side is MPI_IN_PLACE (then MPI ignores it).
 */
static enum cmpi_reason movement(collie_comm *cc, const void *sendbuf, int sendcount,
                                 MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype,
                                 void *recvbuf, size_t *esize)
{
    enum cmpi_reason why = comm_reason(cc);
    if (why != CMPI_ON_COLLIE)
        return why;
    *esize = cmpi_movable_size(recvtype);
    if (!*esize)
        return CMPI_DATATYPE;
    if (sendbuf != MPI_IN_PLACE && (sendtype != recvtype || sendcount != recvcount))
        return cmpi_movable_size(sendtype) ? CMPI_SIGNATURE : CMPI_DATATYPE;
    if (recvcount < 0 || (recvcount > 0 && !recvbuf))
        return CMPI_SIGNATURE; /* MPI reports it */
    return CMPI_ON_COLLIE;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    collie_comm *cc = cmpi_comm(comm);
    size_t esize = 0;
    enum cmpi_reason why =
        movement(cc, sendbuf, sendcount, sendtype, recvcount, recvtype, recvbuf, &esize);
    if (why != CMPI_ON_COLLIE) {
        cmpi_count(CMPI_ALLGATHER, why, payload(recvcount, recvtype));
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    size_t n = (size_t)recvcount * esize;
    cmpi_count(CMPI_ALLGATHER, why, n);
    /* In place, the own block already sits at its place in recvbuf: collie's in-place form. */
    const void *in =
        sendbuf == MPI_IN_PLACE ? (const char *)recvbuf + (size_t)collie_rank(cc) * n : sendbuf;
    return finish(comm, cc, collie_allgather(cc, in, recvbuf, n, COLLIE_UINT8), "MPI_Allgather");
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    collie_comm *cc = cmpi_comm(comm);
    size_t esize = 0;
    enum cmpi_reason why =
        movement(cc, sendbuf, sendcount, sendtype, recvcount, recvtype, recvbuf, &esize);
    if (why != CMPI_ON_COLLIE) {
        cmpi_count(CMPI_ALLTOALL, why, payload(recvcount, recvtype));
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    size_t n = (size_t)recvcount * esize;
    cmpi_count(CMPI_ALLTOALL, why, n * (size_t)collie_size(cc));
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    return finish(comm, cc, collie_alltoall(cc, in, recvbuf, n, COLLIE_UINT8), "MPI_Alltoall");
}

/* Whether collie takes a reduce_scatter of recvcount per rank (and as which dtype and op). */
static enum cmpi_reason scatter_route(enum cmpi_reason why, int recvcount, const void *recvbuf,
                                      MPI_Datatype type, MPI_Op op, collie_dtype *d, collie_op *o)
{
    if (why == CMPI_ON_COLLIE)
        why = cmpi_map_reduction(type, op, d, o);
    if (why == CMPI_ON_COLLIE && (recvcount < 0 || (recvcount > 0 && !recvbuf)))
        why = CMPI_SIGNATURE; /* MPI reports it */
    return why;
}

/* MPI_IN_PLACE: the input is recvbuf (size blocks), the result its first block; collie's too. */
static int scatter_on_collie(enum cmpi_coll coll, const char *call, const void *sendbuf,
                             void *recvbuf, int recvcount, collie_dtype d, collie_op o,
                             MPI_Comm comm, collie_comm *cc)
{
    cmpi_count(coll, CMPI_ON_COLLIE,
               (size_t)recvcount * cmpi_dtype_size(d) * (size_t)collie_size(cc));
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    return finish(comm, cc, collie_reduce_scatter(cc, in, recvbuf, (size_t)recvcount, d, o), call);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    collie_comm *cc = cmpi_comm(comm);
    collie_dtype d;
    collie_op o;
    enum cmpi_reason why = scatter_route(comm_reason(cc), recvcount, recvbuf, type, op, &d, &o);
    if (why == CMPI_ON_COLLIE)
        return scatter_on_collie(CMPI_REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block", sendbuf,
                                 recvbuf, recvcount, d, o, comm, cc);
    int size = 1;
    PMPI_Comm_size(comm, &size);
    cmpi_count(CMPI_REDUCE_SCATTER_BLOCK, why, payload(recvcount, type) * (size_t)size);
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    collie_comm *cc = cmpi_comm(comm);
    enum cmpi_reason why = recvcounts ? comm_reason(cc) : CMPI_SIGNATURE;
    int size = 1;
    PMPI_Comm_size(comm, &size);
    size_t total = 0;
    for (int r = 0; recvcounts && r < size; r++) {
        total += recvcounts[r] > 0 ? (size_t)recvcounts[r] : 0;
        if (why == CMPI_ON_COLLIE && recvcounts[r] != recvcounts[0])
            why = CMPI_COUNTS;
    }
    collie_dtype d;
    collie_op o;
    why = scatter_route(why, recvcounts ? recvcounts[0] : 0, recvbuf, type, op, &d, &o);
    if (why == CMPI_ON_COLLIE)
        return scatter_on_collie(CMPI_REDUCE_SCATTER, "MPI_Reduce_scatter", sendbuf, recvbuf,
                                 recvcounts[0], d, o, comm, cc);
    cmpi_count(CMPI_REDUCE_SCATTER, why, total > INT32_MAX ? 0 : payload((int)total, type));
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    collie_comm *cc = cmpi_comm(comm);
    enum cmpi_reason why = comm_reason(cc);
    cmpi_count(CMPI_BARRIER, why, 0);
    if (why != CMPI_ON_COLLIE)
        return PMPI_Barrier(comm);
    return finish(comm, cc, collie_barrier(cc), "MPI_Barrier");
}
