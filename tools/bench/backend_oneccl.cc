/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_oneccl.cc - collie-bench-oneccl: the same sweep as `collie bench`, with
 * oneCCL's collectives through its own C++ API (what Intel's PyTorch bindings
 * run on CPU tensors).  `collie bench --baseline oneccl` launches it with the
 * mpiexec of the Intel MPI installed beside oneCCL, because oneCCL's key-value
 * store is bootstrapped as its documentation shows: rank 0 makes the main KVS
 * and broadcasts its address with MPI_Bcast.  MPI is used for nothing else
 * that is timed.
 *
 * oneCCL's knobs stay at their defaults: on a machine with as many cores as
 * ranks it disables its worker threads itself.  Its CPU path has no average
 * ("not supported for the scheduler path"): AVG is SUM, then a division on
 * the ranks that receive the result, as the MPI baseline does.  In-place
 * allgather, reduce_scatter and alltoall have no oneCCL form: the input is
 * copied aside first, as the Gloo baseline does.  Point-to-point (pingpong)
 * is not measured: oneCCL 2022.1's CPU send/recv ended the job with a signal.
 */
#include <mpi.h>
#include <oneapi/ccl.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench.h"

namespace
{

std::optional<ccl::communicator> comm;
std::string last_error;
std::vector<char> scratch; /* a copy of the input where oneCCL has no in-place form */

ccl::datatype ccl_type(collie_dtype t)
{
    switch (t) {
    case COLLIE_FLOAT64: return ccl::datatype::float64;
    case COLLIE_FLOAT16: return ccl::datatype::float16;
    case COLLIE_BFLOAT16: return ccl::datatype::bfloat16;
    case COLLIE_INT8: return ccl::datatype::int8;
    case COLLIE_UINT8: return ccl::datatype::uint8;
    case COLLIE_INT32: return ccl::datatype::int32;
    case COLLIE_INT64: return ccl::datatype::int64;
    default: return ccl::datatype::float32;
    }
}

ccl::reduction ccl_op(collie_op op)
{
    switch (op) {
    case COLLIE_PROD: return ccl::reduction::prod;
    case COLLIE_MIN: return ccl::reduction::min;
    case COLLIE_MAX: return ccl::reduction::max;
    default: return ccl::reduction::sum; /* and AVG, divided afterwards */
    }
}

/* send (its first in bytes), or a copy of them where they overlap recv's first out. */
const void *aside(const void *send, size_t in, const void *recv, size_t out)
{
    const char *s = static_cast<const char *>(send), *r = static_cast<const char *>(recv);
    if (s + in <= r || r + out <= s)
        return send;
    scratch.assign(s, s + in);
    return scratch.data();
}

void run_ccl(struct bench_backend *b, enum bench_coll c, const void *send, void *recv, size_t count,
             collie_dtype t, collie_op op, int root)
{
    ccl::datatype dt = ccl_type(t);
    ccl::reduction red = ccl_op(op);
    size_t es = bench_dtype_size(t), all = count * (size_t)b->size;
    switch (c) {
    case BENCH_ALLREDUCE: ccl::allreduce(send, recv, count, dt, red, *comm).wait(); break;
    case BENCH_BROADCAST: ccl::broadcast(recv, count, dt, root, *comm).wait(); return;
    case BENCH_REDUCE:
        ccl::reduce(send, recv, count, dt, red, root, *comm).wait();
        if (b->rank != root)
            return;
        break;
    case BENCH_ALLGATHER:
        ccl::allgather(aside(send, count * es, recv, all * es), recv, count, dt, *comm).wait();
        return;
    case BENCH_REDUCE_SCATTER:
        ccl::reduce_scatter(aside(send, all * es, recv, count * es), recv, count, dt, red, *comm)
            .wait();
        break;
    case BENCH_ALLTOALL:
        ccl::alltoall(aside(send, all * es, recv, all * es), recv, count, dt, *comm).wait();
        return;
    default: throw std::runtime_error("not a collective oneCCL has (has_coll refuses it)");
    }
    if (op == COLLIE_AVG)
        bench_divide(recv, count, t, b->size);
}

int run(struct bench_backend *b, enum bench_coll c, const void *send, void *recv, size_t count,
        collie_dtype t, collie_op op, int root)
{
    try {
        run_ccl(b, c, send, recv, count, t, op, root);
        return 0;
    } catch (const std::exception &e) {
        last_error = e.what();
        return -1;
    }
}

int has_coll(struct bench_backend *, enum bench_coll c) { return c <= BENCH_ALLTOALL; }

int barrier(struct bench_backend *)
{
    try {
        ccl::barrier(*comm).wait();
        return 0;
    } catch (const std::exception &e) {
        last_error = e.what();
        return -1;
    }
}

/* The sweep's own bookkeeping (the slowest rank's time, the check's count) goes through
 * MPI, which is there anyway for the bootstrap; it is never what is timed. */
int max_double(struct bench_backend *, double *v)
{
    return MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS
               ? 0
               : -1;
}

int sum_ll(struct bench_backend *, long long *v)
{
    return MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS
               ? 0
               : -1;
}

/* A pending non-blocking allreduce (oneCCL's calls all return an event to wait on),
 * and what AVG still has to divide once it completes. */
struct pending {
    ccl::event done;
    void *recv;
    size_t count;
    collie_dtype t;
    bool avg;
};

int iallreduce(struct bench_backend *, const void *send, void *recv, size_t count, collie_dtype t,
               collie_op op, void **h)
{
    try {
        *h = new pending{ccl::allreduce(send, recv, count, ccl_type(t), ccl_op(op), *comm), recv,
                         count, t, op == COLLIE_AVG};
        return 0;
    } catch (const std::exception &e) {
        last_error = e.what();
        return -1;
    }
}

int wait(struct bench_backend *b, void *h)
{
    std::unique_ptr<pending> p(static_cast<pending *>(h));
    try {
        p->done.wait();
    } catch (const std::exception &e) {
        last_error = e.what();
        return -1;
    }
    if (p->avg)
        bench_divide(p->recv, p->count, p->t, b->size);
    return 0;
}

const char *algo(struct bench_backend *, enum bench_coll, size_t) { return "oneccl"; }

const char *error(struct bench_backend *) { return last_error.c_str(); }

int supports(struct bench_backend *, collie_dtype, collie_op) { return 1; }

/* The job's communicator: rank 0's main KVS, its address broadcast over MPI. */
void connect(int rank, int size)
{
    ccl::init();
    ccl::shared_ptr_class<ccl::kvs> kvs;
    ccl::kvs::address_type address{};
    if (rank == 0) {
        kvs = ccl::create_main_kvs();
        address = kvs->get_address();
    }
    MPI_Bcast(address.data(), (int)address.size(), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank != 0)
        kvs = ccl::create_kvs(address);
    comm.emplace(ccl::create_communicator(size, rank, kvs));
}

} // namespace

