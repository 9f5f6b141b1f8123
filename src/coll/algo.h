/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * algo.h - the algorithms, each in its own file, and how one is chosen.
 *
 * Algorithms work on the shared-memory window of the host (transport/shm.h)
 * or on point-to-point transports (transport/transport.h); they never see
 * sockets or mappings.  Arguments reach them already checked and normalised
 * by coll.c (in-place forms resolved, count > 0).
 */
#ifndef COLLIE_ALGO_H
#define COLLIE_ALGO_H

#include <stdio.h>
#include <string.h>

#include "../core/comm.h"
#include "../reduce/copy.h"
#include "../reduce/reduce.h"
#include "../reduce/stream.h"
#include "state.h"

struct collie__group;

typedef collie_status (*collie__algo_fn)(collie_comm *comm, const struct collie__op *op);

/*
 * Where an algorithm works: through one host's shared-memory window (HOST),
 * or on any placement of ranks (ANY).  On one host the cost model chooses
 * among the HOST algorithms (among the ANY ones for a collective that has no
 * HOST algorithm), across hosts among the ANY ones; COLLIE_ALGO may force an
 * ANY algorithm on one host too (the tests do).
 */
enum collie__algo_scope { COLLIE_SCOPE_HOST, COLLIE_SCOPE_ANY };

struct collie__algo {
    enum collie__algo_id id; /* the name and the number on the wire (core/op.h) */
    enum collie__coll coll;
    enum collie__algo_scope scope;
    collie__algo_fn run;
    unsigned flags; /* select.c's: where the model offers it, what it needs */
};

/* Copies into the user's output: streaming past the caches when op->stream_out says so. */
static inline void collie__copy_out(const struct collie__op *op, void *dst, const void *src,
                                    size_t n)
{
    if (op->stream_out)
        collie__copy_stream(dst, src, n);
    else
        collie__copy(dst, src, n);
}

/* Slice i of m elements split n ways starts here. */
static inline size_t collie__seg(size_t m, int i, int n)
{
    return (size_t)((unsigned __int128)m * (unsigned)i / (unsigned)n);
}

/* COLLIE_AVG's last step: buf /= divisor; nothing for the other ops. */
static inline collie_status collie__average(void *buf, size_t count, collie_dtype dtype,
                                            collie_op op, int divisor)
{
    if (op == COLLIE_AVG) {
        const void *srcs[1] = {buf};
        collie__reduce(buf, srcs, 1, count, dtype, COLLIE_AVG, divisor, 0);
    }
    return COLLIE_OK;
}

/*
 * Where a rooted reduction accumulates: the root's recvbuf, else scratch
 * (recvbuf may be NULL off the root), holding a copy of the input.  NULL
 * after failing the communicator with NOMEM.
 */
static inline unsigned char *collie__reduce_work(collie_comm *comm, const struct collie__op *op)
{
    size_t bytes = op->count * op->elem_size;
    unsigned char *work =
        comm->rank == op->root ? op->recvbuf : collie__scratch(comm, COLLIE_SCRATCH_WORK, bytes);
    if (work && op->sendbuf != work)
        memcpy(work, op->sendbuf, bytes);
    return work;
}

/* Host-local algorithms (shared-memory window). */
/* root < 0: every rank receives the result (allreduce); else only root (reduce). */
collie_status collie__oneshot(collie_comm *comm, const struct collie__op *op, int root);
collie_status collie__twoshot(collie_comm *comm, const struct collie__op *op, int root);
/*
 * The same in one copy, reading and writing peers' buffers (shm.h's attach;
 * collie__attach_ok), a piece of COLLIE__DIRECT_PIECE_SLOTS slots / n at a
 * time: larger pieces than a round's take fewer system calls, measured
 * 2-17% faster from 1 MiB up at 2 ranks.
 */
