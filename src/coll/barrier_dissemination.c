/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * barrier_dissemination.c - the dissemination barrier: in round k every
 * rank signals rank me+2^k and waits for rank me-2^k; after ceil(log2 n)
 * rounds every rank has heard, through some chain, from every other.
 * The signals are empty messages: their headers alone also check that every
 * rank is in the same barrier.
 */
#include "../transport/xfer.h"
#include "algo.h"
#include "cost_terms.h"

static collie_status barrier_dissemination(collie_comm *comm, const struct collie__op *op)
{
    (void)op;
    const int n = comm->size, me = comm->rank;
    for (int k = 1; k < n; k <<= 1) {
        collie_status st =
            collie__xfer_sendrecv(comm, (me + k) % n, NULL, 0, (me - k + n) % n, NULL, 0);
        if (st != COLLIE_OK)
            return st;
    }
    return COLLIE_OK;
}

/* log2(n) rounds of a message with no data. */
static double barrier_dissemination_cost(machine *m, double s, int degree)
{
    (void)s;
    (void)degree;
    return collie__cost_over_links(m, collie__cost_log2_steps(m->ranks), 0);
}

const struct collie__algo collie__algo_barrier_dissemination = {
    .name = "dissemination",
    .wire = 11,
    .coll = COLLIE_COLL_BARRIER,
    .scope = COLLIE_SCOPE_ANY,
    .run = barrier_dissemination,
    .cost = barrier_dissemination_cost,
};
