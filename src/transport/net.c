/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net.c - the TCP connections between ranks on different hosts (net.h).
 *
 * Set-up, collective over the bootstrap: every rank listens on an ephemeral
 * port and the addresses are allgathered; then each rank connects to every
 * remote rank below it (streams + 1 connections each) and accepts from every
 * remote rank above it.  The listeners exist before any address is known, so
 * a connect completes in the kernel's backlog even while its target is still
 * connecting elsewhere: the set-up cannot deadlock.  Every connection proves
 * the token and then names itself (rank, stream); anything else is refused
 * and logged, and the set-up goes on.
 */
#define _GNU_SOURCE
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../core/auth.h"
#include "../core/bootstrap.h"
#include "../core/config.h"
#include "../core/gate.h"
#include "../core/log.h"
#include "../core/seal.h"
#include "../core/sock.h"
#include "transport.h"
#include "wire.h"

#define HELLO_MAGIC 0x434c4e48u /* "CLNH" */
#define DEFAULT_STREAMS 4
#define STRIPE_MIN (256u << 10) /* shorter messages gain nothing from striping */

struct hello {
    uint32_t magic;
    int32_t rank, size, stream;
};

collie_status collie__net_check_endpoints(collie_comm *comm, const struct collie__net_endpoint *all)
{
    for (int r = 0; r < comm->size; r++) {
        if (!all[r].port)
            return collie__fail(comm, COLLIE_ERR_SYSTEM,
                                "rank %d could not listen for its peers (its log says why)", r);
        if (!memchr(all[r].host, 0, sizeof all[r].host) || all[r].port < 0 || all[r].port > 65535)
            return collie__fail(comm, COLLIE_ERR_MISMATCH,
                                "rank %d sent an address that is no address (port %d): does "
                                "every rank run the same collie version?",
                                r, (int)all[r].port);
    }
    return COLLIE_OK;
}

/* Whether a connection that proved the token names one this rank still expects. */
static int hello_fits(const collie_comm *comm, const struct hello *h)
{
    int rank = h->rank, stream = h->stream;
    return h->magic == HELLO_MAGIC && h->size == comm->size && rank > comm->rank &&
           rank < comm->size && collie__local_index(comm, rank) < 0 && stream >= 0 &&
           stream <= comm->net->streams && *collie__net_slot(comm, rank, stream) < 0;
}

static collie_status listen_here(collie_comm *comm, int *listen_fd, struct collie__net_endpoint *me)
{
    collie_status st = collie__bootstrap_own_addr(comm, me->host, sizeof me->host);
    if (st != COLLIE_OK)
        return st;
    char err[256];
    if (collie__sock_listen(me->host, 0, listen_fd, err, sizeof err) != 0)
        return collie__fail(comm, COLLIE_ERR_SYSTEM, "rank %d: %s", comm->rank, err);
    if ((me->port = collie__sock_port(*listen_fd)) < 0)
        return collie__fail(comm, COLLIE_ERR_SYSTEM, "rank %d: getsockname: %s", comm->rank,
                            strerror(errno));
    return COLLIE_OK;
}

/* With COLLIE_ENCRYPT=1, the seal of connection k to peer, just made. */
static collie_status seal(collie_comm *comm, int peer, int k,
                          const struct collie__auth_nonces *nonces, int connector,
                          const struct hello *h)
{
    struct collie__net *n = comm->net;
    if (!n->seal)
        return COLLIE_OK;
    size_t i = collie__net_index(comm, peer, k);
    n->seal[i] = collie__seal_new(comm->token, nonces, connector, h, sizeof *h);
    return n->seal[i] ? COLLIE_OK
                      : collie__fail(comm, COLLIE_ERR_NOMEM,
                                     "rank %d could not set up the encryption of its link to rank "
                                     "%d (COLLIE_ENCRYPT=1; its log says why)",
                                     comm->rank, peer);
}

