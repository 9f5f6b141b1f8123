/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport.c - the registry of transports: which exist in this build, which
 * one carries each peer (the first in order of preference that reaches it,
 * as NCCL asks each transport whether it canConnect), and the failure hook
 * that tells every transport's peers at once.
 */
#include <stdlib.h>

#include "../core/config.h"
#include "../core/log.h"
#include "transport.h"

const struct collie__transport *const collie__transports[] = {
    &collie__shm_transport, /* ranks on this host */
    &collie__tcp_transport, /* everyone else */
    NULL,
};

static void abort_all(collie_comm *comm, collie_status status, const char *msg)
{
    for (int i = 0; collie__transports[i]; i++)
        collie__transports[i]->abort(comm, status, msg);
}

collie_status collie__transports_check(collie_comm *comm)
{
    for (int i = 0; collie__transports[i]; i++) {
        if (!collie__transports[i]->check)
            continue;
        collie_status st = collie__transports[i]->check(comm);
        if (st != COLLIE_OK)
            return st;
    }
    return COLLIE_OK;
}

static collie_status assign_peers(collie_comm *comm)
{
    comm->peer_transport = calloc((size_t)comm->size, sizeof *comm->peer_transport);
    if (!comm->peer_transport)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the peer table");
    for (int r = 0; r < comm->size; r++) {
        for (int i = 0; collie__transports[i] && !comm->peer_transport[r]; i++)
            if (collie__transports[i]->reaches(comm, r))
                comm->peer_transport[r] = collie__transports[i];
        if (!comm->peer_transport[r])
            return collie__fail(comm, COLLIE_ERR_INTERNAL,
                                "rank %d: no transport of this build reaches rank %d", comm->rank,
                                r);
    }
    return COLLIE_OK;
}

collie_status collie__transports_open(collie_comm *comm)
{
    comm->on_fail = abort_all;
    collie_status st = COLLIE_OK;
    for (int i = 0; collie__transports[i] && st == COLLIE_OK; i++)
        st = collie__transports[i]->open(comm);
    if (st == COLLIE_OK)
        st = assign_peers(comm);
    if (st == COLLIE_OK && collie__log_enabled(COLLIE_LOG_INFO))
        for (int i = 0; collie__transports[i]; i++) {
            int peers = 0;
            for (int r = 0; r < comm->size; r++)
                peers += r != comm->rank && comm->peer_transport[r] == collie__transports[i];
            COLLIE_INFO("init", "transport %s: %d peer(s)", collie__transports[i]->name, peers);
        }
    return st;
}

void collie__transports_close(collie_comm *comm)
{
    for (int i = 0; collie__transports[i]; i++)
        collie__transports[i]->close(comm);
    free(comm->peer_transport);
    comm->peer_transport = NULL;
    comm->on_fail = NULL;
}

/* Per thread: the lanes of the asynchronous core wait beside the caller. */
static _Thread_local __attribute__((tls_model("initial-exec"))) const _Atomic int *caller_waiting;

void collie__wait_background(const _Atomic int *waiting) { caller_waiting = waiting; }

uint64_t collie__wait_yield_ns(int ranks, int cpus)
{
    long long yield = collie__config_int(COLLIE_CFG_YIELD_US);
    if (yield < 0)
        yield = ranks > cpus ? 2000 : 1000;
    return (uint64_t)yield * 1000u;
}

int collie__wait_may_poll(void)
{
    return !caller_waiting || atomic_load_explicit(caller_waiting, memory_order_relaxed) > 0;
}
