/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpi_interpose.c - an ordinary MPI program that checks libcollie-mpi.so
 * when it is preloaded: every interposed collective's result equals, byte
 * for byte, what MPI itself (PMPI_*) computes from the same inputs in the
 * same run, and the interposer's counts (collie_mpi_counts, found with dlsym)
 * show that collie ran each call it should and handed each fallback to MPI
 * for the right reason.  Without the interposer it runs as a plain MPI test.
 *
 *   mpirun -n N -x LD_PRELOAD=libcollie-mpi.so test_mpi_interpose [check|kill]
 *
 * check  every collective x mapped dtype x op x count, MPI_IN_PLACE forms,
 *        communicators from dup/split/split_type/create used interleaved with
 *        their parent, 1,000 dup/free cycles without leaking descriptors or
 *        shared memory, the fallbacks, and MPI_ERRORS_RETURN on a mismatch
 * kill   the last rank SIGKILLs itself amid allreduces (the job must end)
 * With COLLIE_MPI=0 (or COLLIE_TEST_MPI_NOT_STARTED, where the test made
 * collie unable to start) every call must go to MPI, counted as such.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* mpi/interpose.h's enums, as the test sees them. */
enum { ALLREDUCE, REDUCE, BCAST, ALLGATHER, RSB, RS, ALLTOALL, BARRIER };
enum { ON_COLLIE, OFF, COMM, DATATYPE, OP, SIGNATURE, COUNTS };

static int rank, size;
static long checks;
static int off; /* COLLIE_MPI=0: every call must go to MPI, for that reason */
static void (*counts)(int, int, unsigned long long *, unsigned long long *);

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);                         \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static unsigned long long routed(int coll, int reason)
{
    unsigned long long n = 0, bytes;
    if (counts)
        counts(coll, reason, &n, &bytes);
    return n;
}

