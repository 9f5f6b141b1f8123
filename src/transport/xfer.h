/*
 * xfer.h - messages between ranks inside collectives, over any transport:
 * the engine that algorithms working point-to-point (ring, recursive
 * doubling, trees, the cross-host step of hierarchical) are written on.
 *
 * A message has a length both ends agreed on (the algorithm computes it from
 * the call's count), and starts on the wire with a header naming the
 * collective it belongs to.  The receiver checks the header before it writes
 * a byte of the payload: ranks in different collectives fail with
 * COLLIE_ERR_MISMATCH, and a length is never taken from the wire.  Over TCP a
 * large message is striped over the pair's connections, one header per
 * stripe.  Several transfers progress together (a ring step sends and
 * receives at once), driven by the calling thread: no progress thread and no
 * hand-off between threads on the latency path.
 */
#ifndef COLLIE_XFER_H
#define COLLIE_XFER_H

#include <stddef.h>
#include <stdint.h>

#include "../core/comm.h"

#define COLLIE_MAX_STREAMS 16

enum collie__xfer_chan {
    COLLIE_XFER_COLL, /* messages of collectives */
    COLLIE_XFER_USER  /* collie_send / collie_recv */
};

/* What precedes every message (stripe) on the wire. */
struct collie__wire {
    uint32_t magic;
    uint32_t seq;   /* the collective's number; 0 for user messages */
    uint8_t coll, dtype, op, stripe;
    uint8_t algo;   /* the sender's algorithm: ranks must agree on it */
    uint8_t reserved[3];
    int32_t root;
    uint64_t count; /* the call's count */
    uint64_t len;   /* payload bytes that follow */
};

struct collie__xfer_stripe {
    size_t off, len;   /* of the message */
    size_t hdr_done;   /* header bytes moved */
    size_t done;       /* payload bytes moved */
};

struct collie__xfer {
    int peer;  /* global rank */
    int send;  /* 1: to peer; 0: from peer */
    enum collie__xfer_chan chan;
    unsigned char *buf;
    size_t len;
    int nstripes, left; /* stripes in all, and not yet complete */
    const struct collie__transport *t;
    struct collie__wire hdr[COLLIE_MAX_STREAMS]; /* sent, or received */
    struct collie__xfer_stripe st[COLLIE_MAX_STREAMS];
};

/* Prepares a transfer of len bytes of buf to (send) or from peer. */
void collie__xfer_init(collie_comm *comm, struct collie__xfer *x, int peer, int send,
                       const void *buf, size_t len, enum collie__xfer_chan chan);

/*
 * Drives the n transfers to completion.  A wait without progress for
 * COLLIE_TIMEOUT fails with TIMEOUT; a lost peer with PEER_LOST.
 */
collie_status collie__xfer_run(collie_comm *comm, struct collie__xfer *x, int n);

/* One step of most algorithms: send to `to` while receiving from `from`. */
collie_status collie__sendrecv(collie_comm *comm, int to, const void *sbuf, size_t slen, int from,
                               void *rbuf, size_t rlen);
collie_status collie__xsend(collie_comm *comm, int to, const void *buf, size_t len);
collie_status collie__xrecv(collie_comm *comm, int from, void *buf, size_t len);

/*
 * For transports: checks stripe k's header, just received, against what this
 * rank expects; fails the communicator (MISMATCH, naming both calls) if not.
 */
collie_status collie__xfer_check(collie_comm *comm, const struct collie__xfer *x, int k);

/* The next bytes a transport moves for stripe k: header first, then payload. */
static inline int collie__xfer_stripe_done(const struct collie__xfer *x, int k)
{
    return x->st[k].hdr_done == sizeof(struct collie__wire) && x->st[k].done == x->st[k].len;
}

#endif
