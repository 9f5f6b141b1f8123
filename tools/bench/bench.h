/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.h - `collie bench`: the measuring core shared by the collie command
 * and the baseline programs (collie-bench-mpi, collie-bench-gloo).
 *
 * A *backend* runs one collective of the library under test; the *sweep*
 * times every size with it and checks the results; the *report* prints the
 * nccl-tests table and writes CSV, JSON and plots.  The driver (driver.c)
 * launches the jobs and merges their rows, so that every library is
 * measured with the identical loop.
 */
#ifndef COLLIE_BENCH_H
#define COLLIE_BENCH_H

#include <stddef.h>
#include <stdio.h>

#include "collie.h"

#ifdef __cplusplus
extern "C" { /* the Gloo baseline is C++ */
#endif

enum bench_coll {
    BENCH_ALLREDUCE,
    BENCH_BROADCAST,
    BENCH_REDUCE,
    BENCH_ALLGATHER,
    BENCH_REDUCE_SCATTER,
    BENCH_ALLTOALL,
    BENCH_PINGPONG, /* send/recv between rank pairs (0-1, 2-3, ...); not part of "all" */
    BENCH_OVERLAP,  /* an allreduce hidden behind computation (overlap.c); not part of "all" */
    BENCH_FUSION,   /* many small allreduces one by one vs fused (fusion.c); not part of "all" */
    BENCH_NEIGHBOR, /* neighbor_allreduce over --topology (collie only); not part of "all" */
    BENCH_HIER_NEIGHBOR,      /* hierarchical_neighbor_allreduce: --topology over the hosts */
    BENCH_NEIGHBOR_ALLGATHER, /* neighbor_allgather over --topology: the in-neighbours' blocks */
    BENCH_NCOLLS
};

struct bench_opts;

/* `collie bench ...` (driver.c): launches the measuring jobs; returns the exit code. */
int collie_tool_bench(int argc, char **argv);

/*
 * What --baseline may name, each measured beside collie by its own program
 * with the same sweep: "mpi" (collie-bench-mpi, Debian's Open MPI, under
 * mpirun), "gloo" (collie-bench-gloo, Gloo's collectives over TCP, under
 * collie run), "torch" (backend_torch.py: torch.distributed on Gloo, under
 * collie run), and the peer MPIs from the package index, "impi" (Intel MPI),
 * "mpich" and "ompi5" (Open MPI 5): collie-bench-NAME, the MPI program built
 * with that MPI's own mpicc, under its own mpiexec (bench_peer_prefix); and
 * "oneccl" (collie-bench-oneccl, oneCCL's C++ API, under the mpiexec of the
 * Intel MPI installed beside it, which bootstraps its KVS).
 */
#define BENCH_MAX_BASELINES 7

/* Whether baseline name runs under an MPI's launcher (every MPI, and oneCCL). */
int bench_is_mpi(const char *name);
/* How the text names baseline name ("Intel MPI"). */
const char *bench_baseline_title(const char *name);
/* Where peer MPI name (impi, mpich, ompi5) is installed: COLLIE_BENCH_PEERS/name, else
 * ~/.cache/collie/peers/name (scripts/peers_env.sh's folder); 0, or -1 if too long. */
int bench_peer_prefix(const char *name, char *buf, size_t len);

struct bench_backend {
    const char *name; /* "collie", "mpi" */
    int rank, size, local_size;
    void *impl;
    /* 0 on success; else -1 and error() says why.  count as the API takes it. */
    int (*run)(struct bench_backend *b, enum bench_coll c, const void *send, void *recv,
               size_t count, collie_dtype t, collie_op op, int root);
    int (*barrier)(struct bench_backend *b);
    /* Combines one value per rank: MAX for doubles, SUM for long longs. */
    int (*max_double)(struct bench_backend *b, double *v);
    int (*sum_ll)(struct bench_backend *b, long long *v);
    const char *(*algo)(struct bench_backend *b, enum bench_coll c, size_t bytes);
    const char *(*error)(struct bench_backend *b);
    int (*supports)(struct bench_backend *b, collie_dtype t, collie_op op);
    /* Whether the library has collective c; NULL: every one.  The sweep skips the others. */
    int (*has_coll)(struct bench_backend *b, enum bench_coll c);
    /* A non-blocking allreduce: *h is what wait() completes (overlap, fusion). */
    int (*iallreduce)(struct bench_backend *b, const void *send, void *recv, size_t count,
                      collie_dtype t, collie_op op, void **h);
    int (*wait)(struct bench_backend *b, void *h);
    /* Brackets calls to fuse (1: start, 0: end); NULL where the library cannot fuse. */
    int (*group)(struct bench_backend *b, int start);
    /*
     * The neighbour operations: element i of this rank's result of the last
     * step run (count: the call's), for the inputs bench_input gives, and
     * how many blocks of count a gather's result holds; NULL where the
     * library has no neighbour operations.
     */
    double (*neighbor_expected)(const struct bench_backend *b, const struct bench_opts *o, size_t i,
                                size_t count);
    int (*neighbor_blocks)(const struct bench_backend *b);
    /*
     * --libmem: the library's own allocator for the buffers (collie_mem_alloc,
     * MPI_Alloc_mem); NULL where it has none.  NULL when out of memory.
     */
    void *(*mem_alloc)(struct bench_backend *b, size_t bytes);
    void (*mem_free)(struct bench_backend *b, void *p);
};

#define BENCH_MAX_SIZES 1000 /* rows of one sweep (-b, -e, -f) */

struct bench_opts {
    int colls[BENCH_NCOLLS]; /* which collectives, in order */
    int ncolls;
    size_t min_bytes, max_bytes;
    double factor;
    int mlbench; /* --sizes mlbench: element counts round(logspace(0, 8, 80)) */
    collie_dtype dtype;
    collie_op op;
    int iters, warmup, inplace, check, root;
    int offset[2]; /* --offset: the send and receive buffers this far past a page; -1: malloc's */
    int hugepages; /* --hugepages: both buffers on 2 MiB pages (transparent huge pages) */
    int libmem;    /* --libmem: both buffers from each library's own allocator */
    int nranks;    /* -n: launch this many ranks */
    int rounds;    /* A B A B ...: repetitions of every job */
    int stream;
    int noise;       /* busy threads beside each rank (--noise) */
    double min_time; /* seconds each size is timed for at least (--min-time) */
    int round;       /* internal: the round a measuring job belongs to */
    int fusion;      /* fusion: 0 the 62 tensors of ResNet-18, else this many of -b bytes */
    int dry_run;     /* list the sizes, measure nothing */
    int corrupt;     /* testing: rank 0 flips a byte of each checked result */
    const char *algo, *csv, *json, *plot, *raw;
    const char *tune; /* --tune FILE: measure the cost model's rates, write the description */
    double tune_wait; /* --tune-wait: seconds in all --tune waits for the near placement */
    /* --baseline: the libraries measured beside collie, in the order named */
    const char *baselines[BENCH_MAX_BASELINES];
    int nbaselines;
    const char *hosts, *hostfile, *rsh; /* across hosts: passed to collie run (and mpirun) */
    const char *mpi_preload; /* --mpi-preload: LIB (the mpi baseline's) or NAME=LIB,... */
    const char *topology;    /* neighbor_allreduce: collie_schedule_from_name's name */
};

/* One measured size. */
struct bench_row {
    char backend[8];
    int coll, round, ranks, local_size;
    size_t bytes, count;
    collie_dtype dtype;
    collie_op op;
    int inplace;
    double mean_us, median_us; /* slowest rank's mean and median per operation */
    double min_us, max_us;     /* merged rows only: the fastest and slowest round's mean */
    int rounds;                /* merged rows only: how many rounds were merged */
    int rounds_total;          /* merged rows only: how many rounds there were */
    long long wrong;           /* -1: not checked */
    char algo[24];
    double comm_us, comp_us; /* overlap: the allreduce alone, the computation alone */
    double comm_cpu_us;      /* overlap: CPU time the process spent per allreduce alone */
    /*
     * The machine's CPU-to-CPU handoff, ns, probed before and after the size
     * was timed: the larger of the two (merged rows: of every round); 0 where
     * nothing was probed (fewer than 2 CPUs, --noise).
     */
    double handoff_ns;
};

struct bench_rows {
    struct bench_row *row;
    size_t n, cap;
    /*
     * A measuring job's rank 0: the driver's raw file, where each row is
     * appended as it is added, so that a sweep stopped midway (a signal, a
     * job that failed) keeps what it measured.  raw_failed: an append failed.
     */
    const char *raw;
    int raw_failed;
};

/* pingpong: the rank this one exchanges with (0-1, 2-3, ...), or -1 for an odd one out. */
static inline int bench_partner(const struct bench_backend *b)
{
    int p = b->rank ^ 1;
    return p < b->size ? p : -1;
}

/* Whether --baseline named this library. */
int bench_has_baseline(const struct bench_opts *o, const char *name);

/* The library --mpi-preload puts into MPI baseline NAME's ranks, into buf; NULL: none. */
const char *bench_preload_for(const struct bench_opts *o, const char *name, char *buf, size_t len);

/*
 * COLLIE_AVG for a library without an average: buf holds the sum of n
 * ranks' inputs; divides it in the element's own arithmetic (float16 and
 * bfloat16 through float, as collie does).
 */
void bench_divide(void *buf, size_t count, collie_dtype t, int n);

/* Parses the options common to collie bench and collie-bench-mpi; argv[0] is the command. */
int bench_parse(int argc, char **argv, struct bench_opts *o, const char *prog);
void bench_usage(FILE *out, const char *prog);

/*
 * Starts n threads that compute until bench_noise_stop(), as a BLAS or OpenMP
 * pool beside a training job does (noise.c); 0, or -1 if one could not start.
 */
int bench_noise_start(int n);
void bench_noise_stop(void);

/*
 * The machine's CPU-to-CPU latency now: half the round trip of a cache line
 * between two threads pinned to two CPUs (handoff.c), in ns; takes at most
 * about BENCH_PROBE_BUDGET_S.  0 where there are not two CPUs to pin to.
 */
#define BENCH_PROBE_BUDGET_S 1e-3 /* the probe stops after this long, answered or not */
double bench_handoff_ns(void);
/*
 * The same in a job: rank `rank` 0 probes (or reads COLLIE_TEST_PROBE_NS
 * where a test sets it) while every other rank sleeps through the probe's
 * budget and half again, and gets 0.
 */
double bench_probe_handoff_ns(int rank);

/* Seconds on the monotonic clock (the MPI baseline links no libcollie: no collie_wtime). */
double bench_now_s(void);
const char *bench_coll_name(int c);
size_t bench_dtype_size(collie_dtype t);
const char *bench_dtype_name(collie_dtype t);
const char *bench_op_name(collie_op op);
/*
 * `collie bench --tune FILE` on every rank of a job (tune.c): measures the
 * cost model's rates; rank 0 writes the machine description.  0, or -1 with
 * a message on stderr.
 */
int bench_tune(const char *path, double wait_s);

/* "4096", "64K", "16M", "1G" (powers of 1024, an optional B) into *out; 0, or -1. */
int bench_parse_bytes(const char *s, size_t *out);
/*
 * Whether o's sweep (-b, -e, -f; --sizes mlbench has its own) ends within
 * BENCH_MAX_SIZES sizes, a table one can read: 0, or -1 with the count on
 * stderr.  bench_parse and `collie sim` both check it.
 */
int bench_check_sweep(const struct bench_opts *o, const char *prog);
/* A collective's or a dtype's number by its name (any case); -1 when none has it. */
int bench_coll_by_name(const char *name);
int bench_dtype_by_name(const char *name);
/* nccl-tests' bus bandwidth factor for c on n ranks. */
double bench_busbw_factor(int c, int n);

/* The sizes (total bytes of the largest buffer) a sweep visits for c, in order. */
size_t bench_sizes(const struct bench_opts *o, int c, int nranks, size_t **out);

/*
 * Runs every size of every selected collective on b; rank 0 collects the
 * rows, tagged with `round`.  0, or -1 with a message on stderr.
 */
int bench_sweep(struct bench_backend *b, const struct bench_opts *o, int round,
                struct bench_rows *rows);

void bench_rows_add(struct bench_rows *rows, const struct bench_row *r);

/* Rank r of n's input element i for collective c, and the reduced value (sweep.c). */
double bench_input(int c, collie_op op, int r, int n, size_t i);
double bench_reduced(collie_dtype t, collie_op op, int n, size_t i);
/* The middle of n values (the mean of the two middle ones for even n); sorts v. */
double bench_median(double *v, int n);

/*
 * Operations to time for --min-time, from one that took est seconds (the
 * slowest rank's, so that every rank runs as many): 3 to --iters.
 */
int bench_iters_for(const struct bench_opts *o, double est);

/* Writes v as element i of p in dtype t. */
void bench_encode(collie_dtype t, void *p, size_t i, double v);
/* Element i of p in dtype t. */
double bench_decode(collie_dtype t, const void *p, size_t i);

/* The overlap and fusion measurements (overlap.c, fusion.c): rows as bench_sweep's. */
int bench_overlap(struct bench_backend *b, const struct bench_opts *o, int round,
                  struct bench_rows *rows);
int bench_fusion(struct bench_backend *b, const struct bench_opts *o, int round,
                 struct bench_rows *rows);
/*
 * The neighbour operations of collie's backend (neighbor.c): a schedule by
 * --topology name (over the ranks, or over the hosts for hierarchical),
 * one step per call, and the formula of the last step for the check.
 */
struct bench_neighbor {
    const char *topology;
    collie_schedule *sched; /* made at the first call */
    long long step;         /* the next step */
    const collie_topology *last;
    int *host_of;         /* every rank's host */
    enum bench_coll coll; /* BENCH_NEIGHBOR, BENCH_HIER_NEIGHBOR or BENCH_NEIGHBOR_ALLGATHER */
};
int bench_neighbor_run(struct bench_neighbor *nb, collie_comm *comm, enum bench_coll c,
                       const void *send, void *recv, size_t count, collie_dtype t);
/* Element i of rank's result of the last step (count elements per block). */
double bench_neighbor_expected(const struct bench_neighbor *nb, const struct bench_opts *o,
                               int rank, int size, size_t i, size_t count);
/* The in-degree of rank (of its host, for hierarchical) in the last step. */
int bench_neighbor_blocks(const struct bench_neighbor *nb, int rank);
void bench_neighbor_free(struct bench_neighbor *nb);

/* Raw rows for the driver: one tab-separated line per row, appended to path; 0, or -1. */
int bench_rows_append_raw(const struct bench_row *r, const char *path);
/* Every row of path into rows; 0, or -1 if it cannot be opened. */
int bench_rows_read_raw(struct bench_rows *rows, const char *path);

#ifdef __cplusplus
}
#endif

#endif