static collie_status connect_to(collie_comm *comm, int peer, const struct collie__net_endpoint *at)
{
    for (int k = 0; k <= comm->net->streams; k++) {
        int fd;
        char err[256];
        if (collie__sock_connect(at->host, at->port, comm->deadline_ns, &fd, err, sizeof err) != 0)
            return collie__fail(comm, COLLIE_ERR_TIMEOUT, "rank %d cannot connect to rank %d: %s",
                                comm->rank, peer, err);
        *collie__net_slot(comm, peer, k) = fd;
        struct collie__auth_nonces nonces;
        int proof = collie__auth_connect(fd, comm->token, comm->deadline_ns, &nonces);
        if (proof != 0)
            return collie__fail(comm, COLLIE_ERR_AUTH,
                                "rank %d: rank %d at %s:%d did not complete the COLLIE_TOKEN "
                                "handshake (%s)",
                                comm->rank, peer, at->host, at->port,
                                proof == -2 ? "its proof is wrong: another token, or another "
                                              "COLLIE_ENCRYPT?"
                                            : strerror(errno));
        struct hello h = {HELLO_MAGIC, comm->rank, comm->size, k};
        if (collie__sock_send(fd, &h, sizeof h, comm->deadline_ns) != 0)
            return collie__fail(comm, COLLIE_ERR_PEER_LOST,
                                "rank %d lost rank %d while "
                                "connecting: %s",
                                comm->rank, peer, strerror(errno));
        collie_status st = seal(comm, peer, k, &nonces, 1, &h);
        if (st != COLLIE_OK)
            return st;
    }
    return COLLIE_OK;
}

/* Accepts until every remote rank above this one has all its connections here. */
static collie_status accept_from_above(collie_comm *comm, int listen_fd)
{
    int expected = 0;
    for (int q = comm->rank + 1; q < comm->size; q++)
        expected += collie__local_index(comm, q) < 0 ? comm->net->streams + 1 : 0;
    if (!expected)
        return COLLIE_OK;
    char who[48];
    snprintf(who, sizeof who, "rank %d", comm->rank);
    struct collie__gate *gate =
        collie__gate_open(listen_fd, comm->token, sizeof(struct hello), who);
    if (!gate)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory to accept connections");
    collie_status st = COLLIE_OK;
    while (expected > 0) {
        int fd;
        struct hello h;
        struct collie__auth_nonces nonces;
        if (collie__gate_next(gate, comm->deadline_ns, &fd, &h, &nonces) != 0) {
            st = collie__fail(comm, errno == ETIMEDOUT ? COLLIE_ERR_TIMEOUT : COLLIE_ERR_SYSTEM,
                              "rank %d waited COLLIE_TIMEOUT=%.1f s for %d connection(s) from "
                              "ranks on other hosts%s%s",
                              comm->rank, comm->timeout_s, expected, errno == ETIMEDOUT ? "" : ": ",
                              errno == ETIMEDOUT ? "" : strerror(errno));
            break;
        }
        if (!hello_fits(comm, &h)) {
            char peer[128];
            collie__sock_peer_name(fd, peer, sizeof peer);
            COLLIE_WARN("net",
                        "rank %d refused a connection from %s: it knows COLLIE_TOKEN but is no "
                        "connection this rank still expects (rank %d of %d, stream %d)",
                        comm->rank, peer, h.rank, h.size, h.stream);
            close(fd);
            continue;
        }
        *collie__net_slot(comm, h.rank, h.stream) = fd;
        expected--;
        if ((st = seal(comm, h.rank, h.stream, &nonces, 0, &h)) != COLLIE_OK)
            break;
    }
    collie__gate_close(gate);
    return st;
}

static collie_status connect_all(collie_comm *comm, const struct collie__net_endpoint *all,
                                 int listen_fd)
{
    for (int q = 0; q < comm->rank; q++)
        if (collie__local_index(comm, q) < 0) {
            collie_status st = connect_to(comm, q, &all[q]);
            if (st != COLLIE_OK)
                return st;
        }
    collie_status st = accept_from_above(comm, listen_fd);
    if (st != COLLIE_OK)
        return st;
    size_t nfd = (size_t)comm->size * (size_t)(comm->net->streams + 1);
    for (size_t i = 0; i < nfd; i++)
        if (comm->net->fd[i] >= 0)
            fcntl(comm->net->fd[i], F_SETFL, fcntl(comm->net->fd[i], F_GETFL) | O_NONBLOCK);
    return COLLIE_OK;
}

