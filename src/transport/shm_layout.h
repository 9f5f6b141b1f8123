/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm_layout.h - the shared-memory segment of one host, private to
 * src/transport/shm*.c.
 *
 * One memfd per host, created by the host's lowest rank and opened by the
 * others through /proc/<pid>/fd/<n>: it never has a name in /dev/shm, so no
 * exit, crash or SIGKILL can leave a file behind.
 *
 *   header | ctl[n] | chan[2][n*n] | slot[n][2] | ring[2][n*n]
 *
 * Two channels of rings: one for the user's send/recv, one for the messages
 * of collectives (a send the user has not received yet must never be read by
 * a collective, nor the reverse).
 *
 * Every word has exactly one writer, and words with different writers never
 * share a 128-byte block (two cache lines: the adjacent-line prefetcher pulls
 * lines in pairs).
 */
#ifndef COLLIE_SHM_LAYOUT_H
#define COLLIE_SHM_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../core/comm.h"
#include "../reduce/copy.h"
#include "wire.h"

#define COLLIE_SHM_MAGIC 0x636f6c6c69650008ull /* "collie" + layout version */
#define COLLIE_SHM_BLOCK 128

/* One set of rings per message channel of wire.h (collectives, user send/recv). */
#define COLLIE_SHM_CHANNELS COLLIE_XFER_CHANNELS

/*
 * A counter with one writer that others wait on: value only grows (mod 2^32);
 * waiters is marked by a rank about to sleep and cleared by the post that
 * wakes it, so that the writer makes a futex_wake syscall only when somebody
 * sleeps, once.  tag[v & 1] and payload[v & 1] are what the writer says with
 * value v, in the same cache line (free to read once v is seen): a rank's
 * step flag tells the number of the collective in which it posted each step,
 * and carries a small call's data (shm.h, collie__win_carry), so that a
 * peer gets the sync and the data in one line's trip.
 */
#define COLLIE_SHM_CARRY 24
struct collie__flag {
    _Alignas(COLLIE_SHM_BLOCK) _Atomic uint32_t value;
    _Atomic uint32_t tag[2];
    _Alignas(8) unsigned char payload[2][COLLIE_SHM_CARRY];
    _Alignas(COLLIE_SHM_BLOCK) _Atomic uint32_t waiters;
};
_Static_assert(offsetof(struct collie__flag, payload) + 2 * COLLIE_SHM_CARRY <= 64,
               "a flag's value, tags and payloads share one cache line");

enum collie__rank_state { COLLIE_RANK_ABSENT, COLLIE_RANK_ALIVE, COLLIE_RANK_LEFT };

struct collie__rank_ctl {
    struct collie__flag step; /* syncs posted by this rank */
    _Alignas(COLLIE_SHM_BLOCK) _Atomic uint32_t state;
    int32_t pid;
    _Atomic int32_t cpu; /* where this rank last waited (shm_wait.c); written when it changes */
    /*
     * desc[seq & 1]: the collective in flight, and the one before it.  Until
     * the first, they hold the numbers -2 and -1: no call.
     */
    struct collie__op_desc desc[2];
};

/* The ring of an ordered pair: head written by the sender, tail by the receiver. */
struct collie__chan {
    struct collie__flag head;
    struct collie__flag tail;
};

enum collie__abort_state { COLLIE_ABORT_NONE, COLLIE_ABORT_WRITING, COLLIE_ABORT_SET };

struct collie__shm_header {
    uint64_t magic;
    uint32_t nranks;
    uint32_t ring_head; /* the leader's COLLIE_RING_HEAD, resolved: every rank frames alike */
    uint64_t slot_bytes;
    uint64_t ring_bytes;
    uint64_t total_bytes;
    /* The first failure on the host, for every rank to report. */
    _Alignas(COLLIE_SHM_BLOCK) _Atomic uint32_t abort_state;
    uint32_t abort_status;
    int32_t abort_rank;
    char abort_msg[400];
};