/* With the interposer: the call between two marks went where it should. */
#define EXPECT_ROUTE(coll, reason, call)                                                           \
    do {                                                                                           \
        int reason_ = off ? OFF : (reason);                                                        \
        unsigned long long before_ = routed(coll, reason_);                                        \
        call;                                                                                      \
        CHECK(!counts || routed(coll, reason_) == before_ + 1, "%s did not go %s (reason %d)",     \
              #call, reason_ == ON_COLLIE ? "to collie" : "to MPI", reason_);                      \
    } while (0)

struct type {
    MPI_Datatype t;
    const char *name;
    size_t size;
    int is_unsigned;
};

static void fill(void *buf, const struct type *ty, int count, int salt)
{
    for (int i = 0; i < count; i++) {
        int v = (int)(((long)i * 7 + rank * 3 + salt) % 5) - (ty->is_unsigned ? 0 : 2);
        char *p = (char *)buf + (size_t)i * ty->size;
        if (ty->t == MPI_FLOAT) {
            float f = (float)v;
            memcpy(p, &f, 4);
        } else if (ty->t == MPI_DOUBLE) {
            double d = v;
            memcpy(p, &d, 8);
        } else if (ty->size == 8) {
            int64_t x = v;
            memcpy(p, &x, 8);
        } else if (ty->size == 4) {
            int32_t x = v;
            memcpy(p, &x, 4);
        } else if (ty->size == 2) {
            int16_t x = (int16_t)v;
            memcpy(p, &x, 2);
        } else {
            *(int8_t *)p = (int8_t)v;
        }
    }
}

static void *buffer(size_t bytes) { return calloc(bytes ? bytes : 1, 1); }

static void check_reductions(MPI_Comm comm, int expect_collie)
{
    struct type types[] = {
        {MPI_FLOAT, "float", 4, 0},
        {MPI_DOUBLE, "double", 8, 0},
        {MPI_INT, "int", 4, 0},
        {MPI_INT32_T, "int32_t", 4, 0},
        {MPI_LONG, "long", sizeof(long), 0},
        {MPI_INT64_T, "int64_t", 8, 0},
        {MPI_LONG_LONG, "long long", 8, 0},
        {MPI_INT8_T, "int8_t", 1, 0},
        {MPI_SIGNED_CHAR, "signed char", 1, 0},
        {MPI_UINT8_T, "uint8_t", 1, 1},
        {MPI_UNSIGNED_CHAR, "unsigned char", 1, 1},
    };
    MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    int counts_[] = {0, 1, 7, 1000, 70000};
    int n, r, root;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    root = n - 1;
    int route = expect_collie ? ON_COLLIE : COMM;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t o = 0; o < 4; o++)
            for (size_t c = 0; c < sizeof counts_ / sizeof counts_[0]; c++) {
                const struct type *ty = &types[t];
                int count = counts_[c];
                size_t bytes = (size_t)count * ty->size;
                char *in = buffer(bytes * (size_t)n), *a = buffer(bytes * (size_t)n),
                     *b = buffer(bytes * (size_t)n);
                fill(in, ty, count * n, (int)o);
                EXPECT_ROUTE(ALLREDUCE, route, MPI_Allreduce(in, a, count, ty->t, ops[o], comm));
                PMPI_Allreduce(in, b, count, ty->t, ops[o], comm);
                CHECK(!memcmp(a, b, bytes), "allreduce %s op %zu count %d", ty->name, o, count);
                memcpy(a, in, bytes);
                EXPECT_ROUTE(ALLREDUCE, route,
                             MPI_Allreduce(MPI_IN_PLACE, a, count, ty->t, ops[o], comm));
                CHECK(!memcmp(a, b, bytes), "allreduce in place %s count %d", ty->name, count);

                memset(a, 0x5a, bytes), memset(b, 0x5a, bytes);
                EXPECT_ROUTE(REDUCE, route, MPI_Reduce(in, a, count, ty->t, ops[o], root, comm));
                PMPI_Reduce(in, b, count, ty->t, ops[o], root, comm);
                CHECK(r != root || !memcmp(a, b, bytes), "reduce %s count %d", ty->name, count);
                memcpy(a, in, bytes);
                EXPECT_ROUTE(
                    REDUCE, route,
                    MPI_Reduce(r == root ? MPI_IN_PLACE : in, a, count, ty->t, ops[o], root, comm));
                CHECK(r != root || !memcmp(a, b, bytes), "reduce in place %s", ty->name);

                /* reduce_scatter: n blocks of count */
                EXPECT_ROUTE(RSB, route,
                             MPI_Reduce_scatter_block(in, a, count, ty->t, ops[o], comm));
                PMPI_Reduce_scatter_block(in, b, count, ty->t, ops[o], comm);
                CHECK(!memcmp(a, b, bytes), "reduce_scatter_block %s count %d", ty->name, count);
                memcpy(a, in, bytes * (size_t)n);
                EXPECT_ROUTE(RSB, route,
                             MPI_Reduce_scatter_block(MPI_IN_PLACE, a, count, ty->t, ops[o], comm));
                CHECK(!memcmp(a, b, bytes), "reduce_scatter_block in place %s", ty->name);
                int *rc = malloc(sizeof(int) * (size_t)n);
                for (int k = 0; k < n; k++)
                    rc[k] = count;
                EXPECT_ROUTE(RS, route, MPI_Reduce_scatter(in, a, rc, ty->t, ops[o], comm));
                CHECK(!memcmp(a, b, bytes), "reduce_scatter %s count %d", ty->name, count);
                free(rc);
                free(in), free(a), free(b);
            }
}

