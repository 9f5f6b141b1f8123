/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cost_ef.c - whether error-feedback codes pay between hosts (cost.h): the
 * link time they save against the CPU time they cost.
 */
#include "../reduce/quantize.h"
#include "cost.h"
#include "cost_terms.h"

/* A cost of this many bytes decides: latencies are alike both ways, the bytes decide. */
#define DECIDING_BYTES (64.0 * (1 << 20))

/* Bytes of float32 in per byte of code out. */
static double ratio(int kind)
{
    return 4.0 * COLLIE_QUANT_BLOCK / (double)collie__quant_bytes(kind, COLLIE_QUANT_BLOCK);
}

double collie__cost_ef(const struct collie__machine *comm_m, int kind, int codes, double s)
{
    struct collie__machine m = *comm_m; /* the hosts' first ranks: one a host */
    m.ranks = m.hosts;
    m.ranks_per_host = 1;
    double h = m.hosts, sent = 2 * (h - 1) / h * s; /* a ring's, or alltoall + allgather's */
    if (!codes)
        return collie__cost_over_links(&m, 2 * (h - 1), sent);
    double code_beta = kind == COLLIE__QUANT_INT8 ? m.int8_code_beta : m.sign_code_beta;
    /* Hosts that share cores run their first ranks' codes on those cores too. */
    if (m.shared_cores > 0 && h > m.shared_cores)
        code_beta *= m.shared_cores / h;
    return collie__cost_over_links(&m, 2 * (h - 1), sent / ratio(kind)) + s / code_beta;
}

int collie__cost_ef_codes_pay(const struct collie__machine *m, int kind)
{
    return m->hosts > 1 && collie__cost_ef(m, kind, 1, DECIDING_BYTES) <
                               collie__cost_ef(m, kind, 0, DECIDING_BYTES);
}