/* Offsets of each region, from the header's start. */
struct collie__shm_map {
    size_t ctl, chan, slot, ring, total;
    size_t slot_bytes, ring_bytes;
};

/*
 * A segment as this rank mapped it, to keep for a later communicator of the
 * same ranks once its own is finalized (shm_keep.c): what tells it apart
 * on every rank, and what this rank measured of single copies when it
 * opened (the same processes would measure it again).
 */
struct collie__shm_kept {
    void *base;
    struct collie__shm_map map;
    uint64_t ino;     /* the memfd's inode: names the segment alike on every rank */
    uint64_t ranks;   /* a hash of the host's pids in local-rank order */
    int32_t probe_ok; /* 2: this rank read each local peer's memory (shm.c's shm_ready) */
    uint32_t call_ns, block_ns;
};

/* Kept segments a process holds, at most (COLLIE_SHM_KEEP is capped here). */
#define COLLIE__SHM_KEEP_MAX 4

/*
 * Moves every kept segment planned as *map (at most COLLIE__SHM_KEEP_MAX)
 * into out[], for one opening communicator to choose from; how many.  The
 * caller uses one or gives each back (collie__shm_keep_return).
 */
int collie__shm_keep_take(const struct collie__shm_map *map, struct collie__shm_kept *out);

/* Keeps a segment taken and not used; unmaps it if no communicator is open or none is kept. */
void collie__shm_keep_return(const struct collie__shm_kept *k);

/* A communicator has opened its segment (kept ones live while one is open). */
void collie__shm_keep_opened(void);

/*
 * A communicator has closed: its segment k is kept (NULL: the caller unmapped
 * it, a failure may have left it inconsistent); after the process's last,
 * every kept segment is unmapped.
 */
void collie__shm_keep_closed(const struct collie__shm_kept *k);

/* This rank's view of the segment. */
struct collie__shm {
    struct collie__shm_header *hdr;
    struct collie__rank_ctl *ctl;
    struct collie__chan *chan;
    unsigned char *slot;
    unsigned char *ring;
    struct collie__shm_map map;
    struct collie__shm_kept kept; /* the segment, as it will be kept at close */
    int n, me;                    /* local size and local rank */
    uint32_t step;                /* syncs posted by this rank */
    uint32_t round;               /* staging rounds started; parity picks the buffer */
    size_t shift[2];       /* where in each parity's slots its round's bytes lie (win_round) */
    unsigned swap[2];      /* 1: each parity's slots change hands this round (win_exchange) */
    int check_desc;        /* the next sync compares peers' descriptors */
    uint32_t *sent, *rcvd; /* [channel * n + peer]: bytes pushed to / taken from each ring */
    /*
     * The same, as this rank last read the other end's counter: the tail of
     * each ring it sends on, the head of each it receives from (shm_xfer.c
     * reads the other's line only when these say there is no room, or no
     * data).
     */
    uint32_t *tail_seen, *head_seen;
    /* Ring bytes (header and payload) of the last message sent on / taken from each (shm_xfer.c). */
    uint32_t *sent_last, *rcvd_last;
    uint64_t spin_ns, yield_ns;
    _Atomic int cpu;         /* the CPU this rank last published in its ctl (both lanes may wait) */
    int may_move;            /* ranks <= CPUs: leave a CPU shared with a peer (shm_wait.c) */
    int crowded;             /* more ranks than CPUs: small rounds alone move (win_round) */
    int ring_head;           /* small messages keep to each ring's head (shm_xfer.c) */
    int attach;              /* every rank of the communicator reads its local peers' memory */
    uint32_t attach_call_ns; /* one such read's system call (collie__attach_call_s) */
    uint32_t attach_block_ns;       /* one such read of the probe's block (collie__attach_beta) */
    struct collie__peer_mem *peers; /* their collie_mem segments (shm_mem.c); NULL: none */
    _Atomic unsigned long long attach_bytes_kernel,
        attach_bytes_mapped; /* single copies, by path */
    /*
     * How this rank's waits went: found the peer sharing this CPU (and so
     * yielded at once); ended while polling, while yielding, after sleeping;
     * went to sleep early because a yield lost the CPU for a slice.  The
     * lanes of the asynchronous core wait from their own threads: relaxed
     * atomics (counts, not synchronisation).
     */
    _Atomic unsigned long long waits_shared_cpu, waits_polled, waits_yielded, waits_slept;
    _Atomic unsigned long long waits_yield_lost, moves;
};

