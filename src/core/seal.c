/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seal.c - the records of seal.h on OpenSSL's AES-256-GCM, keys from HKDF.
 *
 * A record's head (its length) carries a tag of its own, so that a length
 * altered on the way is refused at once instead of leaving the receiver
 * waiting for a body that never comes.
 *
 * Sending seals up to BATCH_RECORDS records from the caller's plaintext
 * into one buffer and writes it with as few send()s as the socket allows;
 * the caller learns of the plaintext only once its records are all out.
 * Receiving reads what the socket holds into a buffer, and opens each whole
 * record straight into the caller's buffer when it fits there (a payload),
 * else into a small plaintext buffer it is then copied from (a header read
 * alone).  Buffers are made at first use: a connection that carries nothing
 * costs no memory.
 */
#define _GNU_SOURCE
#include "seal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "sock.h"

#define LEN_BYTES 4
#define TAG_BYTES 16
#define HEAD_BYTES (LEN_BYTES + TAG_BYTES) /* the length and its own tag */
#define KEY_BYTES 32
#define IV_BYTES 12
#define RECORD_MAX COLLIE__SEAL_RECORD_MAX
#define WIRE_MAX (HEAD_BYTES + RECORD_MAX + TAG_BYTES)
#define HEAD_NONCE (1ull << 63) /* a head's nonce: its record's number with this bit set */
#define BATCH_RECORDS 4
#define IN_CAP (2 * WIRE_MAX) /* a whole record always fits behind a partial one */

struct seal_tx {
    EVP_CIPHER_CTX *ctx;
    uint64_t seq;
    unsigned char *buf;      /* BATCH_RECORDS records, sealed, on their way */
    size_t len, done, plain; /* bytes in buf, bytes written, plaintext they carry */
};

struct seal_rx {
    EVP_CIPHER_CTX *ctx;
    uint64_t seq;
    int broken;          /* a record failed: final */
    int head_ok;         /* the next record's head is authentic: its body is awaited */
    unsigned char *buf;  /* IN_CAP bytes read from the socket */
    size_t off, have;    /* records start at buf + off; have bytes read in all */
    unsigned char *rest; /* a record's plaintext, not yet taken */
    size_t rest_off, rest_len;
};

struct collie__seal {
    struct seal_tx tx;
    char pad[64]; /* the two directions run on different threads */
    struct seal_rx rx;
};

int collie__seal_enabled(void) { return collie__config_int(COLLIE_CFG_ENCRYPT) == 1; }

/* key = HKDF-SHA256(ikm token, salt nonces, info label | hello). */
static int derive(unsigned char *key, const char *token, const struct collie__auth_nonces *nonces,
                  const char *label, const void *hello, size_t hello_len)
{
    unsigned char info[64 + 64];
    size_t label_len = strlen(label);
    if (label_len + hello_len > sizeof info)
        return -1;
    memcpy(info, label, label_len);
    memcpy(info + label_len, hello, hello_len);
    size_t key_len = KEY_BYTES;
    EVP_PKEY_CTX *k = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    int ok = k && EVP_PKEY_derive_init(k) > 0 && EVP_PKEY_CTX_set_hkdf_md(k, EVP_sha256()) > 0 &&
             EVP_PKEY_CTX_set1_hkdf_salt(k, (const unsigned char *)nonces, sizeof *nonces) > 0 &&
             /* OpenSSL wants a key even when the token is empty (seal needs one: init.c) */
             EVP_PKEY_CTX_set1_hkdf_key(k, (const unsigned char *)(token[0] ? token : "-"),
                                        token[0] ? (int)strlen(token) : 1) > 0 &&
             EVP_PKEY_CTX_add1_hkdf_info(k, info, (int)(label_len + hello_len)) > 0 &&
             EVP_PKEY_derive(k, key, &key_len) > 0 && key_len == KEY_BYTES;
    EVP_PKEY_CTX_free(k);
    return ok ? 0 : -1;
}

static EVP_CIPHER_CTX *cipher(const unsigned char *key, int encrypt)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    if (c && EVP_CipherInit_ex(c, EVP_aes_256_gcm(), NULL, key, NULL, encrypt) > 0)
        return c;
    EVP_CIPHER_CTX_free(c);
    return NULL;
}

