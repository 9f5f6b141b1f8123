/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * comm.c - the communicator's core state: creating and freeing it, the host
 * table, scratch, and recording failures.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <sched.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "status.h"

static int is_sticky(collie_status status)
{
    return status != COLLIE_OK && status != COLLIE_ERR_INVALID_ARG &&
           status != COLLIE_ERR_UNSUPPORTED;
}

/*
 * msg as the family's first communicator numbers ranks: every "rank N" of
 * a split communicator gets " (rank M before the split)".
 */
static void in_family_ranks(const collie_comm *comm, const char *msg, char *out, size_t len)
{
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < len;) {
        char *end;
        long r = -1;
        if (comm->family_rank && !strncmp(p, "rank ", 5) && p[5] >= '0' && p[5] <= '9')
            r = strtol(p + 5, &end, 10);
        if (r < 0 || r >= comm->size) {
            out[o++] = *p++;
            continue;
        }
        int w = snprintf(out + o, len - o, "rank %ld (rank %d before the split)", r,
                         comm->family_rank[r]);
        o = w < 0 || (size_t)w >= len - o ? len - 1 : o + (size_t)w;
        p = end;
    }
    out[o] = 0;
}

/*
 * comm's first failure: kept for its family's relatives (collie__comm_leave),
 * and passed to the transports (on_fail) so that no peer waits in vain.
 */
static void spread(collie_comm *comm, collie_status status, const char *msg)
{
    struct collie__family *f = comm->family;
    pthread_mutex_lock(&f->lock);
    if (f->status == COLLIE_OK) {
        f->status = status;
        in_family_ranks(comm, msg, f->cause, sizeof f->cause);
    }
    pthread_mutex_unlock(&f->lock);
    if (comm->on_fail)
        comm->on_fail(comm, status, msg);
}

collie_status collie__fail(collie_comm *comm, collie_status status, const char *fmt, ...)
{
    char msg[sizeof comm->last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    COLLIE_WARN("error", "%s: %s", collie__status_name(status), msg);
    int first = 0;
    pthread_mutex_lock(&comm->fail_lock);
    /* After the first sticky failure, its detail stays: it is the cause. */
    if (!is_sticky(atomic_load(&comm->failed)))
        memcpy(comm->last_error, msg, sizeof msg);
    if (is_sticky(status) && atomic_load(&comm->failed) == COLLIE_OK) {
        atomic_store(&comm->failed, status);
        first = 1;
    }
    pthread_mutex_unlock(&comm->fail_lock);
    if (first)
        spread(comm, status, msg);
    return status;
}

collie_status collie__fail_from_peer(collie_comm *comm, collie_status status, const char *msg)
{
    COLLIE_INFO("error", "failure reported by another rank: %s", msg);
    int first = 0;
    pthread_mutex_lock(&comm->fail_lock);
    if (atomic_load(&comm->failed) == COLLIE_OK) {
        snprintf(comm->last_error, sizeof comm->last_error, "%s", msg);
        atomic_store(&comm->failed, status);
        first = 1;
    }
    pthread_mutex_unlock(&comm->fail_lock);
    if (first)
        spread(comm, status, msg); /* pass it on: the peers this rank talks to */
    return status;
}

/* FNV-1a, 64 bits, over two host ids (each up to its end, then a byte no id has): never 0. */
static uint64_t link_key(const char *a, const char *b, size_t id_len)
{
    uint64_t h = 14695981039346656037ull;
    for (const char *id = a; id; id = id == a ? b : NULL) {
        for (size_t i = 0; i < id_len && id[i]; i++)
            h = (h ^ (unsigned char)id[i]) * 1099511628211ull;
        h = (h ^ 0xffu) * 1099511628211ull;
    }
    return h ? h : 1;
}

/* Groups ranks by host identity: host order is that of each host's lowest rank. */
collie_status collie__comm_find_hosts(collie_comm *comm, const char *ids, size_t stride,
                                      size_t id_len, int launcher_local_rank,
                                      int launcher_local_size, const char *launcher)
{
    size_t n = (size_t)comm->size;
    const char *host_id = ids + (size_t)comm->rank * stride;
    int *host_of = malloc(n * sizeof(int)), *identity = malloc(n * sizeof(int));
    int *ranks = malloc(n * sizeof(int)), *start = calloc(n + 1, sizeof(int));
    comm->hosts.host_of = host_of, comm->hosts.identity = identity;
    comm->hosts.ranks = ranks, comm->hosts.start = start;
    if (!host_of || !identity || !ranks || !start)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the host table");
    comm->nhosts = 0;
    for (size_t r = 0; r < n; r++) {
        const char *host = ids + r * stride;
        identity[r] = (int)r;
        host_of[r] = -1;
        for (size_t q = 0; q < r && host_of[r] < 0; q++)
            if (!strncmp(host, ids + q * stride, id_len))
                host_of[r] = host_of[q];
        if (host_of[r] < 0)
            host_of[r] = comm->nhosts++;
        start[host_of[r] + 1]++;
    }
    comm->hosts.link_key = 0;
    for (size_t r = 1; r < n && !comm->hosts.link_key; r++)
        if (host_of[r] == 1) /* rank 0 is on host 0; r is host 1's first rank */
            comm->hosts.link_key = link_key(ids, ids + r * stride, id_len);
    comm->hosts.max_local = 0;
    for (int h = 0; h < comm->nhosts; h++) {
        if (start[h + 1] > comm->hosts.max_local)
            comm->hosts.max_local = start[h + 1];
        start[h + 1] += start[h];
    }
    /* Until the shm transport has every rank's affinity (shm.c), judge by this process's. */
    comm->hosts.oversubscribed = comm->hosts.max_local > comm->cpus;
    comm->hosts.cores = comm->cpus;
    /* Rank order within each host: start[h] serves as host h's cursor, then moves back. */
    for (size_t r = 0; r < n; r++)
        ranks[start[host_of[r]]++] = (int)r;
    for (int h = comm->nhosts; h > 0; h--)
        start[h] = start[h - 1];
    start[0] = 0;
    int me = host_of[comm->rank];
    comm->local_to_global = ranks + start[me]; /* this host's ranks, in the table */
    comm->local_size = start[me + 1] - start[me];
    comm->local_rank = collie__local_index(comm, comm->rank);
    /* A launcher may number a host's ranks in another order (Open MPI 5 does): only a count
     * that disagrees says the host identities are wrong. */
    if (launcher_local_size >= 0 && launcher_local_size != comm->local_size)
        COLLIE_WARN("init",
                    "the launcher (%s) says local rank %d of %d, but ranks sharing host "
                    "'%.*s' make it %d of %d; using the latter",
                    launcher, launcher_local_rank, launcher_local_size, (int)id_len, host_id,
                    comm->local_rank, comm->local_size);
    else if (launcher_local_rank >= 0 && launcher_local_rank != comm->local_rank)
        COLLIE_INFO("init", "the launcher (%s) numbers this rank %d of host '%.*s', collie %d",
                    launcher, launcher_local_rank, (int)id_len, host_id, comm->local_rank);
    return COLLIE_OK;
}

static int cpus_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void *collie__scratch(collie_comm *comm, enum collie__scratch_id id, size_t bytes)
{
    if (bytes <= comm->scratch_bytes[id] && comm->scratch[id])
        return comm->scratch[id];
    free(comm->scratch[id]);
    comm->scratch[id] = malloc(bytes ? bytes : 1);
    comm->scratch_bytes[id] = comm->scratch[id] ? bytes : 0;
    if (!comm->scratch[id])
        collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for %zu bytes of scratch",
                     comm->rank, bytes);
    return comm->scratch[id];
}

