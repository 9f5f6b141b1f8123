/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * comm.h - the communicator's state (opaque outside the library) and the
 * error discipline every module follows: the function that first decides
 * something failed calls collie__fail(); callers only pass the status up.
 *
 * This is the lowest layer's view of a communicator: core owns the identity,
 * host table, failure record, scratch and counters.  The transports' state
 * (shm, net, the transport of each peer) hangs off it as opaque pointers that
 * only src/transport/ looks into; a failure reaches the transports through
 * the hook they register (on_fail), never by name.
 */
#ifndef COLLIE_COMM_H
#define COLLIE_COMM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"
#include "collie.h"
#include "op.h"

/* Owned by the layers that define them; core only carries the pointers. */
struct collie__bootstrap;
struct collie__shm;
struct collie__net;
struct collie__transport;
struct collie__door;
struct collie__coll_state; /* the collective layer's (coll/state.h) */
struct collie__api_state;  /* the API layer's (api/api.h) */

/*
 * What runs an operation: collectives (on the caller or the collective lane),
 * or send/recv (the point-to-point lane).  Numbered as the message channels
 * of transport/wire.h.
 */
enum collie__lane { COLLIE_LANE_COLL, COLLIE_LANE_P2P, COLLIE_LANES };

/*
 * Called once, when the communicator first fails with a sticky status, so
 * that the transports tell their peers at once (an abort record in shared
 * memory, shut-down sockets).  msg is the formatted detail.
 */
typedef void (*collie__fail_hook)(collie_comm *comm, collie_status status, const char *msg);

/*
 * A communicator and those split from it (and from them) in this process:
 * the first failure in any of them is the cause their ranks report when one
 * of them leaves a healthy relative (a rank that failed on a split and then
 * finalizes the job's communicator tells the job why, not only that it left).
 */
struct collie__family {
    _Atomic int refs;
    pthread_mutex_t lock;
    collie_status status; /* COLLIE_OK until the first failure */
    char cause[512];
};

/* The scratch buffers of collie__scratch(), below. */
enum collie__scratch_id {
    COLLIE_SCRATCH_WORK,
    COLLIE_SCRATCH_TMP,
    COLLIE_SCRATCH_BOUNCE,
    COLLIE_SCRATCH_IDS
};

struct collie_comm {
    int rank, size;
    int local_rank, local_size;
    int nhosts;
    int cpus;             /* CPUs this host's ranks may run on (the union of their affinity
                             masks, from the shm transport's open; before: this process's) */
    int crowd_ranks;      /* the ranks that compete for this rank's CPUs, and those CPUs: this */
    int crowd_cpus;       /* host's, or its kernel's where hosts share one (from the shm
                             transport's open; before: this process alone on its CPUs) */
    int *local_to_global; /* this host's ranks, indexed by local rank (in hosts.ranks) */
    struct {
        int *identity; /* [r] = r: the flat group */
        int *host_of;  /* [r]: host index of rank r (hosts numbered by their lowest rank) */
        int *ranks;    /* every rank, grouped by host: host h's are ranks[start[h] .. start[h+1]) */
        int *start;    /* nhosts + 1 offsets into ranks */
        int max_local; /* most ranks on one host */
        int oversubscribed; /* a host has more ranks than CPUs they may use: alike on all ranks */
        int cores;          /* the fewest CPUs any host's ranks may use: alike on all ranks */
        int shared_cores;   /* the CPUs every host's ranks share where all run on one kernel
                               (emulated hosts, containers of one server); else 0 */
        size_t ring_bytes;  /* a pair's shared-memory ring on the fullest host (max_local):
                               the cost model's trees, alike on all ranks (shm.c's open) */
        uint64_t link_key;  /* hosts 0 and 1 (a hash of their ids; 0 on one host): the link
                               the cost model measures (link_probe.c) */
        int one_stream;     /* a message to another host crosses on one connection, not
                               striped: the links are slower than one fills (decided by
                               coll/link_probe.c, alike on all ranks; used by tcp.c) */
    } hosts;

    struct collie__bootstrap *boot;
    struct collie__shm *shm;
    struct collie__net *net;   /* NULL on one host */
    struct collie__door *door; /* where survivors meet (door.h); NULL for one rank */
    const struct collie__transport **peer_transport; /* indexed by global rank */
    collie__fail_hook on_fail;                       /* set by the transport layer when it opens */

    const char *token;      /* the secret every connection proves: COLLIE_TOKEN, or token_buf */
    char token_buf[72];     /* a collie_unique_id's, or the launcher's store's, in hex */
    const char *launcher;   /* whose variables named the ranks (static text) */
    const char *rendezvous; /* where rank 0's address came from (static text) */
    double timeout_s;
    size_t nt_min;        /* COLLIE_NT_MIN: outputs this large bypass the caches; 0 never */
    size_t p2p_piece;     /* COLLIE_P2P_PIECE: the pipelined steps' piece; 0: whole ranges */
    int stage_stream;     /* COLLIE_STAGE_STREAM: 1 stream the slots, 0 never, -1 far apart */
    uint64_t deadline_ns; /* of the bootstrap exchange in flight (waits in shm have their own) */
    struct collie__op_desc cur; /* the call in flight, its algorithm included */
    uint32_t seq;               /* collectives completed so far */
    uint32_t nbr_seq; /* neighbour operations completed so far: counted apart, since they do
                         not move the ranks of a host in step (the window's turns follow seq) */
    struct collie__coll_state *coll;   /* the collective layer's state: NULL before its init */
    struct collie__api_state *api;     /* the API layer's state (asynchronous core, timeline) */
    const void **scratch_srcs;         /* size pointers (local_size used), for reduction sources */
    void *scratch[COLLIE_SCRATCH_IDS]; /* collie__scratch() */
    size_t scratch_bytes[COLLIE_SCRATCH_IDS];

