/*
 * comm.c - creating and destroying communicators, and recording failures.
 */
#define _GNU_SOURCE
#include "comm.h"

#include <sched.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/algo.h"
#include "../transport/net.h"
#include "../transport/shm.h"
#include "../transport/transport.h"
#include "auth.h"
#include "bootstrap.h"
#include "config.h"
#include "log.h"

static char init_error[512];

char *collie__init_error_buffer(size_t *len)
{
    *len = sizeof init_error;
    return init_error;
}

static int is_sticky(collie_status status)
{
    return status != COLLIE_OK && status != COLLIE_ERR_INVALID_ARG &&
           status != COLLIE_ERR_UNSUPPORTED;
}

collie_status collie__fail(collie_comm *comm, collie_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(comm->last_error, sizeof comm->last_error, fmt, ap);
    va_end(ap);
    COLLIE_WARN("error", "%s: %s", collie__status_name(status), comm->last_error);
    if (is_sticky(status) && comm->failed == COLLIE_OK) {
        comm->failed = status;
        collie__shm_abort(comm, status, comm->last_error);
        collie__net_shutdown(comm); /* ranks on other hosts stop waiting for this one */
    }
    return status;
}

collie_status collie__fail_from_peer(collie_comm *comm, collie_status status, const char *msg)
{
    snprintf(comm->last_error, sizeof comm->last_error, "%s", msg);
    COLLIE_INFO("error", "failure reported by another rank: %s", msg);
    if (comm->failed == COLLIE_OK)
        comm->failed = status;
    return status;
}

