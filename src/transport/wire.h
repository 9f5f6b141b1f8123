/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.h - what travels between ranks in a message, and what a transport
 * needs to move one: the wire header, the transfer with its stripes, and the
 * one check of a received header.  Transports and the message engine
 * (xfer.h) both build on this file; it calls neither.
 *
 * A message has a length both ends agreed on (the algorithm computes it from
 * the call's count, or the user gave it), and starts with a header naming
 * the call it belongs to.  The receiver checks the header before it writes a
 * byte of the payload: ranks in different calls fail with
 * COLLIE_ERR_MISMATCH, and a length is never taken from the wire.  Over TCP
 * a large message is striped over the pair's connections, one header per
 * stripe.
 */
#ifndef COLLIE_WIRE_H
#define COLLIE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/comm.h"

#define COLLIE_MAX_STREAMS 16

/* Which stream of messages between a pair a transfer belongs to. */
enum collie__xfer_chan {
    COLLIE_XFER_COLL, /* messages of collectives */
    COLLIE_XFER_USER, /* collie_send / collie_recv: never read by a collective, nor the reverse */
    COLLIE_XFER_CHANNELS
};

_Static_assert((int)COLLIE_XFER_COLL == (int)COLLIE_LANE_COLL &&
                   (int)COLLIE_XFER_USER == (int)COLLIE_LANE_P2P,
               "a message's channel is the lane that counts it");

/*
 * The magic of a failing rank's last message to a peer on another host: its
 * status in coll, and len bytes of text, the cause (tcp.c).
 */
#define COLLIE_WIRE_CAUSE_MAGIC 0x434c4341u /* "CLCA" */

/* What precedes every message (stripe); the same bytes on every transport. */
struct collie__wire {
    uint32_t magic;
    uint32_t seq; /* the collective's number; 0 for user messages */
    uint8_t coll, dtype, op, stripe;
    uint8_t algo; /* enum collie__algo_id of the sender: ranks must agree on it */
    uint8_t pad[3];
    int32_t root;
    uint32_t pad2;
    uint64_t count; /* the call's count */
    uint64_t len;   /* payload bytes that follow */
};
_Static_assert(sizeof(struct collie__wire) == 40, "the wire header is shared between builds");

struct collie__xfer_stripe {
    size_t off, len; /* of the message */
    size_t hdr_done; /* header bytes moved */
    size_t done;     /* payload bytes moved */
    size_t skip;     /* shared memory: ring bytes still to pass before the header (shm_xfer.c) */
    int placed;      /* shared memory: skip is set */
};

/* One message to or from one peer, in flight. */
struct collie__xfer {
    int peer; /* global rank */
    int send; /* 1: to peer; 0: from peer */
    enum collie__xfer_chan chan;
    unsigned char *buf;
    size_t len;
    int nstripes, left; /* stripes in all, and not yet complete */
    const struct collie__transport *t;
    const struct collie__op_desc *desc; /* the call it belongs to (headers, checks, messages) */
    struct collie__wire hdr[COLLIE_MAX_STREAMS]; /* sent, or received */
    struct collie__xfer_stripe st[COLLIE_MAX_STREAMS];
};

/* Writes the header of stripe k (off, len of the message) of x's call. */
void collie__wire_fill(struct collie__xfer *x, int k);

/*
 * Checks stripe k's header, just received, against x's call;
 * fails the communicator (MISMATCH, naming both calls) if it is not the one.
 */
collie_status collie__wire_check(collie_comm *comm, const struct collie__xfer *x, int k);

/*
 * Fails with MISMATCH: this rank's call (mine) is not global rank peer's
 * (theirs).  The one message for every place that compares two ranks' calls.
 */
collie_status collie__wire_mismatch(collie_comm *comm, int peer, const struct collie__op_desc *mine,
                                    const struct collie__op_desc *theirs);

/* Whether stripe k has moved its header and all its payload. */
static inline int collie__xfer_stripe_done(const struct collie__xfer *x, int k)
{
    return x->st[k].hdr_done == sizeof(struct collie__wire) && x->st[k].done == x->st[k].len;
}

#endif