#define COLLIE__DIRECT_PIECE_SLOTS 4
collie_status collie__direct(collie_comm *comm, const struct collie__op *op, int root);
/*
 * The single-copy algorithms' addresses (direct.c): starts a round and puts
 * where this rank's input and output lie (output NULL: it receives nothing)
 * in its slot.  A sync must follow before any peer reads them, and every
 * rank must pass one more before it returns: until then peers may copy
 * from and into its buffers.  Returns the round's parity.
 */
unsigned collie__publish(collie_comm *comm, const void *input, void *output);
/* Where local rank r's input and output lie, as it published them in `parity`. */
uintptr_t collie__published_input(const collie_comm *comm, int r, unsigned parity);
uintptr_t collie__published_output(const collie_comm *comm, int r, unsigned parity);
/*
 * Elements [off, off + m) of every local rank's input (this rank's own
 * op->sendbuf, the peers' as published in `parity`) reduced in rank order
 * into out; tmp holds n-1 pieces of m elements and 63 bytes (each placed
 * for the kernel's copy, shm.h's collie__attach_place).  out may be this rank's
 * input at off (in place).
 */
collie_status collie__direct_reduce_piece(collie_comm *comm, const struct collie__op *op,
                                          unsigned parity, size_t off, size_t m, unsigned char *tmp,
                                          unsigned char *out);
/*
 * The pieces of direct.c's reductions for elements of es bytes: their
 * length in *piece (COLLIE__DIRECT_PIECE_SLOTS slots / n, at least one
 * element), and scratch for n of them, each 63 bytes longer (COLLIE_SCRATCH_TMP); NULL after
 * failing the communicator with NOMEM.
 */
unsigned char *collie__direct_pieces(collie_comm *comm, size_t es, size_t *piece);
/*
 * A window algorithm (twoshot, staged; an alltoall's pairwise exchange
 * where the model prices it below staged: cost.h's collie__window_algo) or
 * its single copy (direct), chosen in the call by local rank 0
 * (adaptive.c): it tells from how fast the ranks' CPUs hand each other a
 * cache line whether the host placed them near (sharing a cache) or far (a
 * sync slower than the machine's host_far_sync_us per peer).  Far, it runs
 * direct; near, the one of the two it timed faster at this collective and
 * size (arms.c).  Every rank runs its verdict, the algorithm included.
 */
#define COLLIE__ADAPTIVE_PROBES 8
/* How long local rank 0 trusts a probe's finding: calls within it sync once, and do not probe. */
#define COLLIE__ADAPTIVE_PROBE_NS 1000000u
collie_status collie__adaptive(collie_comm *comm, const struct collie__op *op);
collie_status collie__broadcast_staged(collie_comm *comm, const struct collie__op *op);
/* The same in one copy (shm.h's attach): each rank reads from the peers' own buffers. */
collie_status collie__broadcast_direct(collie_comm *comm, const struct collie__op *op);
collie_status collie__allgather_direct(collie_comm *comm, const struct collie__op *op);
collie_status collie__reduce_scatter_direct(collie_comm *comm, const struct collie__op *op);
collie_status collie__alltoall_direct(collie_comm *comm, const struct collie__op *op);
collie_status collie__allgather_staged(collie_comm *comm, const struct collie__op *op);
collie_status collie__reduce_scatter_staged(collie_comm *comm, const struct collie__op *op);
collie_status collie__alltoall_staged(collie_comm *comm, const struct collie__op *op);
collie_status collie__barrier_sync(collie_comm *comm, const struct collie__op *op);

/*
 * Point-to-point algorithms (xfer.h), for any placement of ranks.  The group
 * forms reduce each member's `in` into its buf (in may be buf: in place;
 * otherwise it is read, never copied) among the group's members;
 * COLLIE_AVG divides by `divisor` (the whole communicator's size when the
 * group is a part of it).
 */
collie_status collie__ring_allreduce(collie_comm *comm, const struct collie__group *g,
                                     const void *in, void *buf, size_t count, collie_dtype dtype,
                                     collie_op op, int divisor);