static void check_movement(MPI_Comm comm, int expect_collie)
{
    struct type types[] = {
        {MPI_BYTE, "byte", 1, 1},         {MPI_SHORT, "short", 2, 0},
        {MPI_DOUBLE, "double", 8, 0},     {MPI_INT, "int", 4, 0},
        {MPI_UNSIGNED, "unsigned", 4, 1}, {MPI_C_DOUBLE_COMPLEX, "double complex", 16, 0},
    };
    int counts_[] = {0, 1, 13, 5000, 300000};
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int route = expect_collie ? ON_COLLIE : COMM;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t c = 0; c < sizeof counts_ / sizeof counts_[0]; c++) {
            const struct type *ty = &types[t];
            int count = counts_[c];
            size_t bytes = (size_t)count * ty->size, all = bytes * (size_t)n;
            char *in = buffer(all), *a = buffer(all), *b = buffer(all);
            fill(in, ty->size == 16 ? &types[2] : ty, count * n * (ty->size == 16 ? 2 : 1), 1);
            int root = (int)(c % (size_t)n);
            memcpy(a, in, bytes), memcpy(b, in, bytes);
            EXPECT_ROUTE(BCAST, route, MPI_Bcast(a, count, ty->t, root, comm));
            PMPI_Bcast(b, count, ty->t, root, comm);
            CHECK(!memcmp(a, b, bytes), "bcast %s count %d root %d", ty->name, count, root);

            EXPECT_ROUTE(ALLGATHER, route, MPI_Allgather(in, count, ty->t, a, count, ty->t, comm));
            PMPI_Allgather(in, count, ty->t, b, count, ty->t, comm);
            CHECK(!memcmp(a, b, all), "allgather %s count %d", ty->name, count);
            memset(a, 0, all);
            memcpy(a + (size_t)r * bytes, in, bytes);
            EXPECT_ROUTE(ALLGATHER, route,
                         MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, count, ty->t, comm));
            CHECK(!memcmp(a, b, all), "allgather in place %s count %d", ty->name, count);

            if (count <= 5000) {
                EXPECT_ROUTE(ALLTOALL, route,
                             MPI_Alltoall(in, count, ty->t, a, count, ty->t, comm));
                PMPI_Alltoall(in, count, ty->t, b, count, ty->t, comm);
                CHECK(!memcmp(a, b, all), "alltoall %s count %d", ty->name, count);
                memcpy(a, in, all);
                EXPECT_ROUTE(
                    ALLTOALL, route,
                    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, count, ty->t, comm));
                CHECK(!memcmp(a, b, all), "alltoall in place %s count %d", ty->name, count);
            }
            free(in), free(a), free(b);
        }
    EXPECT_ROUTE(BARRIER, route, MPI_Barrier(comm));
}

/* Whether p lies in a mapping of collie_mem_alloc's (its memfd, by name, in /proc/self/maps). */
static int in_collie_mem(const void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)p >= lo && (uintptr_t)p < hi)
            found = strstr(line, "memfd:collie-mem ") != NULL;
    }
    if (f)
        fclose(f);
    return found;
}

/*
 * MPI_Alloc_mem: collie's memory where collie runs (its peers map it), MPI's
 * otherwise; every collective on it exact; MPI_Free_mem frees both kinds.
 */
