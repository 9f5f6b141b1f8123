/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * types.c - which MPI datatypes and ops collie can take exactly.
 *
 * Reductions: the predefined types whose C type collie reduces (float,
 * double, 8/32/64-bit signed integers, 8-bit unsigned) with MPI_SUM,
 * MPI_PROD, MPI_MIN and MPI_MAX.  Everything else -- other integer widths,
 * unsigned wider than 8 bits, complex, MPI_C_BOOL, MAXLOC/MINLOC and their
 * pair types, logical and bitwise ops, user ops, derived types -- is MPI's.
 * Data movement (broadcast, allgather, alltoall) copies bytes, so it takes
 * every predefined type that has no gaps (MPI_DOUBLE_INT, whose extent
 * exceeds its size, does not qualify); derived types are MPI's.
 */
#include "interpose.h"

/* The collie twin of a predefined type that collie reduces; 0 if there is none. */
static int reducible(MPI_Datatype t, collie_dtype *d)
{
    if (t == MPI_FLOAT)
        *d = COLLIE_FLOAT32;
    else if (t == MPI_DOUBLE)
        *d = COLLIE_FLOAT64;
    else if ((t == MPI_INT && sizeof(int) == 4) || t == MPI_INT32_T)
        *d = COLLIE_INT32;
    else if (t == MPI_INT64_T || t == MPI_LONG_LONG || (t == MPI_LONG && sizeof(long) == 8))
        *d = COLLIE_INT64;
    else if (t == MPI_INT8_T || t == MPI_SIGNED_CHAR)
        *d = COLLIE_INT8;
    else if (t == MPI_UINT8_T || t == MPI_UNSIGNED_CHAR)
        *d = COLLIE_UINT8;
    else
        return 0;
    return 1;
}

enum cmpi_reason cmpi_map_reduction(MPI_Datatype type, MPI_Op op, collie_dtype *dtype,
                                    collie_op *cop)
{
    if (op == MPI_SUM)
        *cop = COLLIE_SUM;
    else if (op == MPI_PROD)
        *cop = COLLIE_PROD;
    else if (op == MPI_MIN)
        *cop = COLLIE_MIN;
    else if (op == MPI_MAX)
        *cop = COLLIE_MAX;
    else
        return CMPI_OP; /* before the type: MAXLOC's pair types are an op's matter */
    return reducible(type, dtype) ? CMPI_ON_COLLIE : CMPI_DATATYPE;
}

size_t cmpi_dtype_size(collie_dtype dtype)
{
    switch (dtype) {
    case COLLIE_FLOAT64:
    case COLLIE_INT64: return 8;
    case COLLIE_FLOAT32:
    case COLLIE_INT32: return 4;
    case COLLIE_FLOAT16:
    case COLLIE_BFLOAT16: return 2;
    default: return 1;
    }
}

size_t cmpi_movable_size(MPI_Datatype type)
{
    collie_dtype d;
    if (reducible(type, &d))
        return cmpi_dtype_size(d);
    int ints, addrs, types, combiner, size;
    MPI_Aint lb, extent;
    if (type == MPI_DATATYPE_NULL ||
        PMPI_Type_get_envelope(type, &ints, &addrs, &types, &combiner) != MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS)
        return 0;
    return size > 0 && lb == 0 && extent == size ? (size_t)size : 0;
}