    /*
     * Shared by the threads that run this communicator's calls (the caller,
     * the lanes of the asynchronous core, an aborting thread): the counters,
     * the sticky status, and last_error under fail_lock.  The counters are
     * kept per lane, each written by one thread at a time (collie__count):
     * no read-modify-write on the latency path.
     */
    struct {
        _Atomic unsigned long long ops, bytes_sent;
    } counts[COLLIE_LANES];       /* collie_get_counters sums them */
    _Atomic collie_status failed; /* sticky status; COLLIE_OK while healthy */
    pthread_mutex_t fail_lock;
    char last_error[512];
    struct collie__family *family; /* shared with the communicators split from this one */
    int *family_rank; /* [r]: rank r in the family's first communicator; NULL: that one */
};

/* Starts the deadline of a bootstrap exchange: now + COLLIE_TIMEOUT. */
static inline void collie__arm_deadline(collie_comm *comm)
{
    comm->deadline_ns = collie__now_ns() + (uint64_t)(comm->timeout_s * 1e9);
}

/*
 * Records a failure decided here: formats the detail into last_error (logged
 * at WARN) and returns status.  Every status but INVALID_ARG and UNSUPPORTED
 * also fails the communicator and, the first time, calls comm->on_fail so
 * that no peer waits for this rank in vain.
 */
collie_status collie__fail(collie_comm *comm, collie_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Adopts a failure first decided by another rank (message already
 * formatted: the cause), and passes it on the first time, as collie__fail
 * does (comm->on_fail: this host's ranks and this rank's peers on other
 * hosts learn the same cause).
 */
collie_status collie__fail_from_peer(collie_comm *comm, collie_status status, const char *msg);

/* Index among this host's ranks of a global rank, or -1 if it lives on another host. */
static inline int collie__local_index(const collie_comm *comm, int global_rank)
{
    for (int i = 0; i < comm->local_size; i++)
        if (comm->local_to_global[i] == global_rank)
            return i;
    return -1;
}

/*
 * Scratch buffers of at least `bytes` for algorithms, grown on demand and
 * freed at finalize; NULL after failing the communicator with NOMEM.  They
 * never alias: COLLIE_SCRATCH_TMP for the point-to-point algorithms'
 * receive blocks, COLLIE_SCRATCH_WORK for the callers that wrap them,
 * COLLIE_SCRATCH_BOUNCE for the cross-memory attach's own (shm_attach.c).
 */
void *collie__scratch(collie_comm *comm, enum collie__scratch_id id, size_t bytes);

/* The lane a call runs on: send and recv on the point-to-point one, the rest on the collective one. */
static inline enum collie__lane collie__lane_of(int coll)
{
    return coll == COLLIE_COLL_SEND || coll == COLLIE_COLL_RECV ? COLLIE_LANE_P2P
                                                                : COLLIE_LANE_COLL;
}

/* Adds n to a counter that one thread at a time writes (a plain load and store). */
static inline void collie__count(_Atomic unsigned long long *c, unsigned long long n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* Algorithms and transports count what they hand to peers (collie_get_counters). */
static inline void collie__count_sent(collie_comm *comm, enum collie__lane lane, size_t bytes)
{
    collie__count(&comm->counts[lane].bytes_sent, bytes);
}

/* One operation of the lane completed. */
static inline void collie__count_op(collie_comm *comm, enum collie__lane lane, unsigned long long n)
{
    collie__count(&comm->counts[lane].ops, n);
}

/*
 * Creates a communicator's core state for `rank` of `size` (timeout, CPUs and
 * tunables from the configuration); NULL when out of memory.
 */
collie_comm *collie__comm_create(int rank, int size);

/*
 * Learns which ranks share a host from every rank's host identity (id_len
 * bytes at ids + r * stride for rank r, as the first exchange at init
 * gathered them): fills hosts, nhosts and the local rank and size.  Warns
 * when the launcher's local rank or size (-1: not given) disagrees.
 */
collie_status collie__comm_find_hosts(collie_comm *comm, const char *ids, size_t stride,
                                      size_t id_len, int launcher_local_rank,
                                      int launcher_local_size, const char *launcher);

/*
 * comm joins parent's family (collie_comm_split's new communicator), leaving
 * its own; its rank r is rank parent_ranks[r] of parent.  0, or -1 without
 * memory (comm then stays in its own family).
 */
int collie__comm_join_family(collie_comm *comm, collie_comm *parent, const int *parent_ranks);

/*
 * Before a healthy comm is torn down: if a relative failed first, comm
 * fails with that cause, so that its ranks waiting for this one learn why
 * it leaves.  Nothing otherwise.
 */
void collie__comm_leave(collie_comm *comm);

/* Frees what core owns; the layers above must have closed their state first. */
void collie__comm_free(collie_comm *comm);

#endif