collie_status collie__rd_allreduce(collie_comm *comm, const struct collie__group *g, const void *in,
                                   void *buf, size_t count, collie_dtype dtype, collie_op op,
                                   int divisor);
collie_status collie__rab_allreduce(collie_comm *comm, const struct collie__group *g,
                                    const void *in, void *buf, size_t count, collie_dtype dtype,
                                    collie_op op, int divisor);
/*
 * One step of the point-to-point reductions (exchange.c): sends slen bytes
 * of sbuf to global rank `to` (slen 0: none) while receiving count elements
 * from `from` and combining them with mine into dst -- theirs op mine when
 * theirs_first, else mine op theirs (the lower member's data first, so both
 * partners compute the same bits).  mine may be dst (in place), and sbuf
 * may be dst too (the same range); sbuf may not overlap dst otherwise.
 * Pipelined in pieces of COLLIE_P2P_PIECE: a piece is combined while the
 * next is on the wire.  Uses COLLIE_SCRATCH_TMP.
 */
collie_status collie__exchange_reduce(collie_comm *comm, int to, const void *sbuf, size_t slen,
                                      int from, void *dst, const void *mine, size_t count,
                                      collie_dtype dtype, collie_op op, int theirs_first);

collie_status collie__allreduce_ring(collie_comm *comm, const struct collie__op *op);
collie_status collie__allreduce_rab(collie_comm *comm, const struct collie__op *op);
collie_status collie__allreduce_rd(collie_comm *comm, const struct collie__op *op);
collie_status collie__reduce_ring(collie_comm *comm, const struct collie__op *op);
collie_status collie__reduce_rd(collie_comm *comm, const struct collie__op *op);
collie_status collie__reduce_scatter_ring(collie_comm *comm, const struct collie__op *op);
collie_status collie__allgather_ring(collie_comm *comm, const struct collie__op *op);
collie_status collie__broadcast_tree(collie_comm *comm, const struct collie__op *op);
collie_status collie__reduce_tree(collie_comm *comm, const struct collie__op *op);
collie_status collie__alltoall_pairwise(collie_comm *comm, const struct collie__op *op);
collie_status collie__barrier_dissemination(collie_comm *comm, const struct collie__op *op);

/* One step of decentralized averaging, or gathering, over op->nbr (neighbor_allreduce.c). */
collie_status collie__neighbor_allreduce(collie_comm *comm, const struct collie__op *op);
/* The same between hosts, op->nbr in host numbers (hierarchical_neighbor.c). */
collie_status collie__hierarchical_neighbor_allreduce(collie_comm *comm,
                                                      const struct collie__op *op);

/* Across hosts: shared memory within each host, TCP between them (hierarchical.c). */
#define COLLIE__HIER_RD_MAX_BYTES (64u << 10) /* cross-host slices below this: recursive doubling */
collie_status collie__allreduce_hierarchical(collie_comm *comm, const struct collie__op *op);

/*
 * The hierarchical algorithms' slices: each chunk of the data splits into
 * as many slices as the largest host has ranks, and slice s belongs to local
 * rank s mod (ranks on that host), so owners on uneven hosts agree on every
 * length.  This is slice s's owner on host h.
 */
static inline int collie__slice_owner(const collie_comm *comm, int h, int s)
{
    int first = comm->hosts.start[h], on_host = comm->hosts.start[h + 1] - first;
    return comm->hosts.ranks[first + s % on_host];
}

/* The exchange between hosts of one slice (s), in place on its count elements. */
typedef collie_status (*collie__slice_fn)(collie_comm *comm, const struct collie__op *op, int s,
                                          unsigned char *buf, size_t count, void *ctx);

