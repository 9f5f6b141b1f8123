/* SPDX-License-Identifier: BSD-3-Clause */
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
 * without one, but it proves nothing (collie_init warns once).  A process
 * that encrypts its links (seal.h) says so in both labels ("collie/accept/
 * sealed"...): ranks that disagree on COLLIE_ENCRYPT fail the handshake,
 * and no one on the path can strip the encryption unseen.
 */
#ifndef COLLIE_AUTH_H
#define COLLIE_AUTH_H

#include <stddef.h>
#include <stdint.h>

/* The sizes of the three messages above. */
#define COLLIE__AUTH_CHALLENGE_BYTES 16 /* nonce_c */
#define COLLIE__AUTH_REPLY_BYTES 48     /* nonce_a, MAC */
#define COLLIE__AUTH_PROOF_BYTES 32     /* MAC */

/* A handshake's two nonces, from which an encrypted link's keys derive (seal.h). */
struct collie__auth_nonces {
    unsigned char connector[COLLIE__AUTH_CHALLENGE_BYTES]; /* nonce_c */
    unsigned char acceptor[COLLIE__AUTH_CHALLENGE_BYTES];  /* nonce_a */
};

/*
 * The connecting side, blocking.  token: the communicator's secret
 * (COLLIE_TOKEN, or the one drawn into a collie_unique_id).  Returns 0 with
 * the nonces in *nonces (NULL: not wanted), or -1 with errno set (I/O;
 * ETIMEDOUT past the deadline), or -2: wrong proof, or -3: the acceptor
 * closed the connection before sending a single byte of its answer (errno
 * ECONNRESET; a proxy or tunnel in front of a listener that is not there yet
 * does this).
 */
int collie__auth_connect(int fd, const char *token, uint64_t deadline_ns,
                         struct collie__auth_nonces *nonces);

/*
 * The accepting side as two computations, so that one thread can take many
 * connections through it at once (gate.h).  collie__auth_reply fills reply
 * (a fresh nonce_a and the acceptor's MAC) for a connector's challenge:
 * 0, or -1 when no randomness or MAC could be had.  collie__auth_check
 * compares the connector's proof with the one owed for that challenge and
 * reply, in constant time: 0, or -2.
 */
int collie__auth_reply(const char *token, const unsigned char *challenge, unsigned char *reply);
int collie__auth_check(const char *token, const unsigned char *challenge,
                       const unsigned char *reply, const unsigned char *proof);

/* Whether COLLIE_TOKEN is set (non-empty). */
int collie__auth_has_token(void);

#endif
