/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seal.h - encrypted links (COLLIE_ENCRYPT=1): every byte a connection
 * between hosts carries after its token handshake (auth.h) travels in
 * records, each encrypted and authenticated with AES-256-GCM (OpenSSL):
 *
 *   record = len (4 bytes, the plaintext's) | head tag (16) | ciphertext (len bytes) | tag (16)
 *
 * The length is authenticated twice: by the head's own tag, before the body
 * is awaited, and with the body (as additional data).  Each
 * direction of a connection has its own key, derived with HKDF-SHA256 from
 * the token, the handshake's two fresh nonces and the connector's hello
 * (which is thus authenticated with the first record), so that no two
 * connections, and no two directions, share a key.  A record's nonce is
 * its number in its direction (with the top bit set for the head's tag):
 * a receiver opens the records in the one
 * order they were sealed in, and a record replayed, reordered, dropped,
 * reflected back or altered fails authentication.  That failure is final:
 * the connection is never read again.
 *
 * The keys are only as secret as the token: a job that encrypts needs
 * COLLIE_TOKEN (or a collie_unique_id's).  No forward secrecy: whoever
 * later learns the token can read what was recorded.
 *
 * The calls mirror send/recv on a non-blocking socket, for the data path
 * (tcp.c), with blocking forms for the rendezvous.  One thread at a time
 * sends on a seal, and one (possibly another) receives.
 */
#ifndef COLLIE_SEAL_H
#define COLLIE_SEAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "auth.h"

/* Largest plaintext of one record. */
#define COLLIE__SEAL_RECORD_MAX (64u << 10)

struct collie__seal;

/* Whether this process encrypts its links between hosts (COLLIE_ENCRYPT=1). */
int collie__seal_enabled(void);

/*
 * The seal of one connection, after its handshake: nonces as the handshake
 * left them, connector 1 on the side that connected, hello the bytes the
 * connector sent after its proof (both sides pass the same).  NULL when out
 * of memory or when OpenSSL refuses (logged).
 */
struct collie__seal *collie__seal_new(const char *token, const struct collie__auth_nonces *nonces,
                                      int connector, const void *hello, size_t hello_len);

/* Frees a seal (NULL: nothing); the connection is the caller's to close. */
void collie__seal_free(struct collie__seal *s);

/*
 * Sends the plaintext of iov (n entries) on non-blocking fd, sealed: returns
 * how many of its first bytes are now wholly on the wire, or -1 with errno
 * (EAGAIN: nothing completed yet; others: as send).  Bytes sealed but not yet
 * on the wire stay with the seal, which goes on with them at the next call:
 * until a call has returned them, every call must pass the same plaintext
 * first (the caller advances only by what was returned).
 */
ssize_t collie__seal_sendv(struct collie__seal *s, int fd, const struct iovec *iov, int n);

/* Whether a record is partly on the wire: nothing else may be written to fd now. */
int collie__seal_sending(const struct collie__seal *s);

/*
 * Receives up to len bytes of plaintext from non-blocking fd: how many (> 0),
 * 0 when the peer closed the connection (between records or within one),
 * or -1 with errno: EAGAIN (nothing yet), EBADMSG (a record failed
 * authentication, or is no record: final), others as recv.
 */
ssize_t collie__seal_recv(struct collie__seal *s, int fd, void *buf, size_t len);

/*
 * Blocking forms, as collie__sock_send and collie__sock_recv (sock.h): 0, or
 * -1 with errno (ETIMEDOUT past deadline_ns, ECONNRESET when the peer
 * closed, EBADMSG when authentication failed).
 */
int collie__seal_send_all(struct collie__seal *s, int fd, const void *buf, size_t len,
                          uint64_t deadline_ns);
int collie__seal_recv_all(struct collie__seal *s, int fd, void *buf, size_t len,
                          uint64_t deadline_ns);

/*
 * A connection of the blocking exchanges (the rendezvous, the doors of a
 * shrink): its socket, and its seal, or NULL where links are plain.
 */
struct collie__link {
    int fd; /* -1: none */
    struct collie__seal *seal;
};

/*
 * With COLLIE_ENCRYPT=1, seals l after its handshake (as collie__seal_new):
 * 0, or -1 when the seal could not be made (logged).  Without, 0: l stays
 * plain.
 */
int collie__link_seal(struct collie__link *l, const char *token,
                      const struct collie__auth_nonces *nonces, int connector, const void *hello,
                      size_t hello_len);

/* collie__seal_send_all / _recv_all, or collie__sock_send / _recv on a plain link. */
int collie__link_send(struct collie__link l, const void *buf, size_t len, uint64_t deadline_ns);
int collie__link_recv(struct collie__link l, void *buf, size_t len, uint64_t deadline_ns);

/* Whether bytes already read from l's socket wait in its seal (poll() on it would not see them). */
int collie__link_buffered(struct collie__link l);

/* Closes l's socket and frees its seal; l becomes {-1, NULL}.  NULL-safe, idempotent. */
void collie__link_close(struct collie__link *l);

#endif