int main(int argc, char **argv)
{
    int provided; /* oneCCL asks its MPI for this level, and warns on any other */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    setenv("CCL_LOG_LEVEL", "error", 0); /* its warnings say it chose defaults: no news */
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, "collie-bench-oneccl")) {
        MPI_Finalize();
        return 2;
    }
    struct bench_backend b = {};
    b.name = "oneccl";
    b.run = run;
    b.barrier = barrier;
    b.max_double = max_double;
    b.sum_ll = sum_ll;
    b.algo = algo;
    b.error = error;
    b.supports = supports;
    b.has_coll = has_coll;
    b.iallreduce = iallreduce;
    b.wait = wait;
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &b.local_size);
    MPI_Comm_free(&local);
    try {
        connect(b.rank, b.size);
    } catch (const std::exception &e) {
        fprintf(stderr, "collie-bench-oneccl: rank %d of %d could not make a communicator: %s\n",
                b.rank, b.size, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    struct bench_rows rows = {};
    rows.raw = b.rank == 0 ? o.raw : NULL;
    int rc = bench_sweep(&b, &o, o.round, &rows) || rows.raw_failed ? 1 : 0;
    free(rows.row);
    comm.reset(); /* before MPI goes: oneCCL's teardown still talks to the ranks */
    MPI_Finalize();
    return rc;
}