struct collie__seal *collie__seal_new(const char *token, const struct collie__auth_nonces *nonces,
                                      int connector, const void *hello, size_t hello_len)
{
    unsigned char to_acceptor[KEY_BYTES], to_connector[KEY_BYTES];
    struct collie__seal *s = calloc(1, sizeof *s);
    if (s && derive(to_acceptor, token, nonces, "collie/seal/to-acceptor", hello, hello_len) == 0 &&
        derive(to_connector, token, nonces, "collie/seal/to-connector", hello, hello_len) == 0) {
        s->tx.ctx = cipher(connector ? to_acceptor : to_connector, 1);
        s->rx.ctx = cipher(connector ? to_connector : to_acceptor, 0);
    }
    OPENSSL_cleanse(to_acceptor, sizeof to_acceptor);
    OPENSSL_cleanse(to_connector, sizeof to_connector);
    if (s && s->tx.ctx && s->rx.ctx)
        return s;
    COLLIE_WARN("seal", "OpenSSL could not set up AES-256-GCM with HKDF-SHA256 keys%s",
                s ? "" : " (no memory)");
    collie__seal_free(s);
    return NULL;
}

void collie__seal_free(struct collie__seal *s)
{
    if (!s)
        return;
    EVP_CIPHER_CTX_free(s->tx.ctx);
    EVP_CIPHER_CTX_free(s->rx.ctx);
    free(s->tx.buf);
    free(s->rx.buf);
    free(s->rx.rest);
    free(s);
}

/* A record's nonce: its number in its direction. */
static void iv_of(unsigned char *iv, uint64_t seq)
{
    memset(iv, 0, IV_BYTES);
    memcpy(iv + IV_BYTES - sizeof seq, &seq, sizeof seq);
}

/* The tag of a record's head: GCM over no plaintext, the length as additional data. */
static int head_tag(EVP_CIPHER_CTX *ctx, int encrypt, uint64_t seq, const unsigned char *len,
                    unsigned char *tag)
{
    unsigned char iv[IV_BYTES], none[16];
    int outl;
    iv_of(iv, seq | HEAD_NONCE);
    if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, encrypt) <= 0 ||
        EVP_CipherUpdate(ctx, NULL, &outl, len, LEN_BYTES) <= 0)
        return -1;
    if (encrypt)
        return EVP_EncryptFinal_ex(ctx, none, &outl) > 0 &&
                       EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, tag) > 0
                   ? 0
                   : -1;
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_BYTES, tag) > 0 &&
                   EVP_DecryptFinal_ex(ctx, none, &outl) > 0
               ? 0
               : -1;
}

/* Seals len plaintext bytes of iov, starting at byte skip, as one record at out. */
static int seal_record(struct seal_tx *t, const struct iovec *iov, int n, size_t skip, size_t len,
                       unsigned char *out)
{
    unsigned char iv[IV_BYTES];
    uint32_t len32 = (uint32_t)len;
    int outl;
    memcpy(out, &len32, LEN_BYTES);
    if (head_tag(t->ctx, 1, t->seq, out, out + LEN_BYTES) != 0)
        return -1;
    iv_of(iv, t->seq++);
    if (EVP_EncryptInit_ex(t->ctx, NULL, NULL, NULL, iv) <= 0 ||
        EVP_EncryptUpdate(t->ctx, NULL, &outl, out, LEN_BYTES) <= 0)
        return -1;
    unsigned char *c = out + HEAD_BYTES;
    for (int i = 0; i < n && len; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        size_t take = iov[i].iov_len - skip < len ? iov[i].iov_len - skip : len;
        if (EVP_EncryptUpdate(t->ctx, c, &outl, (unsigned char *)iov[i].iov_base + skip,
                              (int)take) <= 0)
            return -1;
        c += outl;
        len -= take;
        skip = 0;
    }
    if (EVP_EncryptFinal_ex(t->ctx, c, &outl) <= 0 ||
        EVP_CIPHER_CTX_ctrl(t->ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, c + outl) <= 0)
        return -1;
    return 0;
}

