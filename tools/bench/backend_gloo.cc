/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_gloo.cc - collie-bench-gloo: the same sweep as `collie bench`, with
 * Gloo's collectives over its TCP transport -- what torch.distributed's Gloo
 * backend runs on CPU tensors.  `collie bench --baseline gloo` launches it
 * under `collie run` and reads back its rows; it is a separate program (C++,
 * linking Gloo) so that libcollie and the collie command never do.
 *
 * Ranks find each other through a Gloo FileStore in the directory
 * COLLIE_BENCH_GLOO_STORE (the driver makes one per job; across hosts it must
 * be shared, as it is between emulated hosts), under a prefix per round.
 * Each rank listens on COLLIE_HOST (its host as collie run names it), else
 * on the interface GLOO_SOCKET_IFNAME names as in PyTorch, else on loopback.
 *
 * Gloo has no average: AVG is SUM, then a division on the ranks that
 * receive the result, as the MPI baseline does; no bfloat16 (refused by the
 * options) and no reduce_scatter (not measured).
 */
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "bench.h"

namespace
{

std::shared_ptr<gloo::Context> ctx;
std::string last_error;
std::vector<char> scratch;                    /* in-place alltoall's copy of the input */
constexpr std::chrono::seconds kTimeout{300}; /* no wait is longer, as COLLIE_TIMEOUT's default */

/* c = a op b, elementwise, in T's own arithmetic (float16 as _Float16, rounded per step). */
template <typename T, int Op> void combine(void *c_, const void *a_, const void *b_, size_t n)
{
    T *c = static_cast<T *>(c_);
    const T *a = static_cast<const T *>(a_), *b = static_cast<const T *>(b_);
    for (size_t i = 0; i < n; i++) {
        T x = a[i], y = b[i];
        c[i] = Op == COLLIE_PROD  ? (T)(x * y)
               : Op == COLLIE_MIN ? (y < x ? y : x)
               : Op == COLLIE_MAX ? (y > x ? y : x)
                                  : (T)(x + y); /* SUM, and AVG before its division */
    }
}

using Func = void (*)(void *, const void *, const void *, size_t);

template <typename T> Func func_for(collie_op op)
{
    switch (op) {
    case COLLIE_PROD: return combine<T, COLLIE_PROD>;
    case COLLIE_MIN: return combine<T, COLLIE_MIN>;
    case COLLIE_MAX: return combine<T, COLLIE_MAX>;
    default: return combine<T, COLLIE_SUM>;
    }
}

Func reduce_func(collie_dtype t, collie_op op)
{
    switch (t) {
    case COLLIE_FLOAT32: return func_for<float>(op);
    case COLLIE_FLOAT64: return func_for<double>(op);
    case COLLIE_FLOAT16: return func_for<_Float16>(op);
    case COLLIE_INT8: return func_for<int8_t>(op);
    case COLLIE_UINT8: return func_for<uint8_t>(op);
    case COLLIE_INT32: return func_for<int32_t>(op);
    case COLLIE_INT64: return func_for<int64_t>(op);
    default: return nullptr;
    }
}

/*
 * Gloo's setters take a T* and an element count; the element size is what
 * splits a buffer into segments, so it must be the data's own: a proxy type
 * of that width stands in (the reduction function knows the real type).
 */
template <typename T, typename Opts>
void set_buffers_as(Opts &opts, const void *in, void *out, size_t in_count, size_t out_count)
{
    if (in)
        opts.template setInput<T>(static_cast<T *>(const_cast<void *>(in)), in_count);
    opts.template setOutput<T>(static_cast<T *>(out), out_count);
}

template <typename Opts>
void set_buffers(Opts &opts, const void *in, void *out, size_t in_count, size_t out_count,
                 size_t es)
{
    switch (es) {
    case 1: set_buffers_as<uint8_t>(opts, in, out, in_count, out_count); break;
    case 2: set_buffers_as<uint16_t>(opts, in, out, in_count, out_count); break;
    case 4: set_buffers_as<uint32_t>(opts, in, out, in_count, out_count); break;
    default: set_buffers_as<uint64_t>(opts, in, out, in_count, out_count); break;
    }
}

void allreduce(const void *send, void *recv, size_t count, size_t es, Func fn)
{
    gloo::AllreduceOptions opts(ctx);
    set_buffers(opts, send == recv ? nullptr : send, recv, count, count, es);
    opts.setReduceFunction(fn);
    gloo::allreduce(opts);
}

/* The pair partner's message, as osu_latency: even ranks send first. */
void pingpong(struct bench_backend *b, const void *send, void *recv, size_t bytes)
{
    int peer = bench_partner(b);
    if (peer < 0)
        return;
    auto out = ctx->createUnboundBuffer(const_cast<void *>(send), bytes);
    auto in = ctx->createUnboundBuffer(recv, bytes);
    if (b->rank % 2 == 0) {
        out->send(peer, 0);
        out->waitSend(kTimeout);
        in->recv(peer, 0);
        in->waitRecv(kTimeout);
    } else {
        in->recv(peer, 0);
        in->waitRecv(kTimeout);
        out->send(peer, 0);
        out->waitSend(kTimeout);
    }
}

void run_gloo(struct bench_backend *b, enum bench_coll c, const void *send, void *recv,
              size_t count, collie_dtype t, collie_op op, int root)
{
    size_t es = bench_dtype_size(t);
    Func fn = reduce_func(t, op);
    if (count == 0)
        return; /* nothing to move (Gloo's allgather divides by the input's length) */
    switch (c) {
    case BENCH_ALLREDUCE:
        allreduce(send, recv, count, es, fn);
        if (op == COLLIE_AVG)
            bench_divide(recv, count, t, b->size);
        break;
    case BENCH_BROADCAST: {
        gloo::BroadcastOptions opts(ctx);
        opts.setRoot(root);
        set_buffers(opts, nullptr, recv, 0, count, es);
        gloo::broadcast(opts);
        break;
    }
    case BENCH_REDUCE: {
        gloo::ReduceOptions opts(ctx);
        opts.setRoot(root);
        set_buffers(opts, send == recv ? nullptr : send, recv, count, count, es);
        opts.setReduceFunction(fn);
        gloo::reduce(opts);
        if (op == COLLIE_AVG && b->rank == root)
            bench_divide(recv, count, t, b->size);
        break;
    }
    case BENCH_ALLGATHER: {
        gloo::AllgatherOptions opts(ctx);
        /* in place: the own block already sits in recv, where Gloo's input is omitted */
        const char *own = static_cast<char *>(recv) + (size_t)b->rank * count * es;
        set_buffers(opts, static_cast<const char *>(send) == own ? nullptr : send, recv, count,
                    count * (size_t)b->size, es);
        gloo::allgather(opts);
        break;
    }
    case BENCH_ALLTOALL: {
        gloo::AlltoallOptions opts(ctx);
        size_t all = count * (size_t)b->size;
        if (send == recv) { /* Gloo's alltoall has no in-place form: a copy of the input first */
            scratch.assign(static_cast<const char *>(send),
                           static_cast<const char *>(send) + all * es);
            send = scratch.data();
        }
        set_buffers(opts, send, recv, all, all, es);
        gloo::alltoall(opts);
        break;
    }
    case BENCH_PINGPONG: pingpong(b, send, recv, count * es); break;
    default: throw std::runtime_error("not a collective Gloo has (has_coll refuses it)");
    }
}

int run(struct bench_backend *b, enum bench_coll c, const void *send, void *recv, size_t count,
        collie_dtype t, collie_op op, int root)
{
    try {
        run_gloo(b, c, send, recv, count, t, op, root);
        return 0;
    } catch (const std::exception &e) {
        last_error = e.what();
        return -1;
    }
}

int has_coll(struct bench_backend *, enum bench_coll c)
{
    return c == BENCH_ALLREDUCE || c == BENCH_BROADCAST || c == BENCH_REDUCE ||
           c == BENCH_ALLGATHER || c == BENCH_ALLTOALL || c == BENCH_PINGPONG;
}

int barrier(struct bench_backend *)
{
    try {
        gloo::BarrierOptions opts(ctx);
        gloo::barrier(opts);
        return 0;
    } catch (const std::exception &e) {
        last_error = e.what();
        return -1;
    }
}

int max_double(struct bench_backend *, double *v)
{
    try {
        allreduce(v, v, 1, sizeof *v, combine<double, COLLIE_MAX>);
        return 0;
    } catch (const std::exception &e) {
        last_error = e.what();
        return -1;
    }
}

int sum_ll(struct bench_backend *, long long *v)
{
    try {
        allreduce(v, v, 1, sizeof *v, combine<long long, COLLIE_SUM>);
        return 0;
    } catch (const std::exception &e) {
        last_error = e.what();
        return -1;
    }
}

const char *algo(struct bench_backend *, enum bench_coll c, size_t)
{
    return c == BENCH_ALLREDUCE ? "gloo-ring" : "gloo";
}

const char *error(struct bench_backend *) { return last_error.c_str(); }

int supports(struct bench_backend *, collie_dtype t, collie_op)
{
    return reduce_func(t, COLLIE_SUM) != nullptr;
}

/* The job's size and this rank's place in it: collie run's variables, else torchrun's. */
int env_int(const char *name, const char *fallback, int dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        v = getenv(fallback);
    return v && *v ? atoi(v) : dflt;
}

} // namespace