/* Groups ranks by host identity: host order is that of each host's lowest rank. */
static collie_status find_hosts(collie_comm *comm, const struct collie__identity *id)
{
    size_t n = (size_t)comm->size;
    char *ids = malloc(n * COLLIE_HOST_ID_LEN);
    if (!ids)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the host table");
    collie_status st = collie__bootstrap_allgather(comm, id->host_id, ids, COLLIE_HOST_ID_LEN);
    if (st != COLLIE_OK) {
        free(ids);
        return st;
    }
    int *host_of = malloc(n * sizeof(int)), *identity = malloc(n * sizeof(int));
    int *ranks = malloc(n * sizeof(int)), *start = calloc(n + 1, sizeof(int));
    comm->hosts.host_of = host_of, comm->hosts.identity = identity;
    comm->hosts.ranks = ranks, comm->hosts.start = start;
    if (!host_of || !identity || !ranks || !start) {
        free(ids);
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the host table");
    }
    comm->nhosts = 0;
    for (size_t r = 0; r < n; r++) {
        const char *host = ids + r * COLLIE_HOST_ID_LEN;
        identity[r] = (int)r;
        host_of[r] = -1;
        for (size_t q = 0; q < r && host_of[r] < 0; q++)
            if (!strncmp(host, ids + q * COLLIE_HOST_ID_LEN, COLLIE_HOST_ID_LEN))
                host_of[r] = host_of[q];
        if (host_of[r] < 0)
            host_of[r] = comm->nhosts++;
        start[host_of[r] + 1]++;
    }
    free(ids);
    comm->hosts.max_local = 0;
    for (int h = 0; h < comm->nhosts; h++) {
        if (start[h + 1] > comm->hosts.max_local)
            comm->hosts.max_local = start[h + 1];
        start[h + 1] += start[h];
    }
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
    if ((id->local_rank >= 0 && id->local_rank != comm->local_rank) ||
        (id->local_size >= 0 && id->local_size != comm->local_size))
        COLLIE_WARN("init", "the launcher (%s) says local rank %d of %d, but ranks sharing host "
                    "'%s' make it %d of %d; using the latter",
                    id->source, id->local_rank, id->local_size, id->host_id, comm->local_rank,
                    comm->local_size);
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

static void destroy(collie_comm *comm)
{
    collie__net_close(comm);
    collie__shm_close(comm);
    collie__bootstrap_close(comm);
    free(comm->peer_transport);
    free(comm->scratch_srcs);
    free(comm->scratch[0]);
    free(comm->scratch[1]);
    free(comm->hosts.identity);
    free(comm->hosts.host_of);
    free(comm->hosts.ranks);
    free(comm->hosts.start);
    free(comm);
}

static collie_status init_fail(collie_comm *comm, collie_status status)
{
    snprintf(init_error, sizeof init_error, "%s", comm->last_error);
    destroy(comm);
    return status;
}

collie_status collie_init(collie_comm **out)
{
    if (!out) {
        snprintf(init_error, sizeof init_error, "collie_init: comm (the output pointer) is NULL");
        return COLLIE_ERR_INVALID_ARG;
    }
    *out = NULL;
    collie_comm *comm = calloc(1, sizeof *comm);
    if (!comm) {
        snprintf(init_error, sizeof init_error, "collie_init: no memory for a communicator");
        return COLLIE_ERR_NOMEM;
    }
    if (collie__config_load() != 0)
        return init_fail(comm, collie__fail(comm, COLLIE_ERR_INVALID_ARG, "%s",
                                            collie__config_error()));
    struct collie__identity id;
    char err[400];
    if (collie__identity_from_env(&id, err, sizeof err) != 0)
        return init_fail(comm, collie__fail(comm, COLLIE_ERR_INVALID_ARG, "%s", err));
    comm->rank = id.rank;
    comm->size = id.size;
    comm->timeout_s = collie__config_double(COLLIE_CFG_TIMEOUT);
    comm->cpus = cpus_available();
    comm->nt_min = (size_t)collie__config_int(COLLIE_CFG_NT_MIN);
    collie__log_set_rank(comm->rank);
    collie__arm_deadline(comm);

    if (comm->size > 1 && comm->rank == 0 && !collie__auth_has_token())
        COLLIE_WARN("init", "COLLIE_TOKEN is not set: any process that reaches %s:%d can join "
                    "this job or feed it data. `collie run` sets a random one; with other "
                    "launchers export the same random COLLIE_TOKEN to every rank",
                    id.addr_host, id.addr_port);
    collie_status st = collie__select_init(comm);
    if (st == COLLIE_OK)
        st = collie__bootstrap_open(comm, &id);
    if (st == COLLIE_OK)
        st = find_hosts(comm, &id);
    if (st == COLLIE_OK)
        st = collie__select_check_hosts(comm);
    if (st == COLLIE_OK)
        st = collie__shm_open(comm);
    if (st == COLLIE_OK)
        st = collie__net_open(comm);
    if (st == COLLIE_OK) {
        comm->peer_transport = calloc((size_t)comm->size, sizeof *comm->peer_transport);
        comm->scratch_srcs = calloc((size_t)comm->local_size, sizeof *comm->scratch_srcs);
        if (!comm->peer_transport || !comm->scratch_srcs)
            st = collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the peer table");
    }
    if (st != COLLIE_OK)
        return init_fail(comm, st);
    for (int r = 0; r < comm->size; r++)
        comm->peer_transport[r] = &collie__tcp_transport;
    for (int i = 0; i < comm->local_size; i++)
        comm->peer_transport[comm->local_to_global[i]] = &collie__shm_transport;
    COLLIE_INFO("init", "rank %d of %d (from %s), host '%s' (%d of %d): local rank %d of %d; "
                "shm within the host%s", comm->rank, comm->size, id.source, id.host_id,
                comm->hosts.host_of[comm->rank] + 1, comm->nhosts, comm->local_rank, comm->local_size,
                comm->nhosts > 1 ? ", tcp to the others" : "");
    *out = comm;
    return COLLIE_OK;
}

collie_status collie_finalize(collie_comm *comm)
{
    if (comm)
        destroy(comm);
    return COLLIE_OK;
}

int collie_rank(const collie_comm *comm) { return comm ? comm->rank : -1; }
int collie_size(const collie_comm *comm) { return comm ? comm->size : -1; }
int collie_local_rank(const collie_comm *comm) { return comm ? comm->local_rank : -1; }
int collie_local_size(const collie_comm *comm) { return comm ? comm->local_size : -1; }

collie_status collie_get_counters(const collie_comm *comm, unsigned long long *ops,
                                  unsigned long long *bytes_sent)
{
    if (!comm)
        return COLLIE_ERR_INVALID_ARG;
    if (ops)
        *ops = comm->ops;
    if (bytes_sent)
        *bytes_sent = comm->bytes_sent;
    return COLLIE_OK;
}

const char *collie_last_error(const collie_comm *comm)
{
    return comm ? comm->last_error : init_error;
}
