/*
 * xfer.h - the message engine: the one path for messages between ranks over
 * any transport, for the algorithms that work point-to-point (ring,
 * recursive doubling, trees, the cross-host step of hierarchical) and for
 * the user's collie_send / collie_recv alike.
 *
 * Several transfers progress together (a ring step sends and receives at
 * once), driven by the calling thread: no progress thread and no hand-off
 * between threads on the latency path.  The engine names no transport: it
 * moves and waits through the slots of transport.h.
 */
#ifndef COLLIE_XFER_H
#define COLLIE_XFER_H

#include <stddef.h>

#include "wire.h"

/* Prepares a transfer of len bytes of buf to (send) or from peer, for the call in flight. */
void collie__xfer_init(collie_comm *comm, struct collie__xfer *x, int peer, int send,
                       const void *buf, size_t len, enum collie__xfer_chan chan);

/*
 * Drives the n transfers to completion.  A wait without progress for
 * COLLIE_TIMEOUT fails with TIMEOUT; a lost peer with PEER_LOST.
 */
collie_status collie__xfer_run(collie_comm *comm, struct collie__xfer *x, int n);

/* One step of most algorithms: send to `to` while receiving from `from`. */
collie_status collie__xfer_sendrecv(collie_comm *comm, int to, const void *sbuf, size_t slen,
                                    int from, void *rbuf, size_t rlen);

/* One message of a collective to, or from, a peer. */
collie_status collie__xfer_send(collie_comm *comm, int to, const void *buf, size_t len);
collie_status collie__xfer_recv(collie_comm *comm, int from, void *buf, size_t len);

/* One user message (collie_send / collie_recv): the call in flight gives count and dtype. */
collie_status collie__xfer_user(collie_comm *comm, int peer, int send, void *buf, size_t len);

#endif
