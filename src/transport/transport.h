/*
 * transport.h - the point-to-point interface every transport implements
 * (shared memory now, TCP next).  Algorithms reach peers only through it or
 * through the shared-memory window (shm.h); never through sockets or mmap.
 */
#ifndef COLLIE_TRANSPORT_H
#define COLLIE_TRANSPORT_H

#include "../core/comm.h"

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
};

extern const struct collie__transport collie__shm_transport;

#endif
