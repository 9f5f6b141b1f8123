/*
 * transport.h - the point-to-point interface every transport implements
 * (shared memory within a host, TCP across hosts).  Algorithms reach peers
 * only through it, through the message engine built on it (xfer.h), or
 * through the shared-memory window (shm.h); never through sockets or mmap.
 */
#ifndef COLLIE_TRANSPORT_H
#define COLLIE_TRANSPORT_H

#include <poll.h>

#include "../core/comm.h"

struct collie__xfer;

struct collie__transport {
    const char *name;
    /* Sends desc->count elements of buf to global rank peer; blocks until buffered. */
    collie_status (*send)(collie_comm *comm, int peer, const void *buf,
                          const struct collie__op_desc *desc);
    /*
     * Receives one message from peer into buf; the sender's count and dtype
     * must equal desc's (COLLIE_ERR_MISMATCH otherwise, and buf is untouched).
     */
    collie_status (*recv)(collie_comm *comm, int peer, void *buf,
                          const struct collie__op_desc *desc);
    /* How many stripes a message of len bytes to or from peer takes (xfer.h). */
    int (*stripes)(const collie_comm *comm, int peer, size_t len);
    /* Moves what can move of x now, without blocking; counts finished stripes off x->left. */
    collie_status (*progress)(collie_comm *comm, struct collie__xfer *x);
};

extern const struct collie__transport collie__shm_transport;
extern const struct collie__transport collie__tcp_transport;

/* Blocks until x (a shared-memory transfer) may move again, within COLLIE_TIMEOUT. */
collie_status collie__shm_xfer_wait(collie_comm *comm, const struct collie__xfer *x);

/* The socket and events that stripe k of x (a TCP transfer) waits for. */
void collie__tcp_pollfd(const collie_comm *comm, const struct collie__xfer *x, int k,
                        struct pollfd *p);

#endif
