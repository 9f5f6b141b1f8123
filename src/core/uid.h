/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uid.h - what a collie_unique_id holds (NCCL's unique-id pattern): where
 * the new communicator's rank 0 listens, and a fresh secret that every
 * connection of that communicator proves it knows.  Drawing one opens the
 * listener at once (so ranks that join before rank 0 calls
 * collie_init_rank wait in its backlog, and the port cannot be taken in
 * between); rank 0 adopts it when it joins, which must be in this process.
 */
#ifndef COLLIE_UID_H
#define COLLIE_UID_H

#include <stddef.h>
#include <stdint.h>

#include "collie.h"

#define COLLIE_UID_TOKEN_BYTES 32

struct collie__uid {
    uint32_t magic;
    uint16_t port;
    uint8_t version, pad;
    char host[64]; /* numeric address */
    unsigned char token[COLLIE_UID_TOKEN_BYTES];
};
_Static_assert(sizeof(struct collie__uid) <= sizeof(collie_unique_id),
               "a collie__uid travels inside a collie_unique_id");

/*
 * Draws an id whose rank 0 listens on host (NULL: COLLIE_SOCKET_IFNAME's
 * address, else the first interface that is up and not loopback, else
 * 127.0.0.1).  Returns 0, or -1 with err saying why.
 */
int collie__uid_draw(struct collie__uid *u, const char *host, char *err, size_t errlen);

/* Whether u is an id this version drew (not garbage, not another version's). */
int collie__uid_valid(const struct collie__uid *u);

/*
 * Rank 0 joining with u: the listener drawn with u in this process (the
 * caller owns it now), or -1 (drawn in another process).  Returns -2 if
 * this process already used u for a communicator (a stale id).
 */
int collie__uid_take_listener(const struct collie__uid *u);

/* u's secret as the text key of auth.h (2 * COLLIE_UID_TOKEN_BYTES hex digits). */
void collie__uid_token_text(const struct collie__uid *u, char *out, size_t len);

#endif
