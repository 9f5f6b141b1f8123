/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport.h - the interface every transport implements (shared memory
 * within a host, TCP across hosts), and the registry that opens them and
 * gives each peer its transport.
 *
 * A transport is a table of functions, filled with designated initializers.
 * The layers above never name a transport: the message engine (xfer.h)
 * moves and waits through these slots, and a failure reaches the transports
 * through the hook the registry installs in the communicator (on_fail).
 * Algorithms reach peers only through the engine or the shared-memory
 * window (shm.h); never through sockets or mmap.
 */
#ifndef COLLIE_TRANSPORT_H
#define COLLIE_TRANSPORT_H

#include <poll.h>

#include "wire.h"

struct collie__transport {
    const char *name;
    /*
     * Sets up the transport's state for comm.  Collective over the
     * bootstrap: every rank opens every transport, in the registry's order,
     * even one it will not use, so that a failure anywhere fails all at once.
     */
    collie_status (*open)(collie_comm *comm);
    /* Tears it down (peers see this rank leave); safe when open failed or never ran. */
    void (*close)(collie_comm *comm);
    /* Whether this transport reaches global rank peer (after open). */
    int (*reaches)(const collie_comm *comm, int peer);
    /* Tells the peers it reaches that comm failed, so that none waits in vain. */
    void (*abort)(collie_comm *comm, collie_status status, const char *msg);
    /* A failure a peer recorded for this rank to see (e.g. the host's abort record), or OK;
       NULL where peers record none. */
    collie_status (*check)(collie_comm *comm);
    /* How many stripes a message of len bytes to or from peer takes (at most COLLIE_MAX_STREAMS). */
    int (*stripes)(const collie_comm *comm, int peer, size_t len);
    /* Moves what can move of x now, without blocking; counts finished stripes off x->left. */
    collie_status (*progress)(collie_comm *comm, struct collie__xfer *x);
    /*
     * How the engine sleeps until x may move again.  A transport with file
     * descriptors fills the pollfd of stripe k (pollfd != NULL); one without
     * (shared memory) blocks in wait() until x may move: within COLLIE_TIMEOUT
     * (failing with TIMEOUT) when until_ns is 0, else returning COLLIE_OK at
     * until_ns at the latest.  With descriptors, the engine first looks at
     * them and yields the CPU in turn for yield_ns(comm), then sleeps in poll().
     */
    void (*pollfd)(const collie_comm *comm, const struct collie__xfer *x, int k, struct pollfd *p);
    uint64_t (*yield_ns)(const collie_comm *comm);
    collie_status (*wait)(collie_comm *comm, const struct collie__xfer *x, uint64_t until_ns);
};

extern const struct collie__transport collie__shm_transport;
extern const struct collie__transport collie__tcp_transport;

/*
 * Opens every transport in the registry and gives each peer the first one
 * that reaches it (comm->peer_transport); installs the failure hook.
 * Collective over the bootstrap; comm's host table must be known.
 */
collie_status collie__transports_open(collie_comm *comm);

/* Closes every transport; NULL-safe pieces, safe after a failed open. */
void collie__transports_close(collie_comm *comm);

/* The first failure a transport learned from a peer in the background, or OK. */
collie_status collie__transports_check(collie_comm *comm);

/* The transport that carries messages to and from global rank peer. */
static inline const struct collie__transport *collie__transport_of(const collie_comm *comm,
                                                                   int peer)
{
    return comm->peer_transport[peer];
}

/* Every transport of this build, in order of preference; NULL-terminated. */
extern const struct collie__transport *const collie__transports[];

/*
 * Marks the calling thread as a background one (a lane of the asynchronous
 * core, a window's service thread): its waits poll only while
 * *caller_waiting > 0, i.e. while the user's thread is blocked waiting for
 * it; otherwise the user's computation may need the CPU that polling would
 * burn, and the waits sleep at once.
 */
void collie__wait_background(const _Atomic int *caller_waiting);

/*
 * A sched_yield that came back this late ran another thread's slice (a busy
 * thread pool beside the rank), as every further one would: a wait that
 * meets one stops yielding and sleeps (shared memory's and the engine's).
 */
#define COLLIE__YIELD_LOST_NS 100000ull

/* Whether the calling thread's waits may poll before they sleep (collie__wait_background). */
int collie__wait_may_poll(void);

/*
 * How long a wait yields the CPU before it sleeps: COLLIE_YIELD_US, or by
 * default 1 ms, 2 ms where the ranks that compete for the CPUs (a host's, or
 * its kernel's: comm->crowd_ranks) outnumber them.
 */
uint64_t collie__wait_yield_ns(int ranks, int cpus);

#endif
