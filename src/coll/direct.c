/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * direct.c - allreduce and reduce in one copy: ranks read and write each
 * other's buffers where the user keeps them (transport/shm.h's cross-memory
 * attach) instead of staging them through the slots.
 *
 * Every rank publishes where its input and its output lie, then syncs (the
 * descriptors are compared there, before anybody touches a peer).  Rank r
 * owns slice r of the call (a reduce's root a larger one: slice_start
 * below).  A cache-sized piece at a time, it reads that
 * piece of every peer's input, reduces them with its own in rank order into
 * its output, and writes the result, still in cache, into the output of
 * every other receiving rank.  A last sync: nobody returns, and lets the user
 * touch its buffers, while a peer may still read or write them.
 *
 * Slice r of a rank's buffers is touched by rank r alone (in place, the
 * piece it reads is the piece it later writes), so nothing else orders
 * the ranks.  Two syncs a call, where twoshot takes two per slot-sized
 * chunk; each byte of the user's buffers crosses memory once, and no cache
 * line is handed from core to core: what the window costs in the machine's
 * slow state.
 */
#include <stdint.h>
#include <string.h>

#include "../reduce/reduce.h"
#include "../transport/shm.h"
#include "algo.h"
#include "cost_terms.h"

/* What each rank publishes in its slot: addresses in its own address space. */
struct published {
    uint64_t input;
    uint64_t output; /* 0: this rank receives nothing (reduce, off the root) */
};

/* The addresses rank r published for this call. */
static const struct published *published(const collie_comm *comm, int r, unsigned parity)
{
    return collie__win_slot(comm, r, parity);
}

unsigned collie__publish(collie_comm *comm, const void *input, void *output)
{
    unsigned parity = collie__win_round(comm, sizeof(struct published));
    struct published *mine = collie__win_slot(comm, comm->local_rank, parity);
    mine->input = (uint64_t)(uintptr_t)input;
    mine->output = (uint64_t)(uintptr_t)output;
    return parity;
}

uintptr_t collie__published_input(const collie_comm *comm, int r, unsigned parity)
{
    return (uintptr_t)published(comm, r, parity)->input;
}

uintptr_t collie__published_output(const collie_comm *comm, int r, unsigned parity)
{
    return (uintptr_t)published(comm, r, parity)->output;
}

collie_status collie__direct_reduce_piece(collie_comm *comm, const struct collie__op *op,
                                          unsigned parity, size_t off, size_t m, unsigned char *tmp,
                                          unsigned char *out)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size;
    const void **srcs = comm->scratch_srcs;
    for (int r = 0; r < n; r++) {
        if (r == me) {
            srcs[r] = (const unsigned char *)op->sendbuf + off * es;
            continue;
        }
        uintptr_t from = collie__published_input(comm, r, parity) + off * es;
        unsigned char *to = collie__attach_place(tmp, from);
        collie_status st = collie__attach_read(comm, r, to, from, m * es);
        if (st != COLLIE_OK)
            return st;
        srcs[r] = to;
        tmp = to + m * es;
    }
    collie__reduce(out, srcs, n, m, op->dtype, op->op, comm->size, 0);
    return COLLIE_OK;
}

/* The reduced piece at elements [off, off + m), from `out` into every other rank that receives. */
static collie_status write_piece(collie_comm *comm, const struct collie__op *op, unsigned parity,
                                 size_t off, size_t m, const unsigned char *out)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size;
    for (int k = 1; k < n; k++) {
        int r = (me + k) % n;
        uint64_t to = published(comm, r, parity)->output;
        if (!to)
            continue;
        collie_status st = collie__attach_write(comm, r, (uintptr_t)to + off * es, out, m * es);
        if (st != COLLIE_OK)
            return st;
        collie__count_sent(comm, COLLIE_LANE_COLL, m * es);
    }
    return COLLIE_OK;
}

unsigned char *collie__direct_pieces(collie_comm *comm, size_t es, size_t *piece)
{
    const size_t n = (size_t)comm->local_size;
    size_t m = COLLIE__DIRECT_PIECE_SLOTS * collie__win_bytes(comm) / n / es;
    *piece = m ? m : 1;
    return collie__scratch(comm, COLLIE_SCRATCH_TMP, n * (*piece * es + 63));
}

/*
 * Where rank r's slice starts.  In a reduce the root writes its slice to no
 * peer, where every other rank both reads n - 1 pieces and writes one: the
 * root takes n shares of the call, the others n - 1 each, so that all finish
 * together (at 2 ranks the root reduces two thirds).  Measured at 2 ranks
 * against even slices, 5 rounds alternated: 0.76-0.93 of the time at 64
 * KiB-2 MiB, but 0.92-1.16 at 4 MiB and 1.07-1.09 at 8-16 MiB, where memory,
 * not the system calls, bounds both ranks: slices are even from 4 MiB.
 */
#define WEIGHTED_SLICES_BELOW ((size_t)4 << 20)