static void check_alloc_mem(void)
{
    const int count = 300000;
    const size_t all = (size_t)count * sizeof(int) * (size_t)size;
    int *in, *a, *b;
    CHECK(MPI_Alloc_mem((MPI_Aint)all, MPI_INFO_NULL, &in) == MPI_SUCCESS &&
              MPI_Alloc_mem((MPI_Aint)all, MPI_INFO_NULL, &a) == MPI_SUCCESS,
          "MPI_Alloc_mem");
    b = buffer(all);
    int collie_mem = counts && !off;
    CHECK(in_collie_mem(in) == collie_mem && in_collie_mem(a) == collie_mem,
          "MPI_Alloc_mem's memory is %s, expected %s", in_collie_mem(in) ? "collie's" : "MPI's",
          collie_mem ? "collie's" : "MPI's");
    for (int i = 0; i < count * size; i++)
        in[i] = rank * 1000003 + i;
    MPI_Allgather(in, count, MPI_INT, a, count, MPI_INT, MPI_COMM_WORLD);
    PMPI_Allgather(in, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD);
    CHECK(!memcmp(a, b, all), "allgather over MPI_Alloc_mem's memory");
    MPI_Alltoall(in, count, MPI_INT, a, count, MPI_INT, MPI_COMM_WORLD);
    PMPI_Alltoall(in, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD);
    CHECK(!memcmp(a, b, all), "alltoall over MPI_Alloc_mem's memory");
    MPI_Allreduce(in, a, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(in, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(!memcmp(a, b, (size_t)count * sizeof(int)), "allreduce over MPI_Alloc_mem's memory");
    checks += 4;
    CHECK(MPI_Free_mem(in) == MPI_SUCCESS && MPI_Free_mem(a) == MPI_SUCCESS, "MPI_Free_mem");
    free(b);
}

/* Sub-communicators, with collectives on them interleaved with the parent's. */
static void check_communicators(void)
{
    MPI_Comm halves, parity, dup, shared, created, undefined;
    MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, -rank, &halves);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &undefined);
    CHECK((rank == 0) == (undefined == MPI_COMM_NULL), "MPI_UNDEFINED");
    MPI_Group world_group, first;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int zero = 0;
    MPI_Group_incl(world_group, 1, &zero, &first);
    MPI_Comm_create(MPI_COMM_WORLD, first, &created);
    MPI_Comm comms[] = {halves, parity, dup, shared, created, undefined};
    for (int round = 0; round < 3; round++)
        for (size_t k = 0; k < sizeof comms / sizeof comms[0]; k++) {
            if (comms[k] == MPI_COMM_NULL)
                continue;
            long x = rank + 1, y = 0, z = 0, w = 0;
            EXPECT_ROUTE(ALLREDUCE, ON_COLLIE,
                         MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, comms[k]));
            MPI_Allreduce(&x, &w, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD); /* the parent, between */
            PMPI_Allreduce(&x, &z, 1, MPI_LONG, MPI_SUM, comms[k]);
            CHECK(y == z && w == size, "communicator %zu: %ld, MPI says %ld", k, y, z);
            int sub_rank, sub;
            MPI_Comm_rank(comms[k], &sub_rank);
            long gathered[64] = {0}, want[64] = {0};
            MPI_Comm_size(comms[k], &sub);
            MPI_Allgather(&x, 1, MPI_LONG, gathered, 1, MPI_LONG, comms[k]);
            PMPI_Allgather(&x, 1, MPI_LONG, want, 1, MPI_LONG, comms[k]);
            CHECK(!memcmp(gathered, want, sizeof(long) * (size_t)sub), "rank order of %zu", k);
        }
    check_reductions(halves, 1);
    check_movement(parity, 1);
    for (size_t k = 0; k < sizeof comms / sizeof comms[0]; k++)
        if (comms[k] != MPI_COMM_NULL)
            MPI_Comm_free(&comms[k]);
    MPI_Group_free(&first);
    MPI_Group_free(&world_group);
    /* MPI_COMM_SELF has no collie twin: MPI runs its calls, counted so. */
    if (counts) {
        int one = 1, out = 0;
        EXPECT_ROUTE(ALLREDUCE, COMM,
                     MPI_Allreduce(&one, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
        CHECK(out == 1, "MPI_COMM_SELF");
    }
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/*
 * Communicators made and freed in a loop leave no descriptor and no /dev/shm
 * entry behind: CHURN cycles with a slack of 2 catch a leak of one in every
 * CHURN / 3 cycles.  Each cycle makes a collie communicator with its own
 * rendezvous, on the segment the cycle before left (COLLIE_SHM_KEEP): about
 * 1 ms at 2 ranks, 5 at 8 on 2 CPUs.
 */
#define CHURN 300

static void check_churn(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    int fds = entries("/proc/self/fd"), shm = entries("/dev/shm");
    for (int i = 0; i < CHURN; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        int x = i, y = 0;
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c);
        CHECK(y == i * size, "cycle %d", i);
        MPI_Comm_free(&c);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int fds_after = entries("/proc/self/fd"), shm_after = entries("/dev/shm");
    CHECK(fds_after <= fds + 2, "descriptors grew from %d to %d over %d dup/free", fds, fds_after,
          CHURN);
    CHECK(shm_after <= shm + 2 * size, "/dev/shm grew from %d to %d entries", shm, shm_after);
}

static void add_ints(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void check_fallbacks(void)
{
    int x[8], a[8], b[8];
    for (int i = 0; i < 8; i++)
        x[i] = rank * 10 + i;
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    memcpy(a, x, sizeof a), memcpy(b, x, sizeof b);
    int route = counts ? DATATYPE : ON_COLLIE;
    EXPECT_ROUTE(BCAST, route, MPI_Bcast(a, 4, pair, 0, MPI_COMM_WORLD));
    PMPI_Bcast(b, 4, pair, 0, MPI_COMM_WORLD);
    CHECK(!memcmp(a, b, sizeof a), "bcast of a derived datatype");
    MPI_Type_free(&pair);

    MPI_Op user;
    MPI_Op_create(add_ints, 1, &user);
    EXPECT_ROUTE(ALLREDUCE, counts ? OP : ON_COLLIE,
                 MPI_Allreduce(x, a, 8, MPI_INT, user, MPI_COMM_WORLD));
    PMPI_Allreduce(x, b, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(!memcmp(a, b, sizeof a), "a user-defined op");
    MPI_Op_free(&user);

    struct {
        double v;
        int rank;
    } in = {(double)((rank * 7) % 5), rank}, out, want;
    EXPECT_ROUTE(ALLREDUCE, counts ? OP : ON_COLLIE,
                 MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    PMPI_Allreduce(&in, &want, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(out.v == want.v && out.rank == want.rank, "MPI_MAXLOC");

    int *rc = malloc(sizeof(int) * (size_t)size), total = 0;
    for (int k = 0; k < size; k++)
        total += rc[k] = k + 1;
    int *big = malloc(sizeof(int) * (size_t)total), *ra = calloc((size_t)size + 1, sizeof(int)),
        *rb = calloc((size_t)size + 1, sizeof(int));
    for (int i = 0; i < total; i++)
        big[i] = rank + i;
    EXPECT_ROUTE(RS, counts && size > 1 ? COUNTS : ON_COLLIE,
                 MPI_Reduce_scatter(big, ra, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    PMPI_Reduce_scatter(big, rb, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(!memcmp(ra, rb, sizeof(int) * (size_t)(rank + 1)), "unequal reduce_scatter");
    free(rc), free(big), free(ra), free(rb);
}

/* A detected mismatch under MPI_ERRORS_RETURN: an error code of collie's class, on every rank. */
static void check_errors_return(void)
{
    if (!counts || off || size < 2)
        return;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int x[4] = {0}, y[4];
    int rc = MPI_Allreduce(x, y, rank == 0 ? 3 : 4, MPI_INT, MPI_SUM, c);
    CHECK(rc != MPI_SUCCESS, "a mismatched allreduce returned MPI_SUCCESS");
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    CHECK(strstr(text, "collie") && strstr(text, "different"), "error string: %s", text);
    rc = MPI_Barrier(c); /* sticky: fails at once */
    CHECK(rc != MPI_SUCCESS, "the failure is not sticky");
    MPI_Comm_free(&c);
    int ok = 1, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); /* world is untouched */
    CHECK(all == 1, "MPI_COMM_WORLD after a failure on its duplicate");
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *(void **)&counts = dlsym(RTLD_DEFAULT, "collie_mpi_counts");
    off = (getenv("COLLIE_MPI") && !strcmp(getenv("COLLIE_MPI"), "0")) ||
          getenv("COLLIE_TEST_MPI_NOT_STARTED"); /* the job was set up so that collie cannot */
    const char *mode = argc > 1 ? argv[1] : "check";
    if (!strcmp(mode, "kill")) {
        for (int i = 0;; i++) {
            double x[1000] = {0}, y[1000];
            if (i == 200 && rank == size - 1)
                raise(SIGKILL);
            MPI_Allreduce(x, y, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
    }
    check_reductions(MPI_COMM_WORLD, 1);
    check_movement(MPI_COMM_WORLD, 1);
    check_alloc_mem();
    check_communicators();
    check_churn();
    check_fallbacks();
    check_errors_return();
    if (counts)
        CHECK(routed(ALLREDUCE, off ? OFF : ON_COLLIE) > 100, "%s only %llu allreduces",
              off ? "MPI ran" : "collie ran", routed(ALLREDUCE, off ? OFF : ON_COLLIE));
    MPI_Finalize();
    if (rank == 0)
        printf("mpi interposer: %ld checks on each of %d rank(s), %s\n", checks, size,
               !counts ? "plain MPI"
               : off   ? "preloaded, COLLIE_MPI=0"
                       : "preloaded");
    return 0;
}
