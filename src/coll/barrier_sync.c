/* SPDX-License-Identifier: BSD-3-Clause */
/* barrier_sync.c - barrier: one sync of the window, which every rank must reach. */
#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status barrier_sync(collie_comm *comm, const struct collie__op *op)
{
    (void)op;
    return collie__win_sync(comm);
}

/* One sync of the host's ranks. */
static double barrier_sync_cost(machine *m, double s, int degree)
{
    (void)s;
    (void)degree;
    return collie__cost_sync(m);
}

const struct collie__algo collie__algo_barrier_sync = {
    .name = "sync",
    .wire = 10,
    .coll = COLLIE_COLL_BARRIER,
    .scope = COLLIE_SCOPE_HOST,
    .run = barrier_sync,
    .cost = barrier_sync_cost,
};
