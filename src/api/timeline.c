/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * timeline.c - the trace of timeline.h, written as a JSON array of trace
 * events ("[" then events separated by ",\n" then "]"): a process that dies
 * leaves a file the viewers still open (the closing bracket is optional in
 * that format), and `collie timeline` merges such files too.
 */
#include "timeline.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "../core/config.h"
#include "../core/log.h"
#include "api.h"
#include "async.h"

enum { TID_CALLER = 1, TID_COLL = 2, TID_P2P = 3 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static int users; /* communicators attached */
static int pid;   /* the trace's process id: the rank in the first communicator */
static int next_comm_id;
static _Atomic int on;

int collie__timeline_on(void) { return atomic_load_explicit(&on, memory_order_relaxed); }

static void header(int rank)
{
    static const char *const names[] = {"", "caller", "collective lane", "point-to-point lane"};
    fprintf(out,
            "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank "
            "%d\"}}",
            rank, rank);
    for (int t = TID_CALLER; t <= TID_P2P; t++)
        fprintf(
            out,
            ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
            "\"%s\"}}",
            rank, t, names[t]);
}

void collie__timeline_attach(collie_comm *comm)
{
    const char *file = collie__config_string(COLLIE_CFG_TIMELINE);
    if (!*file)
        return;
    pthread_mutex_lock(&lock);
    comm->api->timeline_id = ++next_comm_id; /* 0: not attached */
    if (!users++) {
        char path[4200];
        snprintf(path, sizeof path, "%s.rank%d.json", file, comm->rank);
        out = fopen(path, "w");
        if (!out)
            COLLIE_WARN("timeline", "cannot write COLLIE_TIMELINE's %s; no timeline", path);
        pid = comm->rank;
        if (out)
            header(pid);
        atomic_store(&on, out != NULL);
    }
    pthread_mutex_unlock(&lock);
}

void collie__timeline_detach(collie_comm *comm)
{
    if (!comm->api->timeline_id)
        return;
    pthread_mutex_lock(&lock);
    if (users > 0 && !--users && out) {
        fputs("\n]\n", out);
        fclose(out);
        out = NULL;
        atomic_store(&on, 0);
    }
    pthread_mutex_unlock(&lock);
}

static double us(uint64_t ns) { return (double)ns / 1000.0; }

/* One complete event; under the lock. */
static void event(const char *name, int tid, uint64_t t0, uint64_t t1, const collie_comm *comm,
                  const struct collie__op *op, unsigned fused)
{
    fprintf(out, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f",
            name, pid, tid, us(t0), us(t1 - t0));
    if (op) {
        fprintf(out,
                ",\"args\":{\"comm\":%d,\"comm_size\":%d,\"seq\":%u,\"count\":%zu,\"bytes\":%zu,"
                "\"dtype\":\"%s\",\"algorithm\":\"%s\"",
                comm->api->timeline_id, comm->size, op->desc.seq, op->count,
                op->count * op->elem_size, collie__dtype_name(op->dtype),
                collie__algo_name(op->desc.algo));
        if (collie__lane_of(op->desc.coll) == COLLIE_LANE_P2P)
            fprintf(out, ",\"peer\":%d", op->root);
        if (fused)
            fprintf(out, ",\"fused_requests\":%u", fused);
        fputs("}", out);
    }
    fputs("}", out);
}

void collie__timeline_op(collie_comm *comm, const struct collie_request *r, uint64_t t_end)
{
    if (!collie__timeline_on())
        return;
    int p2p = collie__lane_of(r->op.desc.coll) == COLLIE_LANE_P2P;
    uint64_t start = r->t_start ? r->t_start : t_end; /* failed before it started */
    pthread_mutex_lock(&lock);
    if (out) {
        /* Queued requests overlap: an async span each (they nest in no thread). */
        static unsigned long long span;
        span++;
        fprintf(out,
                ",\n{\"name\":\"queued\",\"cat\":\"queue\",\"ph\":\"b\",\"id\":%llu,\"pid\":%d,"
                "\"tid\":%d,\"ts\":%.3f},\n{\"name\":\"queued\",\"cat\":\"queue\",\"ph\":\"e\","
                "\"id\":%llu,\"pid\":%d,\"tid\":%d,\"ts\":%.3f}",
                span, pid, TID_CALLER, us(r->t_issue), span, pid, TID_CALLER, us(start));
        event(collie__coll_name(r->op.desc.coll), p2p ? TID_P2P : TID_COLL, start, t_end, comm,
              &r->op, r->fused);
    }
    pthread_mutex_unlock(&lock);
}

void collie__timeline_blocking(collie_comm *comm, const struct collie__op *op, uint64_t t0,
                               uint64_t t1)
{
    pthread_mutex_lock(&lock);
    if (out)
        event(collie__coll_name(op->desc.coll), TID_CALLER, t0, t1, comm, op, 0);
    pthread_mutex_unlock(&lock);
}

void collie__timeline_wait(collie_comm *comm, uint64_t t0, uint64_t t1)
{
    if (!collie__timeline_on())
        return;
    pthread_mutex_lock(&lock);
    if (out)
        event("wait", TID_CALLER, t0, t1, comm, NULL, 0);
    pthread_mutex_unlock(&lock);
}
