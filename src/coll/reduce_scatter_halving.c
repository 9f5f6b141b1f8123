/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce_scatter_halving.c - reduce_scatter across hosts by recursive
 * halving, the links crossed last: log2(n) steps, each exchanging half of
 * what a rank still holds with the member whose number differs in one bit,
 * the lowest bit first.  Members are numbered host by host (hosts.ranks), so
 * with a power of two ranks on each host the first steps stay within a host
 * and only the last, the smallest, cross a link: a link carries (H - 1) of a
 * rank's blocks per rank on its host, where the ring's carries n - 1 (2 hosts
 * of 2: 16 KiB each way for a 32 KiB call, the ring 24).
 *
 * Halving from the lowest bit with contiguous halves leaves member v the
 * range at the bit-reversal of v, so the blocks are laid out in that order
 * first: position p holds the block of member bitrev(p), and member v ends
 * holding its own.  A group that is not a power of two runs the ring.
 */
#include "../reduce/reduce.h"
#include "algo.h"
#include "cost_terms.h"
#include "group.h"

/* The ring, which runs where halving does not fit. */
static const struct collie__algo *ring(void)
{
    return collie__algo_find(COLLIE_COLL_REDUCE_SCATTER, "ring", 4);
}

/* v's lowest `bits` bits in reverse order. */
static int bit_reversed(int v, int bits)
{
    int r = 0;
    for (int b = 0; b < bits; b++)
        r |= ((v >> b) & 1) << (bits - 1 - b);
    return r;
}

static collie_status reduce_scatter_halving(collie_comm *comm, const struct collie__op *op)
{
    const int n = comm->size;
    if (n & (n - 1))
        return ring()->run(comm, op);
    int bits = 0;
    while ((1 << bits) < n)
        bits++;
    /* every rank, host by host: this rank's number is its place among its host's */
    const int *member = comm->hosts.ranks;
    const int me = comm->hosts.start[comm->hosts.host_of[comm->rank]] + comm->local_rank;
    const size_t es = op->elem_size, block = op->count * es;
    unsigned char *work = collie__scratch(comm, COLLIE_SCRATCH_WORK, block * (size_t)n);
    if (!work)
        return comm->failed;
    const unsigned char *in = op->sendbuf;
    for (int p = 0; p < n; p++)
        collie__copy(work + (size_t)p * block, in + (size_t)member[bit_reversed(p, bits)] * block,
                     block);
    const collie_op step_op = op->op == COLLIE_AVG ? COLLIE_SUM : op->op;
    int lo = 0; /* this member still holds positions lo .. lo + 2 half */
    collie_status st = COLLIE_OK;
    for (int d = 1, half = n / 2; st == COLLIE_OK && d < n; d *= 2, half /= 2) {
        const int partner = member[me ^ d], lower = !(me & d);
        const int keep = lower ? lo : lo + half, give = lower ? lo + half : lo;
        st = collie__exchange_reduce(comm, partner, work + (size_t)give * block,
                                     (size_t)half * block, partner, work + (size_t)keep * block,
                                     work + (size_t)keep * block, (size_t)half * op->count,
                                     op->dtype, step_op, !lower);
        lo = keep;
    }
    if (st != COLLIE_OK)
        return st;
    collie__copy(op->recvbuf, work + (size_t)lo * block, block);
    return collie__average(op->recvbuf, op->count, op->dtype, op->op, n);
}

/*
 * log2(n) steps; those at distances of a host's ranks and more cross the
 * links, halving from (H - 1) / 2 of the call's blocks on each of a host's
 * L flows down to one: L (H - 1) blocks through each link.  The ring's
 * price where that saves the links nothing: where the ranks are not a power
 * of two on every host (it runs the ring, or crosses the links early), and
 * with one rank a host, where both move n - 1 blocks a link and halving's
 * fewer steps won below 32 KiB (4 emulated hosts, 1 Gbit/s: 18.7 us at 128
 * B, the ring 30.2) but lost from 8 MiB (63-68 ms, the ring 53-54).
 */
static double reduce_scatter_halving_cost(machine *m, double s, int degree)
{
    double per_host = m->ranks_per_host, hosts = m->hosts;
    if ((m->ranks & (m->ranks - 1)) || (m->ranks_per_host & (m->ranks_per_host - 1)) ||
        per_host * hosts != m->ranks || m->hosts < 2 || m->ranks_per_host < 2)
        return ring()->cost(m, s, degree);
    return collie__cost_over_links(m, collie__cost_log2_steps(m->ranks),
                                   per_host * (hosts - 1) * s);
}

const struct collie__algo collie__algo_reduce_scatter_halving = {
    .name = "halving",
    .wire = 15,
    .coll = COLLIE_COLL_REDUCE_SCATTER,
    .scope = COLLIE_SCOPE_ANY,
    .run = reduce_scatter_halving,
    .cost = reduce_scatter_halving_cost,
};
