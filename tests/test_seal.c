/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_seal.c - the sealed records of encrypted links (src/core/seal.h),
 * over socketpairs in one process: every byte comes back as it was sent,
 * whatever the sizes written and read; and every record altered, replayed,
 * reordered, dropped, reflected, sealed under another token or hello, or
 * cut short, is refused - never delivered - and the refusal is final.
 * Stops at the first failure (test_util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/seal.h"
#include "test_util.h"

#define TOKEN "test-token"
#define SECOND 1000000000ull

static const struct collie__auth_nonces nonces = {{1, 2, 3}, {4, 5, 6}};
static const char hello[] = "hello of the connector";

/* The two ends of one link: a connector's seal and an acceptor's. */
struct ends {
    struct collie__seal *c, *a;
};

static struct ends make_ends(const char *token_c, const char *hello_a)
{
    struct ends e = {collie__seal_new(token_c, &nonces, 1, hello, sizeof hello),
                     collie__seal_new(TOKEN, &nonces, 0, hello_a, sizeof hello)};
    CHECK(e.c && e.a, "collie__seal_new");
    return e;
}

static void free_ends(struct ends e)
{
    collie__seal_free(e.c);
    collie__seal_free(e.a);
}

static void pair(int sv[2])
{
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair: %s", strerror(errno));
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
}

static unsigned char pattern(size_t i) { return (unsigned char)(i * 131 + (i >> 9) * 7 + 1); }

struct sender {
    struct collie__seal *s;
    int fd;
    size_t len, piece; /* bytes in all, and per call */
};

static void *send_all(void *arg)
{
    struct sender *w = arg;
    unsigned char *buf = malloc(w->len);
    for (size_t i = 0; i < w->len; i++)
        buf[i] = pattern(i);
    for (size_t at = 0; at < w->len; at += w->piece) {
        size_t n = w->len - at < w->piece ? w->len - at : w->piece;
        CHECK(collie__seal_send_all(w->s, w->fd, buf + at, n, collie__now_ns() + 10 * SECOND) == 0,
              "send: %s", strerror(errno));
    }
    free(buf);
    return NULL;
}

/* len bytes sealed in pieces of `piece`, received in reads of `read` (and odd sizes). */
static void roundtrip(size_t len, size_t piece, size_t read)
{
    int sv[2];
    pair(sv);
    struct ends e = make_ends(TOKEN, hello);
    struct sender w = {e.c, sv[0], len, piece};
    pthread_t t;
    pthread_create(&t, NULL, send_all, &w);
    unsigned char *got = malloc(len);
    size_t at = 0, k = 0;
    while (at < len) {
        size_t want = (k++ % 3 == 2 ? 1 + k % 7 : read); /* mix small reads in */
        want = want < len - at ? want : len - at;
        CHECK(collie__seal_recv_all(e.a, sv[1], got + at, want, collie__now_ns() + 10 * SECOND) ==
                  0,
              "recv of %zu bytes at %zu of %zu: %s", want, at, len, strerror(errno));
        at += want;
    }
    pthread_join(t, NULL);
    size_t bad = 0;
    for (size_t i = 0; i < at; i++)
        bad += got[i] != pattern(i);
    CHECK(at == len && bad == 0, "%zu bytes (pieces %zu, reads %zu): %zu received, %zu wrong", len,
          piece, read, at, bad);
    free(got);
    free_ends(e);
    close(sv[0]);
    close(sv[1]);
}

/* Records as they travel: n messages of sizes len[i] sealed by s, read raw. */
struct wire {
    unsigned char bytes[1 << 16];
    size_t len, rec_at[8], rec_len[8];
    int nrec;
};

static void seal_records(struct collie__seal *s, const size_t *sizes, int n, struct wire *out)
{
    int sv[2];
    pair(sv);
    out->len = 0;
    out->nrec = n;
    for (int i = 0; i < n; i++) {
        unsigned char msg[4096];
        for (size_t j = 0; j < sizes[i]; j++)
            msg[j] = (unsigned char)(i * 16 + j);
        CHECK(collie__seal_send_all(s, sv[0], msg, sizes[i], collie__now_ns() + SECOND) == 0,
              "sealing record %d: %s", i, strerror(errno));
        out->rec_at[i] = out->len;
        out->rec_len[i] = 20 + sizes[i] + 16; /* length, head tag, body, tag */
        ssize_t r = recv(sv[1], out->bytes + out->len, sizeof out->bytes - out->len, 0);
        CHECK(r == (ssize_t)out->rec_len[i], "record %d is %zd bytes on the wire, not %zu", i, r,
              out->rec_len[i]);
        out->len += (size_t)r;
    }
    close(sv[0]);
    close(sv[1]);
}

/*
 * Feeds bytes to the receiving seal r and reads everything it delivers:
 * returns how many plaintext bytes it delivered before it refused (errno
 * EBADMSG) or ran out; *err: 0, or the errno of the refusal.
 */
static size_t feed(struct collie__seal *r, const unsigned char *bytes, size_t len, int *err)
{
    int sv[2];
    pair(sv);
    CHECK(write(sv[0], bytes, len) == (ssize_t)len, "write: %s", strerror(errno));
    close(sv[0]);
    unsigned char got[1 << 16];
    size_t total = 0;
    *err = 0;
    for (;;) {
        ssize_t n = collie__seal_recv(r, sv[1], got, sizeof got);
        if (n > 0) {
            total += (size_t)n;
            continue;
        }
        if (n < 0)
            *err = errno;
        break;
    }
    close(sv[1]);
    return total;
}

static void refused(const char *what, struct collie__seal *r, const unsigned char *bytes,
                    size_t len, size_t delivered_first)
{
    int err;
    size_t got = feed(r, bytes, len, &err);
    CHECK(err == EBADMSG && got == delivered_first,
          "%s: delivered %zu bytes (the %zu before it expected) and ended with %s, not EBADMSG",
          what, got, delivered_first, err ? strerror(err) : "no error");
}

static void attacks(void)
{
    const size_t sizes[3] = {40, 1000, 7};
    struct wire w, copy;
    struct ends e = make_ends(TOKEN, hello);
    seal_records(e.c, sizes, 3, &w);
    int err;
    size_t got = feed(e.a, w.bytes, w.len, &err);
    CHECK(got == 1047 && err == 0, "untouched records: %zu bytes delivered (1047), %s", got,
          strerror(err));
    free_ends(e);

    static const struct {
        const char *what;
        size_t at; /* a byte of the stream to flip */
        size_t bit;
    } flips[] = {{"a ciphertext byte of the first record", 20 + 3, 0x20},
                 {"a tag byte of the first record", 20 + 40 + 5, 0x20},
                 {"a head tag byte of the first record", 4 + 2, 0x20},
                 {"the length of the first record, lowered", 0, 0x01},
                 {"the length of the first record, raised", 0, 0x10},
                 {"the length of the second record, raised", 76, 0x40},
                 {"a ciphertext byte of the second record", 76 + 20 + 999, 0x20}};
    for (size_t f = 0; f < sizeof flips / sizeof flips[0]; f++) {
        copy = w;
        copy.bytes[flips[f].at] ^= (unsigned char)flips[f].bit;
        e = make_ends(TOKEN, hello);
        refused(flips[f].what, e.a, copy.bytes, copy.len, flips[f].at >= 76 ? 40 : 0);
        free_ends(e);
    }
    /* a raised length is refused at once: the body it announces is not awaited */
    copy = w;
    copy.bytes[0] ^= 0x10;
    e = make_ends(TOKEN, hello);
    refused("a raised length, alone", e.a, copy.bytes, 20, 0);
    free_ends(e);

    /* replayed: the first record twice */
    copy = w;
    memcpy(copy.bytes + w.rec_len[0], w.bytes, w.len);
    e = make_ends(TOKEN, hello);
    refused("a replayed record", e.a, copy.bytes, w.rec_len[0] * 2, 40);
    free_ends(e);

    /* reordered: the second record before the first */
    memcpy(copy.bytes, w.bytes + w.rec_at[1], w.rec_len[1]);
    memcpy(copy.bytes + w.rec_len[1], w.bytes, w.rec_len[0]);
    e = make_ends(TOKEN, hello);
    refused("records reordered", e.a, copy.bytes, w.rec_len[0] + w.rec_len[1], 0);
    free_ends(e);

    /* dropped: the third record without the second */
    memcpy(copy.bytes, w.bytes, w.rec_len[0]);
    memcpy(copy.bytes + w.rec_len[0], w.bytes + w.rec_at[2], w.rec_len[2]);
    e = make_ends(TOKEN, hello);
    refused("a record dropped", e.a, copy.bytes, w.rec_len[0] + w.rec_len[2], 40);
    free_ends(e);

    /* reflected: the connector's records back to the connector */
    e = make_ends(TOKEN, hello);
    refused("records reflected to their sender", e.c, w.bytes, w.len, 0);
    free_ends(e);

    /* sealed with another token, or received with another hello */
    e = make_ends("another-token", hello);
    seal_records(e.c, sizes, 3, &copy);
    refused("records sealed with another token", e.a, copy.bytes, copy.len, 0);
    free_ends(e);
    e = make_ends(TOKEN, "hello altered on the way");
    refused("records of a connection whose hello was altered", e.a, w.bytes, w.len, 0);
    free_ends(e);

    /* a length no sender writes */
    copy = w;
    memset(copy.bytes, 0xff, 4);
    e = make_ends(TOKEN, hello);
    refused("a record longer than any", e.a, copy.bytes, copy.len, 0);
    free_ends(e);

    /* refusal is final: good records after a bad one are refused too */
    e = make_ends(TOKEN, hello);
    copy = w;
    copy.bytes[10] ^= 1;
    refused("a bad first record", e.a, copy.bytes, copy.len, 0);
    refused("good records after a refusal", e.a, w.bytes, w.len, 0);
    free_ends(e);

    /* cut short: the connection closes inside a record; nothing of it is delivered */
    e = make_ends(TOKEN, hello);
    got = feed(e.a, w.bytes, w.rec_len[0] + 20, &err);
    CHECK(got == 40 && err == 0, "a record cut short: %zu bytes delivered (40), %s", got,
          strerror(err));
    free_ends(e);
}

int main(void)
{
    static const size_t lens[] = {1, 40, 4096, 65535, 65536, 65537, 262144 + 3, 3u << 20};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        roundtrip(lens[i], lens[i], lens[i]);
        roundtrip(lens[i], 40, 4096);
        roundtrip(lens[i], 1u << 20, 40);
        roundtrip(lens[i], 100000, 1u << 20);
    }
    attacks();
    printf("test_seal: round trips and attacks: all as promised\n");
    return 0;
}
