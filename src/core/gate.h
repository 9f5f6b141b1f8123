/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate.h - the accepting side of a listener (the rendezvous at rank 0, and
 * every rank's listener for its peers on other hosts).  A connection passes
 * the gate when it proves it knows the token (auth.h) and then sends its
 * hello: a fixed number of bytes the caller reads and judges.
 *
 * All the connections at the gate prove themselves at once, each against its
 * own deadline (5 s), on one thread: a silent or slow connection - a port
 * scanner, a stalled process, a peer on a crawling link - costs the others
 * nothing, where taking them one at a time would cost each later arrival a
 * whole deadline.  At most 64 wait at once; under a flood the one that has
 * waited longest is dropped to make room, and a real rank, which answers in
 * microseconds, is never the one that has waited longest.  Every connection
 * refused is logged with its address and why.
 */
#ifndef COLLIE_GATE_H
#define COLLIE_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "auth.h"

#define COLLIE__GATE_HELLO_MAX 64

struct collie__gate;

/*
 * Opens a gate on listen_fd, which becomes non-blocking and stays the
 * caller's to close (after collie__gate_close).  token: as auth.h (kept by
 * pointer: it must outlive the gate).  hello_bytes: what a connection sends
 * after its proof, at most COLLIE__GATE_HELLO_MAX.  who: names the listener
 * in the log ("rank 0 (the rendezvous)").  Returns NULL when out of memory
 * (or when hello_bytes is over the limit: a caller's bug).
 */
struct collie__gate *collie__gate_open(int listen_fd, const char *token, size_t hello_bytes,
                                       const char *who);

/*
 * Waits for the next connection to pass the gate: 0 with *fd (blocking,
 * close-on-exec, TCP_NODELAY; now the caller's), its hello copied to hello
 * and its handshake's nonces to *nonces (NULL: not wanted); or -1 with
 * errno: ETIMEDOUT at deadline_ns, or why the listener failed (EMFILE...).
 * Connections still proving themselves wait for the next call.
 */
int collie__gate_next(struct collie__gate *g, uint64_t deadline_ns, int *fd, void *hello,
                      struct collie__auth_nonces *nonces);

/* Closes every connection still proving itself and frees the gate (NULL: nothing). */
void collie__gate_close(struct collie__gate *g);

#endif
