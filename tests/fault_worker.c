/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault_worker.c - one rank of a fault campaign (tests/fault_campaign.py).
 *
 * Runs OPS random collectives, the same on every rank (one seed): allreduce,
 * broadcast, reduce, allgather, reduce_scatter, alltoall and barrier, blocking
 * or non-blocking, on the whole job or on a half of it (a split), in int32 or
 * float32, at counts from 1 to 262,147.  Every element of every result is
 * checked against its formula.  The campaign injects one fault from outside
 * (a signal, a link cut) or, with COLLIE_FAULT_EXIT_AT=K, this rank leaves at
 * its K-th collective without finalizing.
 *
 * Prints one line the campaign reads, and exits with its meaning:
 *   "rank R ready at NS"                      after init and split (not an exit)
 *   "rank R done"                             0: every result exact
 *   "rank R error NAME on C at NS after K: MSG"
 *                                             3: a collie call on C (job, or split: the
 *                                             ranks of R's parity, ranked by R / 2) failed,
 *                                             and finalize returned
 *   "rank R WRONG ..."                        4: a result was wrong: never allowed
 * NS is CLOCK_REALTIME in nanoseconds, to compare with the fault's time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collie.h"

enum kind { ALLREDUCE, BROADCAST, REDUCE, ALLGATHER, REDUCE_SCATTER, ALLTOALL, BARRIER, NKINDS };
static const char *const kind_names[] = {"allreduce",      "broadcast", "reduce", "allgather",
                                         "reduce_scatter", "alltoall",  "barrier"};
static const size_t counts[] = {1, 7, 1000, 16411, 262147};
static const char *const status_names[] = {
#define STATUS_NAME(name, message) #name,
    COLLIE_STATUS_MAP(STATUS_NAME)
#undef STATUS_NAME
};

static int world_rank;
static long op_index;
static char *inputs, *outputs; /* every op's buffers, large enough for the largest */

static long long realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static uint64_t next_random(uint64_t *state) /* splitmix64: the same on every rank */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* What rank r contributes at element i of this op: small integers, exact in float32 sums. */
static int value(int r, long op, size_t i)
{
    return (int)((r + 1) * (int)((i + (size_t)op) % 97 + 1));
}

static void put(collie_dtype t, void *buf, size_t i, int v)
{
    if (t == COLLIE_INT32)
        ((int32_t *)buf)[i] = v;
    else
        ((float *)buf)[i] = (float)v;
}

static int get(collie_dtype t, const void *buf, size_t i)
{
    return t == COLLIE_INT32 ? ((const int32_t *)buf)[i] : (int)((const float *)buf)[i];
}

/* A call on comm `on` (sub or world) failed: reports why, finalizes what there is, exits 3. */
static void failed(collie_comm *world, collie_comm *sub, collie_comm *on, collie_status st)
{
    printf("rank %d error %s on %s at %lld after %ld: %s\n", world_rank, status_names[st],
           on == world ? "job" : "split", realtime_ns(), op_index, collie_last_error(on));
    fflush(stdout);
    free(inputs);
    free(outputs);
    /* After a failure, finalize must still return (and clean up). */
    if (sub)
        collie_finalize(sub);
    collie_finalize(world);
    exit(3);
}

static void wrong(const char *kind, size_t count, size_t i, int got, int want)
{
    printf("rank %d WRONG: op %ld (%s of %zu) element %zu is %d, want %d\n", world_rank, op_index,
           kind, count, i, got, want);
    fflush(stdout);
    exit(4);
}

/* Runs one collective on comm, blocking or not; returns its status. */
static collie_status run(collie_comm *comm, enum kind k, int nonblocking, const void *in, void *out,
                         size_t count, collie_dtype t, int root)
{
    collie_request *req = NULL;
    collie_status st;
    switch (k) {
    case ALLREDUCE:
        st = nonblocking ? collie_iallreduce(comm, in, out, count, t, COLLIE_SUM, &req)
                         : collie_allreduce(comm, in, out, count, t, COLLIE_SUM);
        break;
    case BROADCAST:
        st = nonblocking ? collie_ibroadcast(comm, out, count, t, root, &req)
                         : collie_broadcast(comm, out, count, t, root);
        break;
    case REDUCE:
        st = nonblocking ? collie_ireduce(comm, in, out, count, t, COLLIE_SUM, root, &req)
                         : collie_reduce(comm, in, out, count, t, COLLIE_SUM, root);
        break;
    case ALLGATHER:
        st = nonblocking ? collie_iallgather(comm, in, out, count, t, &req)
                         : collie_allgather(comm, in, out, count, t);
        break;
    case REDUCE_SCATTER:
        st = nonblocking ? collie_ireduce_scatter(comm, in, out, count, t, COLLIE_SUM, &req)
                         : collie_reduce_scatter(comm, in, out, count, t, COLLIE_SUM);
        break;
    case ALLTOALL:
        st = nonblocking ? collie_ialltoall(comm, in, out, count, t, &req)
                         : collie_alltoall(comm, in, out, count, t);
        break;
    default: st = nonblocking ? collie_ibarrier(comm, &req) : collie_barrier(comm); break;
    }
    return st == COLLIE_OK && req ? collie_wait(req) : st;
}

/* Fills the inputs of op k for rank r of n, runs it, and checks every element. */
static collie_status one_op(collie_comm *comm, enum kind k, int nonblocking, size_t count,
                            collie_dtype t, int root_pick)
{
    char *in = inputs, *out = outputs;
    int r = collie_rank(comm), n = collie_size(comm), root = root_pick % n;
    long op = op_index;
    size_t in_count = k == REDUCE_SCATTER || k == ALLTOALL ? count * (size_t)n : count;
    size_t out_count = k == ALLGATHER || k == ALLTOALL ? count * (size_t)n : count;
    for (size_t i = 0; i < in_count; i++)
        put(t, in, i, value(r, op, i));
    for (size_t i = 0; i < out_count; i++)
        put(t, out, i, k == BROADCAST && r == root ? value(root, op, i) : -1);
    collie_status st = run(comm, k, nonblocking, in, out, count, t, root);
    if (st != COLLIE_OK || k == BARRIER || (k == REDUCE && r != root))
        return st;
    for (size_t i = 0; i < out_count; i++) {
        int want = 0;
        switch (k) {
        case ALLREDUCE:
        case REDUCE:
            for (int q = 0; q < n; q++)
                want += value(q, op, i);
            break;
        case BROADCAST: want = value(root, op, i); break;
        case ALLGATHER: want = value((int)(i / count), op, i % count); break;
        case REDUCE_SCATTER:
            for (int q = 0; q < n; q++)
                want += value(q, op, (size_t)r * count + i);
            break;
        case ALLTOALL: /* block s of the output is block r of rank s's input */
            want = value((int)(i / count), op, (size_t)r * count + i % count);
            break;
        default: break;
        }
        int got = get(t, out, i);
        if (got != want)
            wrong(kind_names[k], count, i, got, want);
    }
    return COLLIE_OK;
}

int main(int argc, char **argv)
{
    long ops = argc > 1 ? atol(argv[1]) : 200;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    const char *exit_at = getenv("COLLIE_FAULT_EXIT_AT");
    long leave_at = exit_at && *exit_at ? atol(exit_at) : -1;
    setvbuf(stdout, NULL, _IOLBF, 0);

    world_rank = atoi(getenv("COLLIE_RANK") ? getenv("COLLIE_RANK") : "0");
    collie_comm *world = NULL, *sub = NULL;
    collie_status st = collie_init(&world);
    if (st != COLLIE_OK) {
        printf("rank %d error %s on job at %lld after 0: %s\n", world_rank, status_names[st],
               realtime_ns(), collie_last_error(NULL));
        return 3;
    }
    world_rank = collie_rank(world);
    int size = collie_size(world);
    if ((st = collie_comm_split(world, world_rank % 2, world_rank, &sub)) != COLLIE_OK) {
        /* The parent's failure is on it; the new communicator's, in last_error(NULL). */
        const char *why = collie_last_error(world);
        printf("rank %d error %s on split at %lld after 0: %s\n", world_rank, status_names[st],
               realtime_ns(), *why ? why : collie_last_error(NULL));
        collie_finalize(world);
        return 3;
    }
    printf("rank %d ready at %lld\n", world_rank, realtime_ns());

    size_t max_bytes = counts[sizeof counts / sizeof *counts - 1] * (size_t)size * 4;
    inputs = malloc(max_bytes), outputs = malloc(max_bytes);
    if (!inputs || !outputs)
        return 5;
    uint64_t rng = seed;
    for (op_index = 0; op_index < ops; op_index++) {
        if (op_index == leave_at)
            exit(0); /* the fault: leave without finalize */
        uint64_t pick = next_random(&rng);
        enum kind k = (enum kind)(pick % NKINDS);
        int nonblocking = (pick >> 8) & 1, on_sub = ((pick >> 9) & 3) == 0;
        collie_dtype t = (pick >> 11) & 1 ? COLLIE_INT32 : COLLIE_FLOAT32;
        /* Mostly small and mid-sized; one in eight is the large count. */
        size_t count = (pick >> 12) % 8 == 0 ? counts[4] : counts[(pick >> 16) % 4];
        collie_comm *comm = on_sub ? sub : world;
        st = one_op(comm, k, nonblocking, count, t, (int)((pick >> 20) % 1024));
        if (st != COLLIE_OK)
            failed(world, sub, comm, st);
    }
    free(inputs);
    free(outputs);
    if ((st = collie_finalize(sub)) != COLLIE_OK || (st = collie_finalize(world)) != COLLIE_OK) {
        printf("rank %d error %s on job at %lld after %ld: finalize\n", world_rank,
               status_names[st], realtime_ns(), op_index);
        return 3;
    }
    printf("rank %d done\n", world_rank);
    return 0;
}
