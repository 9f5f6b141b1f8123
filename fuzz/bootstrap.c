/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bootstrap.c - the rendezvous (src/core/bootstrap.c) and what travels
 * over it while a job starts: the host table (src/core/comm.c) and the
 * endpoints of the TCP transport (src/transport/net.c).
 *
 * A two-rank job whose other rank is the fuzzer: a peer that knows the token
 * (it passes the handshake, which fuzz/auth.c covers) and then sends
 * arbitrary bytes, as a buggy or mismatched collie would.  The first input
 * byte picks this process's role: rank 0 (the fuzzer joins as rank 1) or
 * rank 1 (the fuzzer is the rendezvous).  The promises: every call returns,
 * by the deadline, a status with a message or success; a success delivers
 * exactly the bytes the exchange agreed on; nothing leaks.
 */
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/auth.h"
#include "core/bootstrap.h"
#include "core/gate.h"
#include "core/sock.h"
#include "fuzz.h"
#include "transport/net.h"

#define TOKEN "fuzz-token"
#define SECOND 1000000000ull

struct peer {
    int rank0;     /* 1: the peer is the rendezvous, listening on listen_fd */
    int listen_fd; /* the rendezvous's listener (either side's) */
    int port;
    const uint8_t *data;
    size_t size;
};

/* Reads and drops what this process sends, until it closes or a second passes. */
static void drain(int fd)
{
    char buf[4096];
    uint64_t deadline = collie__now_ns() + SECOND;
    struct pollfd p = {fd, POLLIN, 0};
    while (collie__now_ns() < deadline && poll(&p, 1, 100) >= 0)
        if (p.revents && read(fd, buf, sizeof buf) <= 0)
            break;
}

static void *peer_main(void *arg)
{
    struct peer *p = arg;
    uint64_t deadline = collie__now_ns() + SECOND;
    int fd = -1, ok;
    char err[256];
    if (p->rank0) {
        struct collie__gate *g = collie__gate_open(p->listen_fd, TOKEN, 0, "fuzz");
        ok = g && collie__gate_next(g, deadline, &fd, NULL, NULL) == 0;
        collie__gate_close(g);
    } else
        ok = collie__sock_connect("127.0.0.1", p->port, deadline, &fd, err, sizeof err) == 0 &&
             collie__auth_connect(fd, TOKEN, deadline, NULL) == 0;
    if (ok && collie__sock_send(fd, p->data, p->size, deadline) == 0)
        shutdown(fd, SHUT_WR);
    if (fd >= 0) {
        drain(fd);
        close(fd);
    }
    return NULL;
}

/* The job's start as init runs it, less the transports: rendezvous, hosts, endpoints. */
static void start_job(collie_comm *comm, const struct collie__identity *id)
{
    if (collie__bootstrap_open(comm, id) != COLLIE_OK) {
        FUZZ_ASSERT(comm->failed != COLLIE_OK && comm->last_error[0]);
        return;
    }
    char host_id[COLLIE_HOST_ID_LEN] = "fuzz-host", ids[2][COLLIE_HOST_ID_LEN];
    if (collie__bootstrap_allgather(comm, host_id, ids, sizeof host_id) != COLLIE_OK ||
        collie__comm_find_hosts(comm, ids[0], sizeof ids[0], sizeof ids[0], -1, -1, "fuzz") !=
            COLLIE_OK) {
        FUZZ_ASSERT(comm->failed != COLLIE_OK && comm->last_error[0]);
        return;
    }
    FUZZ_ASSERT(comm->nhosts >= 1 && comm->nhosts <= 2);
    struct collie__net_endpoint me = {"127.0.0.1", 4242}, all[2];
    memset(all, 0xa5, sizeof all);
    collie_status st = collie__bootstrap_allgather(comm, &me, all, sizeof me);
    if (st == COLLIE_OK) {
        FUZZ_ASSERT(!memcmp(&all[comm->rank], &me, sizeof me));
        st = collie__net_check_endpoints(comm, all);
        if (st == COLLIE_OK) /* what net.c hands to connect(): a string, a port */
            for (int r = 0; r < 2; r++)
                FUZZ_ASSERT(strlen(all[r].host) < sizeof all[r].host && all[r].port > 0 &&
                            all[r].port <= 65535);
    }
    FUZZ_ASSERT(st == COLLIE_OK || comm->last_error[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size < 1 || size > 65536)
        return 0;
    int listen_fd, port;
    char err[256];
    if (collie__sock_listen("127.0.0.1", 0, &listen_fd, err, sizeof err) != 0 ||
        (port = collie__sock_port(listen_fd)) < 0)
        abort(); /* the harness cannot run here */
    struct peer p = {data[0] & 1, listen_fd, port, data + 1, size - 1};
    int rank = p.rank0 ? 1 : 0;
    collie_comm *comm = collie__comm_create(rank, 2);
    FUZZ_ASSERT(comm);
    comm->token = TOKEN;
    comm->timeout_s = 0.02; /* a refused peer leaves rank 0 waiting for another until then */
    collie__arm_deadline(comm);
    struct collie__identity id;
    memset(&id, 0, sizeof id);
    id.rank = rank, id.size = 2, id.local_rank = id.local_size = -1;
    snprintf(id.addr_host, sizeof id.addr_host, "127.0.0.1");
    id.addr_port = port;
    id.listen_fd = p.rank0 ? -1 : listen_fd; /* rank 0 accepts on it, and closes it */

    pthread_t t;
    FUZZ_ASSERT(pthread_create(&t, NULL, peer_main, &p) == 0);
    start_job(comm, &id);
    collie__bootstrap_close(comm);
    pthread_join(t, NULL);
    if (p.rank0)
        close(listen_fd);
    collie__comm_free(comm);
    return 0;
}
