/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory.c - MPI_Alloc_mem and MPI_Free_mem on collie_mem_alloc: memory the
 * ranks of a host map from each other, so that collie's single copies
 * between them are plain copies instead of the kernel's (docs/DESIGN.md,
 * *Buffers the peers map*).  MPI's own calls on such memory (sends, windows,
 * the calls collie leaves to MPI) see ordinary memory.
 *
 * Where collie is off (COLLIE_MPI=0, or it did not start) or refuses, MPI
 * allocates, as it does for an info MPI's implementation may act on; a free
 * goes to collie when the memory is collie's, else to MPI.
 */
#include "interpose.h"

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    void *p = NULL;
    if (cmpi_active() && size > 0 && baseptr && collie_mem_alloc(&p, (size_t)size) == COLLIE_OK) {
        *(void **)baseptr = p;
        return MPI_SUCCESS;
    }
    return PMPI_Alloc_mem(size, info, baseptr);
}

int MPI_Free_mem(void *base)
{
    /* collie_mem_free refuses, touching nothing, what collie_mem_alloc did not return. */
    if (base && collie_mem_free(base) == COLLIE_OK)
        return MPI_SUCCESS;
    return PMPI_Free_mem(base);
}