/*
 * The staging of the hierarchical algorithms (hierarchical.c): op's data
 * goes through the host's window chunk by chunk; each local rank reduces its
 * slices over the host's slots with local_op (COLLIE_AVG: divided by the
 * host's ranks) and hands each to cross; then every rank copies every slice
 * out into op->recvbuf.
 */
collie_status collie__hierarchical_staged(collie_comm *comm, const struct collie__op *op,
                                          collie_op local_op, collie__slice_fn cross, void *ctx);

/*
 * Makes the collective layer's state (comm->coll, state.h) and reads
 * COLLIE_ALGO into its forced choices.  Unknown names are an error that lists
 * what exists (a typo must not silently fall back).
 */
collie_status collie__select_init(collie_comm *comm);

/* Frees comm->coll; nothing if it was never made. */
void collie__select_close(collie_comm *comm);

/* Forces comm's choices as COLLIE_ALGO's syntax in spec says (collie__select_init's parser). */
collie_status collie__select_force(collie_comm *comm, const char *spec);

/*
 * Measures the links between hosts for the cost model (link_probe.c):
 * collective, after the transports opened; sets comm->coll->link_alpha/beta
 * where no setting gives them, and comm->hosts.one_stream from the link's
 * rate the model then uses.  COLLIE_OK, or the failure of the measurement.
 */
collie_status collie__select_probe_links(collie_comm *comm);

/*
 * Fails if COLLIE_ALGO forces an algorithm this job cannot run: INVALID_ARG
 * for a host's algorithm across hosts, UNSUPPORTED for one that reads peers'
 * buffers where the kernel refused it.  After the transports opened.
 */
collie_status collie__select_check_forced(collie_comm *comm);

/*
 * The algorithm for op: COLLIE_ALGO's, else the cost model's; logged once at
 * INFO.  The caller puts its id in the call's descriptor.
 */
const struct collie__algo *collie__select(collie_comm *comm, const struct collie__op *op);

/* The same choice, without logging it: for the tools' API (src/api/tools.c). */
const struct collie__algo *collie__select_peek(const collie_comm *comm,
                                               const struct collie__op *op);

struct collie__machine;

/*
 * The process's rates for the cost model (the defaults, or COLLIE_MACHINE's
 * description), placement zero; the error that reading COLLIE_MACHINE met
 * (the rates are then the defaults), else NULL.
 */
const char *collie__select_rates(struct collie__machine *m);

/*
 * comm's placement (ranks, hosts, ranks per host, cores, slot, attach, and
 * the cores its hosts share where all run on one kernel) into m; the rates stay.
 */
void collie__select_place(const collie_comm *comm, struct collie__machine *m);

/* The links' rates comm measured at init (link_probe.c) into m, where it measured them. */
void collie__select_links(const collie_comm *comm, struct collie__machine *m);

/* The cost model's machine for comm: its placement, the process's rates (COLLIE_MACHINE). */
void collie__select_machine(const collie_comm *comm, struct collie__machine *m);

/*
 * The cost model's choice for collective coll over `bytes` (count x element
 * size) on machine m, as collie__select_peek makes it for a communicator
 * that forces nothing: `collie sim` asks this.
 */
const struct collie__algo *collie__select_on(const struct collie__machine *m, int coll,
                                             size_t bytes);

/* Algorithm `id` of collective coll, or NULL where coll has none. */
const struct collie__algo *collie__select_entry(int coll, enum collie__algo_id id);

/* The algorithm `name` of collective coll, or NULL. */
const struct collie__algo *collie__select_named(int coll, const char *name);

/*
 * Whether op is latency-bound by the cost model: its predicted time is less
 * than twice that of the same call on one element.  Deterministic on every
 * rank (the model reads only what all ranks know); fusion packs only such
 * calls, since copying a bandwidth-bound one into a buffer costs more than
 * the call it saves.
 */
int collie__latency_bound(const collie_comm *comm, const struct collie__op *op);

/* Prints every collective with its algorithms, for `collie info`. */
void collie__algo_print(FILE *out);

#endif