collie_status collie__net_open(collie_comm *comm)
{
    if (comm->nhosts <= 1)
        return COLLIE_OK;
    long long streams = collie__config_int(COLLIE_CFG_TCP_STREAMS);
    if (streams < 0)
        streams = DEFAULT_STREAMS;
    if (streams < 1 || streams > COLLIE_MAX_STREAMS)
        return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                            "COLLIE_TCP_STREAMS=%lld is outside "
                            "[1, %d]",
                            streams, COLLIE_MAX_STREAMS);
    struct collie__net *n = calloc(1, sizeof *n);
    size_t nfd = (size_t)comm->size * (size_t)(streams + 1);
    int *fds = malloc(nfd * sizeof *fds);
    _Atomic unsigned char *claim = calloc(nfd, sizeof *claim);
    unsigned char *mid = calloc(nfd, 1);
    struct collie__net_endpoint *all = calloc((size_t)comm->size, sizeof *all);
    struct collie__seal **seals = collie__seal_enabled() ? calloc(nfd, sizeof *seals) : NULL;
    if (!n || !fds || !all || !claim || !mid || (collie__seal_enabled() && !seals)) {
        free(n), free(fds), free(all), free((void *)claim), free(mid), free(seals);
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the TCP connection table");
    }
    for (size_t i = 0; i < nfd; i++)
        fds[i] = -1;
    n->streams = (int)streams;
    n->fd = fds;
    n->claim = claim;
    n->mid = mid;
    n->seal = seals;
    n->stripe_min = STRIPE_MIN;
    n->yield_ns = collie__wait_yield_ns(comm->crowd_ranks, comm->crowd_cpus);
    comm->net = n;
    int listen_fd = -1;
    struct collie__net_endpoint me = {0};
    collie_status st = listen_here(comm, &listen_fd, &me);
    /* Every rank takes part in the exchange, so that a failure anywhere fails all. */
    if (collie__bootstrap_allgather(comm, &me, all, sizeof me) != COLLIE_OK)
        st = comm->failed ? comm->failed : COLLIE_ERR_INTERNAL;
    if (st == COLLIE_OK)
        st = collie__net_check_endpoints(comm, all);
    if (st == COLLIE_OK)
        st = connect_all(comm, all, listen_fd);
    if (listen_fd >= 0)
        close(listen_fd);
    free(all);
    if (st == COLLIE_OK)
        COLLIE_INFO("net",
                    "rank %d listens at %s:%d; %d host(s), %d TCP stream(s) per remote peer "
                    "(+1 for send/recv)%s",
                    comm->rank, me.host, me.port, comm->nhosts, n->streams,
                    n->seal ? ", encrypted (AES-256-GCM)" : "");
    return st;
}

/* Shuts down (close == 0) or closes every connection. */
static void end_all(collie_comm *comm, int close_them)
{
    struct collie__net *n = comm->net;
    size_t nfd = (size_t)comm->size * (size_t)(n->streams + 1);
    for (size_t i = 0; i < nfd; i++) {
        if (close_them && n->seal)
            collie__seal_free(n->seal[i]);
        if (n->fd[i] < 0)
            continue;
        if (close_them)
            close(n->fd[i]);
        else
            shutdown(n->fd[i], SHUT_RDWR);
    }
}

void collie__net_shutdown(collie_comm *comm)
{
    if (comm->net)
        end_all(comm, 0);
}

void collie__net_close(collie_comm *comm)
{
    struct collie__net *n = comm->net;
    if (!n)
        return;
    end_all(comm, 1);
    free(n->fd);
    free((void *)n->claim);
    free(n->mid);
    free(n->seal);
    free(n);
    comm->net = NULL;
}