/* Seals up to BATCH_RECORDS records of the plaintext in iov into t->buf. */
static int seal_batch(struct seal_tx *t, const struct iovec *iov, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    if (!t->buf && !(t->buf = malloc((size_t)BATCH_RECORDS * WIRE_MAX))) {
        errno = ENOMEM;
        return -1;
    }
    t->len = t->done = t->plain = 0;
    for (int r = 0; r < BATCH_RECORDS && t->plain < total; r++) {
        size_t len = total - t->plain < RECORD_MAX ? total - t->plain : RECORD_MAX;
        if (seal_record(t, iov, n, t->plain, len, t->buf + t->len) != 0) {
            errno = EPROTO;
            return -1;
        }
        t->len += HEAD_BYTES + len + TAG_BYTES;
        t->plain += len;
    }
    return 0;
}

ssize_t collie__seal_sendv(struct collie__seal *s, int fd, const struct iovec *iov, int n)
{
    struct seal_tx *t = &s->tx;
    if (t->done == t->len && seal_batch(t, iov, n) != 0)
        return -1;
    while (t->done < t->len) {
        ssize_t sent = send(fd, t->buf + t->done, t->len - t->done, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent < 0)
            return -1; /* EAGAIN included: the batch waits for the next call */
        t->done += (size_t)sent;
    }
    return (ssize_t)t->plain;
}

int collie__seal_sending(const struct collie__seal *s) { return s->tx.done < s->tx.len; }

/* Opens the record at r->buf + r->off (len plaintext bytes) into out. */
static int open_record(struct seal_rx *r, size_t len, unsigned char *out)
{
    const unsigned char *rec = r->buf + r->off;
    unsigned char iv[IV_BYTES], tag[TAG_BYTES];
    int outl, ok;
    iv_of(iv, r->seq++);
    memcpy(tag, rec + HEAD_BYTES + len, TAG_BYTES);
    ok = EVP_DecryptInit_ex(r->ctx, NULL, NULL, NULL, iv) > 0 &&
         EVP_DecryptUpdate(r->ctx, NULL, &outl, rec, LEN_BYTES) > 0 &&
         EVP_DecryptUpdate(r->ctx, out, &outl, rec + HEAD_BYTES, (int)len) > 0 &&
         EVP_CIPHER_CTX_ctrl(r->ctx, EVP_CTRL_GCM_SET_TAG, TAG_BYTES, tag) > 0 &&
         EVP_DecryptFinal_ex(r->ctx, out + outl, &outl) > 0;
    r->off += HEAD_BYTES + len + TAG_BYTES;
    r->head_ok = 0;
    return ok ? 0 : -1;
}

/*
 * Opens the next whole record in r's buffer into buf (if it fits in len)
 * or into r->rest: its plaintext's length put into buf, 0 when no record is
 * whole yet, or -1 (EBADMSG).
 */
static ssize_t next_record(struct seal_rx *r, unsigned char *buf, size_t len)
{
    uint32_t plain;
    if (r->have - r->off < HEAD_BYTES)
        return 0;
    /* The head first: a length altered on the way is refused before its body is awaited. */
    if (!r->head_ok) {
        unsigned char tag[TAG_BYTES];
        memcpy(tag, r->buf + r->off + LEN_BYTES, TAG_BYTES);
        if (head_tag(r->ctx, 0, r->seq, r->buf + r->off, tag) != 0)
            return errno = EBADMSG, r->broken = 1, -1;
        r->head_ok = 1;
    }
    memcpy(&plain, r->buf + r->off, LEN_BYTES);
    if (plain == 0 || plain > RECORD_MAX)
        return errno = EBADMSG, r->broken = 1, -1; /* authentic, yet no sender makes one */
    if (r->have - r->off < HEAD_BYTES + (size_t)plain + TAG_BYTES)
        return 0;
    int direct = plain <= len;
    if (!direct && !r->rest && !(r->rest = malloc(RECORD_MAX)))
        return errno = ENOMEM, -1;
    if (open_record(r, plain, direct ? buf : r->rest) != 0)
        return errno = EBADMSG, r->broken = 1, -1;
    if (direct)
        return plain;
    r->rest_off = 0;
    r->rest_len = plain;
    return 0;
}

