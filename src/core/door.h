/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * door.h - every rank's listener for the survivors of a failure.
 *
 * A communicator's links (shared memory, its TCP streams, the rendezvous
 * star at rank 0) may all be broken once a rank is lost, and they are no
 * way to find out who is left.  So each rank of a communicator of two or
 * more opens one more listening socket at init, the door, and every rank
 * learns every door's address in the rendezvous's first exchange.  Nobody
 * connects to a door until the survivors shrink the communicator
 * (collie_comm_shrink): then they meet there.  A door that refuses a
 * connection proves its rank's process is gone (the kernel closed it),
 * which is how the survivors tell a dead rank from a slow one without
 * waiting out COLLIE_TIMEOUT.
 */
#ifndef COLLIE_DOOR_H
#define COLLIE_DOOR_H

#include "comm.h"

struct collie__door_addr {
    char host[46]; /* numeric IPv4 or IPv6 text */
    int32_t port;
};

struct collie__door {
    int listen_fd;                  /* this rank's door */
    struct collie__door_addr *addr; /* [r]: rank r's door, for every rank */
};

/*
 * Opens this rank's door on the address peers reach it at, and says where
 * in *mine (a one-rank communicator opens none: *mine stays zero).
 * COLLIE_OK, or the failure recorded on comm.
 */
collie_status collie__door_listen(collie_comm *comm, struct collie__door_addr *mine);

/*
 * Takes every rank's door from the table of the first exchange at init
 * (rank r's at (const char *)all + r * stride), checking each is an
 * address.  COLLIE_OK, or the failure recorded on comm.
 */
collie_status collie__door_learn(collie_comm *comm, const struct collie__door_addr *all,
                                 size_t stride);

/* Closes the door and frees the table; NULL-safe, and a door never opened is nothing. */
void collie__door_close(collie_comm *comm);

#endif
