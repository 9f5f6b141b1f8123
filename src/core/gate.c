/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate.c - many connections through the token handshake at once (gate.h).
 *
 * Each waiting connection is a small state machine over the acceptor's two
 * reads: the challenge, then the proof with the hello behind it.  Between
 * them the reply is sent without waiting: 48 bytes always fit in a fresh
 * connection's send buffer, so a reply that does not go out at once means
 * the peer is gone.  Nothing is read past what the handshake asks for.
 */
#include "gate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "clock.h"
#include "log.h"
#include "sock.h"

#define MAX_WAITING 64
#define HANDSHAKE_NS 5000000000ull /* a connection proves itself within 5 s */

struct waiting {
    int fd;
    uint64_t deadline_ns;
    int replied; /* 0: reading the challenge; 1: reading the proof and the hello */
    size_t have; /* bytes of the current read received */
    int left;    /* it closed the connection itself */
    unsigned char challenge[COLLIE__AUTH_CHALLENGE_BYTES];
    unsigned char reply[COLLIE__AUTH_REPLY_BYTES];
    unsigned char proof_hello[COLLIE__AUTH_PROOF_BYTES + COLLIE__GATE_HELLO_MAX];
};

struct collie__gate {
    int listen_fd;
    const char *token;
    size_t hello_bytes;
    char who[96], where[80];
    int n; /* waiting[0..n) */
    struct waiting waiting[MAX_WAITING];
};

struct collie__gate *collie__gate_open(int listen_fd, const char *token, size_t hello_bytes,
                                       const char *who)
{
    if (hello_bytes > COLLIE__GATE_HELLO_MAX)
        return NULL;
    struct collie__gate *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->listen_fd = listen_fd;
    g->token = token;
    g->hello_bytes = hello_bytes;
    snprintf(g->who, sizeof g->who, "%s", who);
    collie__sock_local_name(listen_fd, g->where, sizeof g->where);
    fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    return g;
}

/*
 * Closes waiting[i], logging why, and moves the last one into its place.
 * One that left of its own accord (a health check, a peer probing whether
 * this process lives, a connector that gave up) is no threat: INFO, not WARN.
 */
static void refuse(struct collie__gate *g, int i, const char *why)
{
    char peer[128];
    collie__sock_peer_name(g->waiting[i].fd, peer, sizeof peer);
    collie__log(g->waiting[i].left ? COLLIE_LOG_INFO : COLLIE_LOG_WARN, "auth",
                "%s refused a connection from %s to %s: it did not prove it knows "
                "COLLIE_TOKEN (%s)",
                g->who, peer, g->where, why);
    close(g->waiting[i].fd);
    g->waiting[i] = g->waiting[--g->n];
}

/* Takes every connection waiting on the listener; -1 when the listener failed. */
static int admit(struct collie__gate *g)
{
    for (;;) {
        int fd;
        if (collie__sock_accept_ready(g->listen_fd, &fd) != 0)
            return errno == EAGAIN ? 0 : -1;
        if (g->n == MAX_WAITING) { /* a flood: drop whoever has waited longest */
            int oldest = 0;
            for (int i = 1; i < g->n; i++)
                if (g->waiting[i].deadline_ns < g->waiting[oldest].deadline_ns)
                    oldest = i;
            refuse(g, oldest, "dropped to make room: more than 64 connections at once");
        }
        struct waiting *w = &g->waiting[g->n++];
        memset(w, 0, sizeof *w);
        w->fd = fd;
        w->deadline_ns = collie__now_ns() + HANDSHAKE_NS;
    }
}

/*
 * Reads what waiting[i] has sent: 1 when it passed the gate, 0 when it is
 * still on its way, -1 when it was refused (and removed).
 */
static int advance(struct collie__gate *g, int i)
{
    struct waiting *w = &g->waiting[i];
    unsigned char *into = w->replied ? w->proof_hello : w->challenge;
    size_t need = w->replied ? COLLIE__AUTH_PROOF_BYTES + g->hello_bytes : sizeof w->challenge;
    ssize_t got = recv(w->fd, into + w->have, need - w->have, MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (got <= 0) {
        w->left = got == 0 && !w->replied; /* before the reply: it was not told anything */
        refuse(g, i, got == 0 ? "it closed the connection" : strerror(errno));
        return -1;
    }
    w->have += (size_t)got;
    if (w->have < need)
        return 0;
    if (w->replied) {
        if (collie__auth_check(g->token, w->challenge, w->reply, w->proof_hello) == 0)
            return 1;
        refuse(g, i, "its proof is wrong: another token?");
        return -1;
    }
    char next;
    if (recv(w->fd, &next, 1, MSG_PEEK | MSG_DONTWAIT) == 0) { /* a knock given up on */
        w->left = 1;
        refuse(g, i, "it left before the reply");
        return -1;
    }
    if (collie__auth_reply(g->token, w->challenge, w->reply) != 0) {
        refuse(g, i, "no randomness for a nonce");
        return -1;
    }
    if (send(w->fd, w->reply, sizeof w->reply, MSG_DONTWAIT | MSG_NOSIGNAL) !=
        (ssize_t)sizeof w->reply) {
        refuse(g, i, "it did not take the reply");
        return -1;
    }
    w->replied = 1;
    w->have = 0;
    return 0;
}

int collie__gate_next(struct collie__gate *g, uint64_t deadline_ns, int *fd, void *hello,
                      struct collie__auth_nonces *nonces)
{
    struct pollfd p[1 + MAX_WAITING];
    for (;;) {
        uint64_t now = collie__now_ns(), wake = deadline_ns;
        for (int i = g->n - 1; i >= 0; i--)
            if (g->waiting[i].deadline_ns <= now)
                refuse(g, i, "it did not finish the handshake within 5 s");
        if (now >= deadline_ns) {
            errno = ETIMEDOUT;
            return -1;
        }
        p[0] = (struct pollfd){g->listen_fd, POLLIN, 0};
        for (int i = 0; i < g->n; i++) {
            p[1 + i] = (struct pollfd){g->waiting[i].fd, POLLIN, 0};
            if (g->waiting[i].deadline_ns < wake)
                wake = g->waiting[i].deadline_ns;
        }
        int ready = poll(p, (nfds_t)(1 + g->n), collie__poll_ms(now, wake, 60000));
        if (ready < 0 && errno != EINTR)
            return -1;
        if (ready <= 0)
            continue;
        /* Backwards: a refusal moves the last connection, already seen, into its place. */
        for (int i = g->n - 1; i >= 0; i--) {
            if (!p[1 + i].revents || advance(g, i) != 1)
                continue;
            *fd = g->waiting[i].fd;
            if (g->hello_bytes)
                memcpy(hello, g->waiting[i].proof_hello + COLLIE__AUTH_PROOF_BYTES, g->hello_bytes);
            if (nonces) {
                memcpy(nonces->connector, g->waiting[i].challenge, sizeof nonces->connector);
                memcpy(nonces->acceptor, g->waiting[i].reply, sizeof nonces->acceptor);
            }
            g->waiting[i] = g->waiting[--g->n];
            return 0;
        }
        if ((p[0].revents & POLLIN) && admit(g) != 0)
            return -1;
    }
}

void collie__gate_close(struct collie__gate *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++)
        close(g->waiting[i].fd);
    free(g);
}