ssize_t collie__seal_recv(struct collie__seal *s, int fd, void *buf, size_t len)
{
    struct seal_rx *r = &s->rx;
    unsigned char *to = buf;
    size_t got = 0;
    if (r->broken)
        return errno = EBADMSG, -1;
    if (!r->buf && !(r->buf = malloc(IN_CAP)))
        return errno = ENOMEM, -1;
    while (got < len) {
        if (r->rest_off < r->rest_len) {
            size_t take =
                r->rest_len - r->rest_off < len - got ? r->rest_len - r->rest_off : len - got;
            memcpy(to + got, r->rest + r->rest_off, take);
            r->rest_off += take;
            got += take;
            continue;
        }
        ssize_t opened = next_record(r, to + got, len - got);
        if (opened < 0) /* what came before is good; the next call fails */
            return got ? (ssize_t)got : -1;
        if (opened > 0 || r->rest_off < r->rest_len) {
            got += (size_t)opened;
            continue;
        }
        if (r->off) { /* the partial record to the front: a whole one fits behind it */
            memmove(r->buf, r->buf + r->off, r->have - r->off);
            r->have -= r->off;
            r->off = 0;
        }
        ssize_t n = recv(fd, r->buf + r->have, IN_CAP - r->have, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return got ? (ssize_t)got : n; /* EAGAIN, an error, or closed */
        r->have += (size_t)n;
    }
    return (ssize_t)got;
}

int collie__seal_send_all(struct collie__seal *s, int fd, const void *buf, size_t len,
                          uint64_t deadline_ns)
{
    const unsigned char *p = buf;
    while (len) {
        struct iovec iov = {(void *)p, len};
        ssize_t n = collie__seal_sendv(s, fd, &iov, 1);
        if (n < 0 && errno != EAGAIN)
            return errno == EPIPE ? (errno = ECONNRESET, -1) : -1;
        if (n < 0 && collie__sock_wait(fd, POLLOUT, deadline_ns) != 0)
            return -1;
        if (n > 0)
            p += n, len -= (size_t)n;
    }
    return 0;
}

int collie__seal_recv_all(struct collie__seal *s, int fd, void *buf, size_t len,
                          uint64_t deadline_ns)
{
    unsigned char *p = buf;
    while (len) {
        ssize_t n = collie__seal_recv(s, fd, p, len);
        if (n == 0)
            return errno = ECONNRESET, -1;
        if (n < 0 && errno != EAGAIN)
            return -1;
        if (n < 0 && collie__sock_wait(fd, POLLIN, deadline_ns) != 0)
            return -1;
        if (n > 0)
            p += n, len -= (size_t)n;
    }
    return 0;
}

int collie__link_seal(struct collie__link *l, const char *token,
                      const struct collie__auth_nonces *nonces, int connector, const void *hello,
                      size_t hello_len)
{
    if (!collie__seal_enabled())
        return 0;
    l->seal = collie__seal_new(token, nonces, connector, hello, hello_len);
    return l->seal ? 0 : -1;
}

int collie__link_send(struct collie__link l, const void *buf, size_t len, uint64_t deadline_ns)
{
    return l.seal ? collie__seal_send_all(l.seal, l.fd, buf, len, deadline_ns)
                  : collie__sock_send(l.fd, buf, len, deadline_ns);
}

int collie__link_recv(struct collie__link l, void *buf, size_t len, uint64_t deadline_ns)
{
    return l.seal ? collie__seal_recv_all(l.seal, l.fd, buf, len, deadline_ns)
                  : collie__sock_recv(l.fd, buf, len, deadline_ns);
}

int collie__link_buffered(struct collie__link l)
{
    const struct seal_rx *r = l.seal ? &l.seal->rx : NULL;
    return r && (r->rest_off < r->rest_len || r->have > r->off);
}

void collie__link_close(struct collie__link *l)
{
    if (!l)
        return;
    if (l->fd >= 0)
        close(l->fd);
    collie__seal_free(l->seal);
    *l = (struct collie__link){-1, NULL};
}
