/* SPDX-License-Identifier: BSD-3-Clause */
/* door.c - every rank's listener for the survivors of a failure (door.h). */
#include "door.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "sock.h"

collie_status collie__door_listen(collie_comm *comm, struct collie__door_addr *mine)
{
    memset(mine, 0, sizeof *mine);
    if (comm->size < 2)
        return COLLIE_OK;
    struct collie__door *d = calloc(1, sizeof *d);
    if (d)
        d->addr = calloc((size_t)comm->size, sizeof *d->addr);
    if (!d || !d->addr) {
        free(d);
        return collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for %d doors", comm->rank,
                            comm->size);
    }
    d->listen_fd = -1;
    comm->door = d;
    collie_status st = collie__bootstrap_own_addr(comm, mine->host, sizeof mine->host);
    char err[256];
    if (st == COLLIE_OK && collie__sock_listen(mine->host, 0, &d->listen_fd, err, sizeof err) != 0)
        st = collie__fail(comm, COLLIE_ERR_SYSTEM, "rank %d: its door: %s", comm->rank, err);
    if (st == COLLIE_OK && (mine->port = collie__sock_port(d->listen_fd)) < 0)
        st = collie__fail(comm, COLLIE_ERR_SYSTEM, "rank %d: its door: getsockname: %s", comm->rank,
                          strerror(errno));
    return st;
}

collie_status collie__door_learn(collie_comm *comm, const struct collie__door_addr *all,
                                 size_t stride)
{
    struct collie__door *d = comm->door;
    for (int r = 0; d && r < comm->size; r++) {
        memcpy(&d->addr[r], (const char *)all + (size_t)r * stride, sizeof d->addr[r]);
        if (!memchr(d->addr[r].host, 0, sizeof d->addr[r].host) || d->addr[r].port < 1 ||
            d->addr[r].port > 65535)
            return collie__fail(comm, COLLIE_ERR_INTERNAL, "rank %d sent a door that is not one",
                                r);
    }
    return COLLIE_OK;
}

void collie__door_close(collie_comm *comm)
{
    struct collie__door *d = comm->door;
    if (!d)
        return;
    if (d->listen_fd >= 0)
        close(d->listen_fd);
    free(d->addr);
    free(d);
    comm->door = NULL;
}
