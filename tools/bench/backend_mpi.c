/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_mpi.c - collie-bench-mpi: the same sweep as `collie bench`, with
 * MPI's collectives.  `collie bench --baseline mpi` launches it with mpirun
 * and reads back its rows; it is a separate program so that libcollie never
 * links MPI.  Only collie.h's enums are used from collie.
 *
 * float16 and bfloat16 have no MPI datatype: they travel as MPI_UINT16_T and
 * reduce through user-defined ops (in float, rounded after each combination,
 * which is all MPI allows).  MPI has no average: AVG is SUM, then a division
 * on the ranks that receive the result, as Horovod does.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The baseline this program measures: "mpi" (Debian's Open MPI, built by CMake's
 * FindMPI), or the name a peer MPI's build gives it (impi, mpich, ompi5). */
#ifndef BENCH_MPI_NAME
#define BENCH_MPI_NAME "mpi"
#endif

static MPI_Op half_ops[2][4]; /* [bfloat16?][sum, prod, min, max] */
static char last_error[MPI_MAX_ERROR_STRING + 64];

static float widen(uint16_t h, int bf16)
{
    if (bf16) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    _Float16 x;
    memcpy(&x, &h, 2);
    return (float)x;
}

static uint16_t narrow(float f, int bf16)
{
    uint16_t h;
    if (bf16) {
        uint32_t u;
        memcpy(&u, &f, 4);
        return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
    _Float16 x = (_Float16)f;
    memcpy(&h, &x, 2);
    return h;
}

#define HALF_OP(NAME, BF16, EXPR)                                                                  \
    static void NAME(void *in, void *inout, int *len, MPI_Datatype *t)                             \
    {                                                                                              \
        (void)t;                                                                                   \
        const uint16_t *x = in;                                                                    \
        uint16_t *y = inout;                                                                       \
        for (int i = 0; i < *len; i++) {                                                           \
            float a = widen(x[i], BF16), b = widen(y[i], BF16);                                    \
            y[i] = narrow(EXPR, BF16);                                                             \
        }                                                                                          \
    }
HALF_OP(f16_sum, 0, a + b)
HALF_OP(f16_prod, 0, a *b)
HALF_OP(f16_min, 0, b < a ? b : a)
HALF_OP(f16_max, 0, b > a ? b : a)
HALF_OP(bf16_sum, 1, a + b)
HALF_OP(bf16_prod, 1, a *b)
HALF_OP(bf16_min, 1, b < a ? b : a)
HALF_OP(bf16_max, 1, b > a ? b : a)

static MPI_Datatype mpi_type(collie_dtype t)
{
    switch (t) {
    case COLLIE_FLOAT32: return MPI_FLOAT;
    case COLLIE_FLOAT64: return MPI_DOUBLE;
    case COLLIE_INT8: return MPI_INT8_T;
    case COLLIE_UINT8: return MPI_UINT8_T;
    case COLLIE_INT32: return MPI_INT32_T;
    case COLLIE_INT64: return MPI_INT64_T;
    default: return MPI_UINT16_T;
    }
}

static MPI_Op mpi_op(collie_dtype t, collie_op op)
{
    int k = op == COLLIE_PROD ? 1 : op == COLLIE_MIN ? 2 : op == COLLIE_MAX ? 3 : 0;
    if (t == COLLIE_FLOAT16 || t == COLLIE_BFLOAT16)
        return half_ops[t == COLLIE_BFLOAT16][k];
    static const MPI_Op native[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    return native[k];
}

static int check(int rc)
{
    if (rc == MPI_SUCCESS)
        return 0;
    int len;
    MPI_Error_string(rc, last_error, &len);
    return -1;
}

static int run(struct bench_backend *b, enum bench_coll c, const void *send, void *recv,
               size_t count, collie_dtype t, collie_op op, int root)
{
    MPI_Datatype dt = mpi_type(t);
    MPI_Op mop = mpi_op(t, op);
    int n = (int)count, avg = op == COLLIE_AVG, rc = MPI_ERR_OTHER;
    size_t es = bench_dtype_size(t);
    const void *in = send == recv ? MPI_IN_PLACE : send;
    switch (c) {
    case BENCH_ALLREDUCE:
        rc = MPI_Allreduce(in, recv, n, dt, mop, MPI_COMM_WORLD);
        if (avg)
            bench_divide(recv, count, t, b->size);
        break;
    case BENCH_BROADCAST: rc = MPI_Bcast(recv, n, dt, root, MPI_COMM_WORLD); break;
    case BENCH_REDUCE:
        rc = MPI_Reduce(b->rank == root ? in : send, recv, n, dt, mop, root, MPI_COMM_WORLD);
        if (avg && b->rank == root)
            bench_divide(recv, count, t, b->size);
        break;
    case BENCH_ALLGATHER: /* in place: the own block already sits in recv */
        in =
            (const char *)send == (char *)recv + (size_t)b->rank * count * es ? MPI_IN_PLACE : send;
        rc = MPI_Allgather(in, n, dt, recv, n, dt, MPI_COMM_WORLD);
        break;
    case BENCH_REDUCE_SCATTER:
        if ((const char *)recv == (const char *)send + (size_t)b->rank * count * es) {
            /* collie's in-place form keeps the block where it is; MPI's moves it to the front */
            rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, (void *)send, n, dt, mop, MPI_COMM_WORLD);
            memmove(recv, send, count * es);
        } else {
            rc = MPI_Reduce_scatter_block(send, recv, n, dt, mop, MPI_COMM_WORLD);
        }
        if (avg)
            bench_divide(recv, count, t, b->size);
        break;
    case BENCH_ALLTOALL: rc = MPI_Alltoall(in, n, dt, recv, n, dt, MPI_COMM_WORLD); break;
    case BENCH_PINGPONG: {
        int peer = bench_partner(b);
        rc = MPI_SUCCESS;
        if (peer < 0)
            break;
        if (b->rank % 2 == 0 &&
            (rc = MPI_Send(send, n, dt, peer, 0, MPI_COMM_WORLD)) == MPI_SUCCESS)
            rc = MPI_Recv(recv, n, dt, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (b->rank % 2 && (rc = MPI_Recv(recv, n, dt, peer, 0, MPI_COMM_WORLD,
                                               MPI_STATUS_IGNORE)) == MPI_SUCCESS)
            rc = MPI_Send(send, n, dt, peer, 0, MPI_COMM_WORLD);
        break;
    }
    case BENCH_OVERLAP: /* bench_overlap and bench_fusion call iallreduce and run(ALLREDUCE) */
    case BENCH_FUSION:
    case BENCH_NEIGHBOR: /* refused with --baseline mpi (options.c) */
    case BENCH_HIER_NEIGHBOR:
    case BENCH_NEIGHBOR_ALLGATHER:
    case BENCH_NCOLLS: break;
    }
    return check(rc);
}

/* A pending MPI_Iallreduce, and what AVG still has to divide once it completes. */
struct pending {
    MPI_Request req;
    void *recv;
    size_t count;
    collie_dtype t;
    int avg;
};

static int iallreduce(struct bench_backend *b, const void *send, void *recv, size_t count,
                      collie_dtype t, collie_op op, void **h)
{
    (void)b;
    struct pending *p = malloc(sizeof *p);
    if (!p)
        return -1;
    *p = (struct pending){.recv = recv, .count = count, .t = t, .avg = op == COLLIE_AVG};
    *h = p;
    return check(MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, mpi_type(t),
                                mpi_op(t, op), MPI_COMM_WORLD, &p->req));
}

static int wait(struct bench_backend *b, void *h)
{
    struct pending *p = h;
    int rc = check(MPI_Wait(&p->req, MPI_STATUS_IGNORE));
    if (rc == 0 && p->avg)
        bench_divide(p->recv, p->count, p->t, b->size);
    free(p);
    return rc;
}

static int barrier(struct bench_backend *b)
{
    (void)b;
    return check(MPI_Barrier(MPI_COMM_WORLD));
}

static int max_double(struct bench_backend *b, double *v)
{
    (void)b;
    return check(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
}

static int sum_ll(struct bench_backend *b, long long *v)
{
    (void)b;
    return check(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
}

static const char *algo(struct bench_backend *b, enum bench_coll c, size_t bytes)
{
    (void)b, (void)c, (void)bytes;
    return BENCH_MPI_NAME;
}

static const char *error(struct bench_backend *b)
{
    (void)b;
    return last_error;
}

static int supports(struct bench_backend *b, collie_dtype t, collie_op op)
{
    (void)b, (void)t, (void)op;
    return 1;
}

/* --libmem: MPI's own allocator, as collie's bench gives collie_mem_alloc. */
static void *mem_alloc(struct bench_backend *b, size_t bytes)
{
    (void)b;
    void *p = NULL;
    return MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &p) == MPI_SUCCESS ? p : NULL;
}

static void mem_free(struct bench_backend *b, void *p)
{
    (void)b;
    MPI_Free_mem(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_User_function *fns[2][4] = {{f16_sum, f16_prod, f16_min, f16_max},
                                    {bf16_sum, bf16_prod, bf16_min, bf16_max}};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++)
            MPI_Op_create(fns[i][k], 1 /* commutative */, &half_ops[i][k]);
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, "collie-bench-" BENCH_MPI_NAME)) {
        MPI_Finalize();
        return 2;
    }
    MPI_Comm local;
    struct bench_backend b = {.name = BENCH_MPI_NAME,
                              .run = run,
                              .barrier = barrier,
                              .max_double = max_double,
                              .sum_ll = sum_ll,
                              .algo = algo,
                              .error = error,
                              .supports = supports,
                              .iallreduce = iallreduce,
                              .wait = wait,
                              .group = NULL, /* MPI cannot fuse: one call per tensor */
                              .mem_alloc = mem_alloc,
                              .mem_free = mem_free};
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &b.local_size);
    MPI_Comm_free(&local);
    struct bench_rows rows = {.raw = b.rank == 0 ? o.raw : NULL};
    int rc = bench_sweep(&b, &o, o.round, &rows) || rows.raw_failed ? 1 : 0;
    free(rows.row);
    MPI_Finalize();
    return rc;
}
