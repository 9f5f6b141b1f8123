/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auth.c - the token handshake (src/core/auth.c) against a peer that sends
 * arbitrary bytes, on both sides: as the accepting end, through the gate
 * every listener runs (src/core/gate.c), and as the connecting end.  The
 * promise: bytes not computed from the token are never accepted (the nonces
 * are fresh, so no input can carry a valid proof), and nothing is read past
 * what the handshake asks for.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/auth.h"
#include "core/clock.h"
#include "core/gate.h"
#include "core/sock.h"
#include "fuzz.h"

#define TOKEN "fuzz-token"
#define SECOND 1000000000ull

/* A listener in the abstract socket namespace: no port, no file, no TIME_WAIT. */
static int unix_listener(struct sockaddr_un *at)
{
    memset(at, 0, sizeof *at);
    at->sun_family = AF_UNIX;
    snprintf(at->sun_path + 1, sizeof at->sun_path - 1, "collie-fuzz-gate-%d", (int)getpid());
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)at, sizeof *at) != 0 || listen(fd, 16) != 0)
        abort(); /* the harness cannot run here */
    return fd;
}

/* The gate takes one connection that sends these bytes and then ends; it must refuse it. */
static void through_gate(const uint8_t *data, size_t size)
{
    static int listen_fd = -1;
    static struct sockaddr_un at;
    if (listen_fd < 0)
        listen_fd = unix_listener(&at);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FUZZ_ASSERT(fd >= 0 && connect(fd, (struct sockaddr *)&at, sizeof at) == 0);
    FUZZ_ASSERT(collie__sock_send(fd, data, size, collie__now_ns() + SECOND) == 0);
    shutdown(fd, SHUT_WR);
    struct collie__gate *g = collie__gate_open(listen_fd, TOKEN, 16, "fuzz");
    FUZZ_ASSERT(g);
    /* Until the gate closes the connection: a read at this end then sees the end. */
    char buf[64];
    uint64_t deadline = collie__now_ns() + SECOND;
    for (;;) {
        int passed;
        unsigned char hello[16];
        FUZZ_ASSERT(collie__gate_next(g, collie__now_ns() + 1000000, &passed, hello, NULL) == -1 &&
                    errno == ETIMEDOUT);
        ssize_t got;
        while ((got = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
            ;
        if (got == 0 || (got < 0 && errno == ECONNRESET))
            break;
        FUZZ_ASSERT(collie__now_ns() < deadline); /* a refusal takes no waiting */
    }
    collie__gate_close(g);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size < 1 || size > 4096) /* a socket's buffer holds it: the writer never blocks */
        return 0;
    if (!(data[0] & 1)) {
        through_gate(data + 1, size - 1);
        return 0;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    /*
     * The acceptor's bytes, then its end of the stream: refused (-1, -2), or,
     * where it sent none, closed before answering (-3, which bootstrap.c
     * tries again).
     */
    if (collie__sock_send(sv[1], data + 1, size - 1, collie__now_ns() + SECOND) == 0) {
        shutdown(sv[1], SHUT_WR);
        int rc = collie__auth_connect(sv[0], TOKEN, collie__now_ns() + SECOND, NULL);
        FUZZ_ASSERT(rc == -1 || rc == -2 || (rc == -3 && size == 1));
    }
    close(sv[0]);
    close(sv[1]);
    return 0;
}
