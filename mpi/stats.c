/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.c - what the interposer did: per collective, the calls and bytes
 * collie ran and those it handed to MPI, by reason.  With COLLIE_DEBUG=INFO
 * rank 0 prints the sums over all ranks at MPI_Finalize.
 */
#include <stdio.h>

#include "interpose.h"

static unsigned long long calls[CMPI_COLL_COUNT][CMPI_REASON_COUNT];
static unsigned long long bytes[CMPI_COLL_COUNT][CMPI_REASON_COUNT];

static const char *const coll_names[CMPI_COLL_COUNT] = {
    "MPI_Allreduce",
    "MPI_Reduce",
    "MPI_Bcast",
    "MPI_Allgather",
    "MPI_Reduce_scatter_block",
    "MPI_Reduce_scatter",
    "MPI_Alltoall",
    "MPI_Barrier",
};

static const char *const reason_names[CMPI_REASON_COUNT] = {
    "on collie",
    "collie not started",
    "communicator without collie",
    "datatype",
    "op",
    "send/receive signature differs",
    "unequal counts",
};

/*
 * Relaxed loads and stores, not read-modify-writes: a locked add would cost a
 * tenth of a small allreduce.  Calls that MPI serialises (every thread level
 * but MPI_THREAD_MULTIPLE, and that level's calls on one communicator) count
 * exactly; concurrent calls on different communicators may lose a count.
 */
static void add(unsigned long long *counter, unsigned long long n)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

void cmpi_count(enum cmpi_coll coll, enum cmpi_reason where, size_t n)
{
    add(&calls[coll][where], 1);
    add(&bytes[coll][where], (unsigned long long)n);
}

/* For tests (found with dlsym): this rank's counts of coll for reason. */
__attribute__((visibility("default"))) void collie_mpi_counts(int coll, int reason,
                                                              unsigned long long *ncalls,
                                                              unsigned long long *nbytes)
{
    int ok = coll >= 0 && coll < CMPI_COLL_COUNT && reason >= 0 && reason < CMPI_REASON_COUNT;
    *ncalls = ok ? __atomic_load_n(&calls[coll][reason], __ATOMIC_RELAXED) : 0;
    *nbytes = ok ? __atomic_load_n(&bytes[coll][reason], __ATOMIC_RELAXED) : 0;
}

static void print_bytes(char *out, size_t len, unsigned long long b)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4)
        v /= 1024, u++;
    snprintf(out, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

void cmpi_report(void)
{
    int verbose = cmpi_verbose(), any, rank, size;
    PMPI_Allreduce(&verbose, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any)
        return;
    enum { N = CMPI_COLL_COUNT * CMPI_REASON_COUNT };
    unsigned long long mine[2][N], sum[2][N];
    for (int c = 0; c < CMPI_COLL_COUNT; c++)
        for (int r = 0; r < CMPI_REASON_COUNT; r++) {
            mine[0][c * CMPI_REASON_COUNT + r] = calls[c][r];
            mine[1][c * CMPI_REASON_COUNT + r] = bytes[c][r];
        }
    PMPI_Reduce(mine, sum, 2 * N, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != 0)
        return;
    fprintf(stderr, "collie-mpi: collectives of %d rank(s), summed over ranks: calls (bytes)%s\n",
            size, cmpi_active() ? "" : "; collie did not run");
    for (int c = 0; c < CMPI_COLL_COUNT; c++) {
        unsigned long long *n = sum[0] + c * CMPI_REASON_COUNT;
        unsigned long long *b = sum[1] + c * CMPI_REASON_COUNT;
        unsigned long long to_mpi = 0, to_mpi_bytes = 0;
        for (int r = 1; r < CMPI_REASON_COUNT; r++)
            to_mpi += n[r], to_mpi_bytes += b[r];
        if (!n[0] && !to_mpi)
            continue;
        char on[32], off[32], line[512];
        print_bytes(on, sizeof on, b[0]);
        print_bytes(off, sizeof off, to_mpi_bytes);
        int len = snprintf(line, sizeof line, "  %-26s on collie %llu (%s), on MPI %llu (%s)",
                           coll_names[c], n[0], on, to_mpi, off);
        for (int r = 1; r < CMPI_REASON_COUNT && len < (int)sizeof line; r++)
            if (n[r])
                len += snprintf(line + len, sizeof line - (size_t)len, "%s%s: %llu",
                                len && line[len - 1] == ')' ? " -- " : ", ", reason_names[r], n[r]);
        fprintf(stderr, "%s\n", line);
    }
}
