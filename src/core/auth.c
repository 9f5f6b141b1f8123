/* SPDX-License-Identifier: BSD-3-Clause */
/* auth.c - the token challenge-response of auth.h, on OpenSSL's HMAC-SHA256. */
#include "auth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "config.h"
#include "seal.h"
#include "sock.h"

#define NONCE_BYTES COLLIE__AUTH_CHALLENGE_BYTES
#define MAC_BYTES COLLIE__AUTH_PROOF_BYTES
_Static_assert(COLLIE__AUTH_REPLY_BYTES == NONCE_BYTES + MAC_BYTES, "reply: nonce_a, then MAC");

int collie__auth_has_token(void) { return collie__config_string(COLLIE_CFG_TOKEN)[0] != 0; }

static int fresh_nonce(unsigned char *nonce)
{
    ssize_t got = getrandom(nonce, NONCE_BYTES, 0);
    return got == NONCE_BYTES ? 0 : -1;
}

/* mac = HMAC-SHA256(token, label ["/sealed"] | first | second). */
static int compute(unsigned char *mac, const char *key, const char *label,
                   const unsigned char *first, const unsigned char *second)
{
    unsigned char msg[32 + 2 * NONCE_BYTES];
    char labelled[32];
    snprintf(labelled, sizeof labelled, "%s%s", label, collie__seal_enabled() ? "/sealed" : "");
    label = labelled;
    size_t label_len = strlen(label);
    memcpy(msg, label, label_len);
    memcpy(msg + label_len, first, NONCE_BYTES);
    memcpy(msg + label_len + NONCE_BYTES, second, NONCE_BYTES);
    unsigned int len = 0;
    /* OpenSSL wants a non-NULL key even when it is empty. */
    return HMAC(EVP_sha256(), key, (int)strlen(key), msg, label_len + 2 * NONCE_BYTES, mac, &len) &&
                   len == MAC_BYTES
               ? 0
               : -1;
}

static int verify(const unsigned char *got, const char *key, const char *label,
                  const unsigned char *first, const unsigned char *second)
{
    unsigned char want[MAC_BYTES];
    if (compute(want, key, label, first, second) != 0)
        return -2;
    return CRYPTO_memcmp(got, want, MAC_BYTES) == 0 ? 0 : -2;
}

int collie__auth_connect(int fd, const char *token, uint64_t deadline_ns,
                         struct collie__auth_nonces *nonces)
{
    unsigned char nonce_c[NONCE_BYTES], reply[NONCE_BYTES + MAC_BYTES], proof[MAC_BYTES];
    if (fresh_nonce(nonce_c) != 0 || collie__sock_send(fd, nonce_c, sizeof nonce_c, deadline_ns))
        return -1;
    if (collie__sock_recv(fd, reply, 1, deadline_ns))
        return errno == ECONNRESET ? -3 : -1;
    if (collie__sock_recv(fd, reply + 1, sizeof reply - 1, deadline_ns))
        return -1;
    const unsigned char *nonce_a = reply;
    if (verify(reply + NONCE_BYTES, token, "collie/accept", nonce_c, nonce_a) != 0)
        return -2;
    if (compute(proof, token, "collie/connect", nonce_a, nonce_c) != 0)
        return -2;
    if (nonces) {
        memcpy(nonces->connector, nonce_c, NONCE_BYTES);
        memcpy(nonces->acceptor, nonce_a, NONCE_BYTES);
    }
    return collie__sock_send(fd, proof, sizeof proof, deadline_ns) ? -1 : 0;
}

int collie__auth_reply(const char *token, const unsigned char *challenge, unsigned char *reply)
{
    return fresh_nonce(reply) == 0 &&
                   compute(reply + NONCE_BYTES, token, "collie/accept", challenge, reply) == 0
               ? 0
               : -1;
}

int collie__auth_check(const char *token, const unsigned char *challenge,
                       const unsigned char *reply, const unsigned char *proof)
{
    return verify(proof, token, "collie/connect", reply, challenge);
}