int main(int argc, char **argv)
{
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, "collie-bench-gloo"))
        return 2;
    struct bench_backend b = {};
    b.name = "gloo";
    b.run = run;
    b.barrier = barrier;
    b.max_double = max_double;
    b.sum_ll = sum_ll;
    b.algo = algo;
    b.error = error;
    b.supports = supports;
    b.has_coll = has_coll;
    b.rank = env_int("COLLIE_RANK", "RANK", 0);
    b.size = env_int("COLLIE_SIZE", "WORLD_SIZE", 1);
    b.local_size = env_int("COLLIE_LOCAL_SIZE", "LOCAL_WORLD_SIZE", b.size);
    const char *dir = getenv("COLLIE_BENCH_GLOO_STORE");
    if (!dir || !*dir) {
        fprintf(stderr, "collie-bench-gloo: set COLLIE_BENCH_GLOO_STORE to a directory every rank "
                        "shares (collie bench --baseline gloo does)\n");
        return 2;
    }
    try {
        gloo::transport::tcp::attr attr;
        const char *host = getenv("COLLIE_HOST"), *iface = getenv("GLOO_SOCKET_IFNAME");
        if (host && *host)
            attr.hostname = host;
        else if (iface && *iface)
            attr.iface = iface;
        else
            attr.hostname = "127.0.0.1";
        auto dev = gloo::transport::tcp::CreateDevice(attr);
        gloo::rendezvous::FileStore files(dir);
        gloo::rendezvous::PrefixStore store("round" + std::to_string(o.round), files);
        auto c = std::make_shared<gloo::rendezvous::Context>(b.rank, b.size);
        c->setTimeout(kTimeout);
        c->connectFullMesh(store, dev);
        ctx = c;
    } catch (const std::exception &e) {
        fprintf(stderr, "collie-bench-gloo: rank %d of %d could not connect through %s: %s\n",
                b.rank, b.size, dir, e.what());
        return 1;
    }
    struct bench_rows rows = {};
    rows.raw = b.rank == 0 ? o.raw : NULL;
    int rc = bench_sweep(&b, &o, o.round, &rows) || rows.raw_failed ? 1 : 0;
    free(rows.row);
    ctx.reset();
    return rc;
}
