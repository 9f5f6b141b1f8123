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

struct collie__machine;

typedef collie_status (*collie__algo_fn)(collie_comm *comm, const struct collie__op *op);

/*
 * The predicted seconds of one call of `bytes` (count x element size, as
 * the API takes it: one block for allgather, reduce_scatter and alltoall;
 * the neighbour operations send `bytes` to each of `degree` peers) on
 * machine m (cost.h); HUGE_VAL where the algorithm cannot run there.
 */
typedef double (*collie__cost_fn)(const struct collie__machine *m, double bytes, int degree);

/*
 * Where an algorithm works: through one host's shared-memory window (HOST),
 * or on any placement of ranks (ANY).  On one host the cost model chooses
 * among the HOST algorithms (among the ANY ones for a collective that has no
 * HOST algorithm), across hosts among the ANY ones; COLLIE_ALGO may force an
 * ANY algorithm on one host too (the tests do).
 */
enum collie__algo_scope { COLLIE_SCOPE_HOST, COLLIE_SCOPE_ANY };

/*
 * An ANY algorithm the model also offers on one host, where its cost says.
 * A message tree does (broadcast_tree.c says why).
 */
#define COLLIE__ALGO_ON_HOST 1u
/*
 * Reads peers' buffers (collie__attach_ok): offered only where the kernel
 * allowed it between every local pair, and refused by
 * collie__select_check_forced where COLLIE_ALGO forces it and it did not.
 */
#define COLLIE__ALGO_ATTACH 2u
/*
 * Not compared by cost: run where the model's choice is a window algorithm
 * that direct would beat were the ranks' CPUs to share no cache (select.c's
 * placed(); adaptive.c finds in the call which placement it runs in).
 */
#define COLLIE__ALGO_PLACEMENT 4u
/* Across hosts, run only where COLLIE_ALGO names it: another of its collective beat it there. */
#define COLLIE__ALGO_FORCED_ACROSS 8u
/*
 * Writes its staging slots with collie__stage(): where more than 2 ranks
 * share a host whose CPUs share no cache, adaptive runs it streaming them
 * (select.c's placed() offers adaptive for that).
 */
#define COLLIE__ALGO_STAGES 16u

/*
 * One algorithm of one collective, defined in the algorithm's own file and
 * listed by one line in registry.c: the selector, the cost model,
 * `collie info`, `collie sim` and the descriptors' algorithm numbers read
 * nothing else.  docs/DESIGN.md walks through adding one.
 */
struct collie__algo {
    const char *name; /* COLLIE_ALGO's and `collie info`'s; one name may serve several
                         collectives (allreduce:ring, reduce:ring) */
    uint8_t wire;     /* the name's number in every call's descriptor (core/op.h), which ranks
                         compare: part of the protocol between builds, never reused or renumbered;
                         1 .. COLLIE__ALGO_WIRE_LIMIT - 1 */
    enum collie__coll coll;
    enum collie__algo_scope scope;
    unsigned flags; /* COLLIE__ALGO_*: where else the model offers it, what it needs */
    collie__algo_fn run;
    collie__cost_fn cost;
    /* Its time in a call that starts with every rank synced, as adaptive runs it; NULL: cost's. */
    collie__cost_fn synced_cost;
};

/* The registry (registry.c): every algorithm, in `collie info`'s order. */
extern const struct collie__algo *const collie__algos[];
extern const int collie__algo_count;

/*
 * Checks a list of n descriptors as the registry must be: each has a name,
 * run and cost; every number names one name and every name has one number,
 * in 1 .. COLLIE__ALGO_WIRE_LIMIT - 1; no collective lists a name twice.
 * 0, or -1 with what is wrong in err.
 */
int collie__algo_check(const struct collie__algo *const *list, int n, char *err, size_t errlen);

/*
 * The registry's check, made once: NULL, or what is wrong (the index by
 * number is then empty).  collie__select_init refuses to start on a wrong one.
 */
const char *collie__algo_registry_check(void);

/* Algorithm number `wire` of collective coll, or NULL where coll has none. */
const struct collie__algo *collie__algo_of_wire(int coll, int wire);

/* The algorithm named by the first len bytes of name for collective coll, or NULL. */
const struct collie__algo *collie__algo_find(int coll, const char *name, size_t len);

/* The name of algorithm number `wire`, or NULL: core's messages name numbers by it. */
const char *collie__algo_wire_name(int wire);

/* Copies into the user's output: streaming past the caches when op->stream_out says so. */
static inline void collie__copy_out(const struct collie__op *op, void *dst, const void *src,
                                    size_t n)
{
    if (op->stream_out)
        collie__copy_stream(dst, src, n);
    else
        collie__copy(dst, src, n);
}

/*
 * Copies into this rank's staging slot, visible to the peers after the next
 * collie__win_sync(): with non-temporal stores where op->stream_stage says
 * (COLLIE_STAGE_STREAM; adaptive.c sets it where the CPUs share no cache).
 * There a line fresh in the writer's cache crossed to each reader at about
 * 2.3 GB/s, and from memory it comes at memory's rate: measured at 4 ranks
 * on 2 cores far apart, a staged allgather of 16 MiB took 6.0-6.3 ms
 * through the cache and 2.1 streamed, an alltoall 9.4-10.0 against 4.2-4.3.
 * Near they are level or streaming loses (alltoall 16 MiB: 4.1-4.2 ms
 * through the cache, 5.2-5.6 streamed), so the choice follows the placement.
 */
