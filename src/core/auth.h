/*
 * auth.h - every TCP connection between ranks (the rendezvous and the data
 * connections) starts with a challenge-response that proves both ends know
 * COLLIE_TOKEN, without sending it:
 *
 *   connector -> acceptor   nonce_c
 *   acceptor  -> connector  nonce_a, HMAC-SHA256(token, "collie/accept"  | nonce_c | nonce_a)
 *   connector -> acceptor            HMAC-SHA256(token, "collie/connect" | nonce_a | nonce_c)
 *
 * Fresh random nonces on both sides defeat replay; the two labels keep one
 * side's proof from being reflected as the other's.  OpenSSL computes the
 * MACs and compares them in constant time.  With no token set the key is
 * empty: the exchange still runs, so a job with a token refuses ranks
 * without one, but it proves nothing (collie_init warns once).
 */
#ifndef COLLIE_AUTH_H
#define COLLIE_AUTH_H

#include <stddef.h>
#include <stdint.h>

/*
 * token: the communicator's secret (COLLIE_TOKEN, or the one drawn into a
 * collie_unique_id).  Results: 0, or -1 with errno set (I/O; ETIMEDOUT past
 * the deadline), or -2: wrong proof.
 */
int collie__auth_connect(int fd, const char *token, uint64_t deadline_ns);
int collie__auth_accept(int fd, const char *token, uint64_t deadline_ns);

/* Whether COLLIE_TOKEN is set (non-empty). */
int collie__auth_has_token(void);

#endif
