/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seal.c - the records of encrypted links (src/core/seal.c) as a receiver
 * reads them from a peer.  The first byte picks what the rest is:
 *   0  bytes on the wire, as anyone on the path could send them: nothing
 *      is ever delivered (no input can carry a valid tag);
 *   1  plaintext, sealed by a real sender and read back in reads whose
 *      sizes the input also picks: every byte comes back, in order;
 *   2  plaintext sealed as 1, then one byte of the wire flipped (its place
 *      from the input): what is delivered is a prefix of the plaintext, and
 *      the read ends refused (EBADMSG) or at the connection's end.
 * Nothing is read out of bounds, whatever lengths the records claim.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/seal.h"
#include "fuzz.h"

#define TOKEN "fuzz-token"
#define WIRE_MAX (1 << 20)

static const struct collie__auth_nonces nonces = {{7}, {9}};

/* The wire bytes of data sealed by a connector, in pieces of the sizes the input says. */
static size_t seal_all(const uint8_t *data, size_t size, unsigned char *wire)
{
    struct collie__seal *tx = collie__seal_new(TOKEN, &nonces, 1, "h", 1);
    int sv[2];
    FUZZ_ASSERT(tx && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    size_t len = 0;
    for (size_t at = 0; at < size;) {
        size_t piece = 1 + (data[at] % 97) * 701; /* 1 byte to 66 KiB: records of every size */
        piece = piece < size - at ? piece : size - at;
        FUZZ_ASSERT(collie__seal_send_all(tx, sv[0], data + at, piece,
                                          collie__now_ns() + 1000000000ull) == 0);
        at += piece;
        for (;;) { /* drain as we go: the socket's buffer is smaller than the input */
            ssize_t r = recv(sv[1], wire + len, WIRE_MAX - len, MSG_DONTWAIT);
            if (r <= 0)
                break;
            len += (size_t)r;
        }
    }
    collie__seal_free(tx);
    close(sv[0]);
    close(sv[1]);
    return len;
}

/*
 * Feeds wire to a receiving seal, in reads whose sizes come from sizes[]:
 * the plaintext delivered into out; *err the errno that ended it, or 0.
 */
static size_t receive(const unsigned char *wire, size_t len, const uint8_t *sizes, size_t nsizes,
                      unsigned char *out, size_t cap, int *err)
{
    struct collie__seal *rx = collie__seal_new(TOKEN, &nonces, 0, "h", 1);
    int sv[2];
    FUZZ_ASSERT(rx && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    size_t fed = 0, got = 0, k = 0;
    int ended = 0;
    *err = 0;
    for (;;) {
        if (fed < len) { /* a little at a time: records arrive in pieces */
            ssize_t w = send(sv[0], wire + fed, len - fed < 8192 ? len - fed : 8192, MSG_DONTWAIT);
            fed += w > 0 ? (size_t)w : 0;
        }
        if (fed == len && !ended)
            ended = shutdown(sv[0], SHUT_WR) == 0;
        size_t want = nsizes ? 1 + sizes[k++ % nsizes] * 37u : 4096;
        want = want < cap - got ? want : cap - got;
        if (!want)
            break;
        ssize_t r = collie__seal_recv(rx, sv[1], out + got, want);
        if (r > 0) {
            got += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EAGAIN)
            continue;
        if (r < 0)
            *err = errno;
        break;
    }
    collie__seal_free(rx);
    close(sv[0]);
    close(sv[1]);
    return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char wire[WIRE_MAX], out[WIRE_MAX];
    fuzz_quiet();
    if (size < 1 || size > 65536)
        return 0;
    int mode = data[0] % 3, err;
    data++, size--;
    if (mode == 0) {
        size_t got = receive(data, size, NULL, 0, out, sizeof out, &err);
        FUZZ_ASSERT(got == 0);
        return 0;
    }
    if (size < 2)
        return 0;
    size_t flip = ((size_t)data[0] << 8 | data[1]) * 7;
    size_t len = seal_all(data, size, wire);
    if (mode == 2 && len)
        wire[flip % len] ^= 0x08;
    size_t got = receive(wire, len, data, size < 16 ? size : 16, out, sizeof out, &err);
    FUZZ_ASSERT(got <= size && memcmp(out, data, got) == 0);
    if (mode == 1)
        FUZZ_ASSERT(got == size && err == 0);
    else
        FUZZ_ASSERT(got < size && (err == EBADMSG || err == 0));
    return 0;
}