static inline void collie__stage(const struct collie__op *op, void *slot, const void *src, size_t n)
{
    if (op->stream_stage) {
        collie__copy_stream(slot, src, n);
        collie__stream_fence();
    } else {
        collie__copy(slot, src, n);
    }
}

/*
 * The other ranks of the host that receive what this rank passes on in a
 * collective rooted at root (a global rank; -1: every rank receives):
 * collie_get_counters counts each byte once per rank that receives it.
 */
static inline size_t collie__other_receivers(const collie_comm *comm, int root)
{
    return root < 0 ? (size_t)comm->local_size - 1 : root == comm->rank ? 0 : 1;
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

/*
 * Direct (direct.c): allreduce and reduce in one copy, reading and writing
 * peers' buffers (shm.h's attach; collie__attach_ok), a piece of COLLIE__DIRECT_PIECE_SLOTS slots / n at a
 * time: larger pieces than a round's take fewer system calls, measured
 * 2-17% faster from 1 MiB up at 2 ranks.
 */
#define COLLIE__DIRECT_PIECE_SLOTS 4
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
 * Adaptive (adaptive.c): a window algorithm (twoshot, staged; an alltoall's
 * pairwise exchange or an allreduce's oneshot where the model prices it
 * below those) or
 * its single copy (direct), chosen in the call by local rank 0
 * (adaptive.c): it tells from how fast the ranks' CPUs hand each other a
 * cache line whether the host placed them near (sharing a cache) or far (a
 * sync slower than the machine's host_far_sync_us per peer, by a band:
 * collie__adaptive_far()), and runs the
 * one of the two it timed faster in that placement at this collective and
 * size (arms.c); far apart, a copy (broadcast, allgather, alltoall) runs
 * direct untimed.  Every rank runs its verdict, the algorithm included.
 */
#define COLLIE__ADAPTIVE_PROBES 8
/* How long local rank 0 trusts a probe: calls within it ask in one sync, or are granted. */
#define COLLIE__ADAPTIVE_PROBE_NS 1000000u
/*
 * Whether a probe whose fastest sync took sync_s seconds finds the CPUs far
 * apart, `limit` the machine's threshold: the first probe (probed 0) by the
 * threshold, later ones only where the sync lies outside a band about it
 * (1.25x either way); inside it the last verdict (was_far) stands.
 */
int collie__adaptive_far(int probed, int was_far, double sync_s, double limit);
/* coll's adaptive descriptor, or NULL where coll has none. */
const struct collie__algo *collie__adaptive_of(enum collie__coll coll);
/*
 * The window algorithm adaptive stands for among coll's: twoshot, a
 * reduce's oneshot, the staged ones; NULL where coll has no adaptive.
 */
const struct collie__algo *collie__adaptive_near(enum collie__coll coll);
/* Its single copy, `direct`; NULL where coll has no adaptive. */
const struct collie__algo *collie__adaptive_direct(enum collie__coll coll);
/*
 * The window algorithm it runs for a call of `bytes` where the CPUs share a
 * cache: its near one, or another where that costs less on m: for an
 * alltoall the pairwise exchange through the pairs' rings (with 3 or 4
 * ranks on cores of their own; at 2, staged's copies led it 1.8-2.7x at
 * 16-256 KiB; where the CPUs share no cache it fell 1.8-2.5x behind
 * direct, which adaptive hedges), for an allreduce oneshot (at 2 ranks up
 * to about 48 KiB).
 */
const struct collie__algo *collie__adaptive_window(const struct collie__machine *m,
                                                   enum collie__coll coll, size_t bytes);
/*
 * The predicted seconds of that window algorithm as adaptive runs it: after
 * its verdict's sync, every rank synced (a descriptor's synced_cost).
 */
double collie__adaptive_window_cost(const struct collie__machine *m, enum collie__coll coll,
                                    size_t bytes);

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

/* One step of decentralized averaging, or gathering, over op->nbr (neighbor_allreduce.c). */
collie_status collie__neighbor_allreduce(collie_comm *comm, const struct collie__op *op);

/* Across hosts: shared memory within each host, TCP between them (hierarchical.c). */
#define COLLIE__HIER_RD_MAX_BYTES (64u << 10) /* cross-host slices below this: recursive doubling */

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
 * INFO.  The caller puts its number (wire) in the call's descriptor.
 */
const struct collie__algo *collie__select(collie_comm *comm, const struct collie__op *op);

/* The same choice, without logging it: for the tools' API (src/api/tools.c). */
const struct collie__algo *collie__select_peek(const collie_comm *comm,
                                               const struct collie__op *op);

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

/*
 * The rates comm measured at init into m, where it measured them: the links'
 * (link_probe.c) and a single copy's system call (shm.c).
 */
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