collie_comm *collie__comm_create(int rank, int size)
{
    collie_comm *comm = calloc(1, sizeof *comm);
    if (!comm)
        return NULL;
    comm->rank = rank;
    comm->size = size;
    pthread_mutex_init(&comm->fail_lock, NULL);
    comm->token = collie__config_string(COLLIE_CFG_TOKEN);
    comm->timeout_s = collie__config_double(COLLIE_CFG_TIMEOUT);
    comm->cpus = cpus_available();
    comm->crowd_ranks = 1;
    comm->crowd_cpus = comm->cpus;
    comm->nt_min = (size_t)collie__config_int(COLLIE_CFG_NT_MIN);
    comm->p2p_piece = (size_t)collie__config_int(COLLIE_CFG_P2P_PIECE);
    comm->stage_stream = (int)collie__config_int(COLLIE_CFG_STAGE_STREAM);
    comm->scratch_srcs = calloc((size_t)size, sizeof *comm->scratch_srcs);
    comm->family = calloc(1, sizeof *comm->family);
    if (!comm->scratch_srcs || !comm->family) {
        free(comm->scratch_srcs);
        free(comm->family);
        free(comm);
        return NULL;
    }
    comm->family->refs = 1;
    pthread_mutex_init(&comm->family->lock, NULL);
    collie__arm_deadline(comm);
    return comm;
}

static void family_release(struct collie__family *f)
{
    if (atomic_fetch_sub(&f->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&f->lock);
    free(f);
}

int collie__comm_join_family(collie_comm *comm, collie_comm *parent, const int *parent_ranks)
{
    int *map = malloc(sizeof(int) * (size_t)comm->size);
    if (!map)
        return -1;
    for (int r = 0; r < comm->size; r++)
        map[r] = parent->family_rank ? parent->family_rank[parent_ranks[r]] : parent_ranks[r];
    free(comm->family_rank);
    comm->family_rank = map;
    atomic_fetch_add(&parent->family->refs, 1);
    family_release(comm->family);
    comm->family = parent->family;
    return 0;
}

void collie__comm_leave(collie_comm *comm)
{
    struct collie__family *f = comm->family;
    pthread_mutex_lock(&f->lock);
    collie_status status = f->status;
    char cause[sizeof f->cause];
    memcpy(cause, f->cause, sizeof cause);
    pthread_mutex_unlock(&f->lock);
    if (status != COLLIE_OK && atomic_load(&comm->failed) == COLLIE_OK)
        collie__fail(comm, status,
                     "rank %d left after a failure on a communicator split from "
                     "the same one: %s",
                     comm->rank, cause);
}

void collie__comm_free(collie_comm *comm)
{
    family_release(comm->family);
    free(comm->family_rank);
    free(comm->scratch_srcs);
    for (int id = 0; id < COLLIE_SCRATCH_IDS; id++)
        free(comm->scratch[id]);
    free(comm->hosts.identity);
    free(comm->hosts.host_of);
    free(comm->hosts.ranks);
    free(comm->hosts.start);
    pthread_mutex_destroy(&comm->fail_lock);
    free(comm);
}