static inline size_t collie__shm_pair(const struct collie__shm *s, int ch, int from, int to)
{
    return ((size_t)ch * (size_t)s->n + (size_t)from) * (size_t)s->n + (size_t)to;
}

static inline struct collie__chan *collie__shm_chan(struct collie__shm *s, int ch, int from, int to)
{
    return &s->chan[collie__shm_pair(s, ch, from, to)];
}

static inline unsigned char *collie__shm_ring(struct collie__shm *s, int ch, int from, int to)
{
    return s->ring + collie__shm_pair(s, ch, from, to) * s->map.ring_bytes;
}

/* Copies n bytes into / out of a ring of cap bytes at a free-running position. */
static inline void collie__ring_put(unsigned char *ring, uint32_t cap, uint32_t head,
                                    const unsigned char *src, size_t n)
{
    size_t at = head % cap, first = n < cap - at ? n : cap - at;
    collie__copy(ring + at, src, first);
    collie__copy(ring, src + first, n - first);
}

static inline void collie__ring_get(const unsigned char *ring, uint32_t cap, uint32_t tail,
                                    unsigned char *dst, size_t n)
{
    size_t at = tail % cap, first = n < cap - at ? n : cap - at;
    collie__copy(dst, ring + at, first);
    collie__copy(dst + first, ring, n - first);
}

/* Publishes a new value and wakes sleepers, if any. */
void collie__flag_post(struct collie__flag *f, uint32_t value);

/* Wakes every sleeper on the flag (used when aborting). */
void collie__flag_wake_all(struct collie__flag *f);

/*
 * Waits until f->value has reached target (wrap-safe), polling, then
 * yielding, then sleeping.  Fails with PEER_LOST if local rank `peer` has
 * left or died, or the host's abort status if any rank aborted; with
 * until_ns == 0, with TIMEOUT after COLLIE_TIMEOUT, else it returns COLLIE_OK
 * at until_ns (the caller looks again).  `what` and desc (the call waiting)
 * describe the wait in error messages.
 */
collie_status collie__flag_wait(collie_comm *comm, struct collie__flag *f, uint32_t target,
                                int peer, const char *what, const struct collie__op_desc *desc,
                                uint64_t until_ns);

/*
 * Returns the failure another rank on the host recorded (adopting it as this
 * communicator's), or COLLIE_OK.  One load when healthy; OK before open.
 */
collie_status collie__shm_check_abort(collie_comm *comm);

/*
 * For a wait on local rank peer in the call desc: MISMATCH if the peer is in
 * the collective of desc's number and called something else (shm.c).  Only
 * for the collective in flight (desc is &comm->cur, a numbered call).  A
 * sleeping wait asks it every time it looks at the peer: a rank whose call
 * differs is found where nothing else would reach it (a tree's root waiting
 * for children that sent elsewhere, a rank in a sync while its peers are in
 * a tree call).
 */
collie_status collie__shm_judge(collie_comm *comm, int peer, const struct collie__op_desc *desc);

/* The message slots of the transport's table (shm_xfer.c); the table is in shm.c. */
int collie__shm_xfer_stripes(const collie_comm *comm, int peer, size_t len);
collie_status collie__shm_xfer_progress(collie_comm *comm, struct collie__xfer *x);
collie_status collie__shm_xfer_wait(collie_comm *comm, const struct collie__xfer *x,
                                    uint64_t until_ns);

#endif
