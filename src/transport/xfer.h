/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer.h - the message engine: the one path for messages between ranks over
 * any transport, for the algorithms that work point-to-point (ring,
 * recursive doubling, trees, the cross-host step of hierarchical) and for
 * the user's collie_send / collie_recv alike.
 *
 * Several transfers progress together (a ring step sends and receives at
 * once), driven by the thread that runs the call: the caller's for a
 * blocking call, a lane thread of the asynchronous core for a request.  The engine names no transport: it
 * moves and waits through the slots of transport.h.
 */
#ifndef COLLIE_XFER_H
#define COLLIE_XFER_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/*
 * Prepares a transfer of len bytes of buf to (send) or from peer, for the
 * call desc (which must outlive the transfer).
 */
void collie__xfer_init(collie_comm *comm, struct collie__xfer *x,
                       const struct collie__op_desc *desc, int peer, int send, const void *buf,
                       size_t len, enum collie__xfer_chan chan);

/*
 * Drives the n transfers to completion.  A wait without progress for
 * COLLIE_TIMEOUT fails with TIMEOUT; a lost peer with PEER_LOST.
 */
collie_status collie__xfer_run(collie_comm *comm, struct collie__xfer *x, int n);

/*
 * The same for transfers to or from several peers that may each be held up
 * by others (a neighbour step, a window's deposits): a wait on shared
 * memory sleeps on one transfer, so with several pending it looks again
 * every COLLIE_XFER_RELOOK_NS instead of sleeping on one that cannot move
 * while another could (across hosts, a cycle of such waits deadlocks).
 */
#define COLLIE_XFER_RELOOK_NS 100000ull
collie_status collie__xfer_run_all(collie_comm *comm, struct collie__xfer *x, int n);

/*
 * A driver's deadline, for a pass in which nothing moved (one that moved
 * sets *since = 0): starts the no-progress clock, or says (1) that
 * COLLIE_TIMEOUT has run out on it.  The clock is read only when stalled.
 */
static inline int collie__xfer_timed_out(const collie_comm *comm, uint64_t *since)
{
    uint64_t now = collie__now_ns();
    if (!*since) {
        *since = now;
        return 0;
    }
    return now - *since >= (uint64_t)(comm->timeout_s * 1e9);
}

/*
 * Fails comm with TIMEOUT for a driver whose deadline ran out on the n
 * transfers, naming the first pending one: its peer, bytes and call.
 */
collie_status collie__xfer_stalled(collie_comm *comm, const struct collie__xfer *x, int n);

/* One step of most algorithms: send to `to` while receiving from `from`. */
collie_status collie__xfer_sendrecv(collie_comm *comm, int to, const void *sbuf, size_t slen,
                                    int from, void *rbuf, size_t rlen);

/* One message of a collective to, or from, a peer. */
collie_status collie__xfer_send(collie_comm *comm, int to, const void *buf, size_t len);
collie_status collie__xfer_recv(collie_comm *comm, int from, void *buf, size_t len);

/* One user message (collie_send / collie_recv); desc gives its count and dtype. */
collie_status collie__xfer_user(collie_comm *comm, const struct collie__op_desc *desc, int peer,
                                int send, void *buf, size_t len);

/*
 * For a driver that keeps a changing set of transfers going (the
 * point-to-point lane of the asynchronous core): moves what can move of the
 * n transfers without blocking (*moved: whether any byte moved), and sleeps
 * until one of the pending ones may move or until_ns (> 0) passes.  Neither
 * fails on time: the caller owns the deadline.
 */
collie_status collie__xfer_poll(collie_comm *comm, struct collie__xfer *x, int n, int *moved);
collie_status collie__xfer_sleep(collie_comm *comm, struct collie__xfer *x, int n,
                                 uint64_t until_ns);

#endif