static size_t slice_start(size_t count, size_t es, int r, int n, int root)
{
    if (root < 0 || count * es >= WEIGHTED_SLICES_BELOW)
        return collie__seg(count, r, n);
    unsigned total = (unsigned)(n + (n - 1) * (n - 1));
    unsigned before = (unsigned)(r <= root ? r * (n - 1) : n + (r - 1) * (n - 1));
    return (size_t)((unsigned __int128)count * before / total);
}

static collie_status direct(collie_comm *comm, const struct collie__op *op, int root)
{
    const int n = comm->local_size, me = comm->local_rank;
    const size_t es = op->elem_size;
    int receives = root < 0 || root == comm->rank;
    /*
     * n pieces in scratch, each placed for the kernel's copy (shm.h): n-1 of
     * the peers' inputs, and the result where we keep none, placed for the
     * root's output, which alone receives it.
     */
    size_t piece;
    unsigned char *tmp = collie__direct_pieces(comm, es, &piece);
    if (!tmp)
        return comm->failed;

    /*
     * The slots of this parity are not written again before every rank has
     * passed this call's last sync (shm.h): the addresses stay readable.
     */
    unsigned parity = collie__publish(comm, op->sendbuf, receives ? op->recvbuf : NULL);
    collie_status st = collie__win_sync(comm);

    size_t lo = slice_start(op->count, es, me, n, root);
    size_t hi = slice_start(op->count, es, me + 1, n, root);
    for (size_t off = lo; st == COLLIE_OK && off < hi; off += piece) {
        size_t m = hi - off < piece ? hi - off : piece;
        unsigned char *out =
            receives
                ? (unsigned char *)op->recvbuf + off * es
                : collie__attach_place(tmp + (size_t)(n - 1) * (piece * es + 63),
                                       collie__published_output(comm, root, parity) + off * es);
        st = collie__direct_reduce_piece(comm, op, parity, off, m, tmp, out);
        if (st == COLLIE_OK)
            st = write_piece(comm, op, parity, off, m, out);
    }
    /* Every rank passes the last sync, a failed one too: its peers then learn at once. */
    collie_status last = collie__win_sync(comm);
    if (st == COLLIE_OK && last == COLLIE_OK) /* the peers read their slices of our input */
        collie__count_sent(comm, COLLIE_LANE_COLL, (op->count - (hi - lo)) * es);
    return st != COLLIE_OK ? st : last;
}

static collie_status allreduce_direct(collie_comm *comm, const struct collie__op *op)
{
    return direct(comm, op, -1);
}

static collie_status reduce_direct(collie_comm *comm, const struct collie__op *op)
{
    return direct(comm, op, op->root);
}

/*
 * Direct (direct.c): two syncs; each rank copies its slice of every peer's
 * input in, and the reduced slice out to every peer, in pieces of
 * COLLIE__DIRECT_PIECE_SLOTS slots / n, by a system call each, at the
 * attach rate; it reads and writes its own slice, and the pieces it copied,
 * in cache.
 */
static double moved_cost(machine *m, double s, double share)
{
    double n = m->ranks_per_host, slice = share * s / n;
    if (!collie__cost_attach_offered(m))
        return HUGE_VAL;
    double calls = 2 * (n - 1) * ceil(s / (COLLIE__DIRECT_PIECE_SLOTS * (double)m->slot_bytes));
    return 2 * collie__cost_sync(m) +
           collie__cost_attach(m, calls, 2 * (n - 1) * slice, 2 * s * n) +
           collie__cost_move(m, collie__cost_reduction_beta(m, s), 2 * slice, 2 * (n - 1) * slice);
}

static double direct_cost(machine *m, double s, int degree)
{
    (void)degree;
    return moved_cost(m, s, 1);
}

/*
 * A reduce's ranks each move n (n - 1) of the n + (n - 1)^2 shares below
 * WEIGHTED_SLICES_BELOW (slice_start()), where an allreduce's move 2 (n - 1)
 * of n: two thirds as much at 2 ranks.  Measured at 2 ranks on the Xeon,
 * 4.8-5.3 us at 64 KiB and 14.9-17.0 at 256, where the allreduce's price
 * said 7.7 and 26.5 at the rates it measured at init (23 GB/s, 0.41 us a
 * call); this says 5.6 and 18.1.
 */
static double reduce_direct_cost(machine *m, double s, int degree)
{
    (void)degree;
    double n = m->ranks_per_host;
    double weighted = n * n / (2 * (n + (n - 1) * (n - 1)));
    return moved_cost(m, s, s < (double)WEIGHTED_SLICES_BELOW ? weighted : 1);
}

const struct collie__algo collie__algo_allreduce_direct = {
    .name = "direct",
    .wire = 13,
    .coll = COLLIE_COLL_ALLREDUCE,
    .scope = COLLIE_SCOPE_HOST,
    .flags = COLLIE__ALGO_ATTACH,
    .run = allreduce_direct,
    .cost = direct_cost,
};

const struct collie__algo collie__algo_reduce_direct = {
    .name = "direct",
    .wire = 13,
    .coll = COLLIE_COLL_REDUCE,
    .scope = COLLIE_SCOPE_HOST,
    .flags = COLLIE__ALGO_ATTACH,
    .run = reduce_direct,
    .cost = reduce_direct_cost,
};
