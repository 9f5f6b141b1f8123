/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interpose.h - libcollie-mpi.so, the MPI interposer: what its files share.
 *
 * Preloaded (LD_PRELOAD) or linked before libmpi, the library defines
 * MPI_Init*, MPI_Finalize, the communicator constructors and the
 * collectives; each collective runs on collie when collie can honour the
 * call exactly as MPI defines it, and is handed to PMPI_* unchanged
 * otherwise.  Every decision is counted (stats.c) and reported at finalize.
 *
 *   init.c         MPI_Init / _thread / Finalize: collie's bootstrap over MPI
 *   comms.c        which collie communicator an MPI communicator has
 *   types.c        which MPI datatypes and ops map onto collie's
 *   collectives.c  the interposed collectives
 *   memory.c       MPI_Alloc_mem / Free_mem on collie_mem_alloc
 *   stats.c        the counts, and the report at finalize
 */
#ifndef COLLIE_MPI_INTERPOSE_H
#define COLLIE_MPI_INTERPOSE_H

#include <mpi.h>
#include <stddef.h>

#include "collie.h"

/* The interposed collectives, in report order. */
enum cmpi_coll {
    CMPI_ALLREDUCE,
    CMPI_REDUCE,
    CMPI_BCAST,
    CMPI_ALLGATHER,
    CMPI_REDUCE_SCATTER_BLOCK,
    CMPI_REDUCE_SCATTER,
    CMPI_ALLTOALL,
    CMPI_BARRIER,
    CMPI_COLL_COUNT
};

/* Why a call went to MPI: the report names each. */
enum cmpi_reason {
    CMPI_ON_COLLIE, /* not a fallback: collie ran it */
    CMPI_OFF,       /* collie did not start (or COLLIE_MPI=0) */
    CMPI_COMM,      /* a communicator without collie (intercommunicator, other constructor) */
    CMPI_DATATYPE,  /* a derived datatype, or a predefined one collie has no twin for */
    CMPI_OP,        /* a user-defined op, MAXLOC/MINLOC, a logical or bitwise op */
    CMPI_SIGNATURE, /* send and receive types or counts differ */
    CMPI_COUNTS,    /* MPI_Reduce_scatter with unequal counts */
    CMPI_REASON_COUNT
};

/* ---- init.c ---------------------------------------------------------------------------- */
/* Nonzero once collie runs MPI_COMM_WORLD's collectives. */
int cmpi_active(void);
/* The MPI error code that stands for a collie status (an error class of our own). */
int cmpi_error_code(collie_status status);
/* Applies comm's MPI error handler to a collie failure and returns what MPI_* must return. */
int cmpi_fail(MPI_Comm comm, collie_comm *cc, collie_status status, const char *call);
/* Nonzero when COLLIE_DEBUG asks for at least INFO. */
int cmpi_verbose(void);

/* ---- comms.c --------------------------------------------------------------------------- */
/* Sets up the attribute that ties a collie communicator to an MPI one; world is comm's. */
int cmpi_comms_init(collie_comm *world);
/* The collie communicator of comm, or NULL (the call goes to MPI). */
collie_comm *cmpi_comm(MPI_Comm comm);
/* Finalizes every collie communicator still held (MPI_Finalize). */
void cmpi_comms_finalize(void);

/* ---- types.c --------------------------------------------------------------------------- */
/*
 * For a reduction: the collie dtype and op of (type, op), or the reason
 * collie cannot take them (CMPI_DATATYPE or CMPI_OP); CMPI_ON_COLLIE when it can.
 */
enum cmpi_reason cmpi_map_reduction(MPI_Datatype type, MPI_Op op, collie_dtype *dtype,
                                    collie_op *cop);
/*
 * For data movement: how many bytes one element of type is, when collie can
 * move it as bytes (a predefined type without gaps), else 0.
 */
size_t cmpi_movable_size(MPI_Datatype type);
/* Bytes of one element of a mapped collie dtype. */
size_t cmpi_dtype_size(collie_dtype dtype);

/* ---- stats.c --------------------------------------------------------------------------- */
/* Counts one call of coll with bytes of payload on this rank, and where it went. */
void cmpi_count(enum cmpi_coll coll, enum cmpi_reason where, size_t bytes);
/* Sums the counts over MPI_COMM_WORLD (collective) and prints them on rank 0. */
void cmpi_report(void);

#endif
