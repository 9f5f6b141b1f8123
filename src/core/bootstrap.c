/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bootstrap.c - the rendezvous: a star of TCP connections centred on rank 0,
 * used only while setting up (and to exchange small tables).  Every frame
 * carries a status, so a failure seen by rank 0 reaches every rank as a
 * message instead of a hang; a length read from the wire is accepted only if
 * it is the one the exchange agreed on.
 */
#include "bootstrap.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "config.h"
#include "gate.h"
#include "log.h"
#include "seal.h"
#include "sock.h"
#include "status.h"

#define HELLO_MAGIC 0x434c4253u /* "CLBS" */
#define FRAME_MAGIC 0x434c4246u /* "CLBF" */
#define PROTOCOL_VERSION 3u     /* of the hello and the exchanges at init: one changed, it moves */

struct hello {
    uint32_t magic, version;
    int32_t rank, size;
};

struct frame {
    uint32_t magic;
    uint32_t status; /* collie_status; non-zero: the payload is the message */
    uint64_t len;
};

struct collie__bootstrap {
    int *fd; /* rank 0: fd[r] for every other rank r; others: fd[0], the link to rank 0 */
    struct collie__seal **seal;          /* as fd, with COLLIE_ENCRYPT=1 (seal.h); else NULL */
    struct collie__bootstrap_over *over; /* exchanges over a parent, while it is made; or NULL */
    char host[64]; /* made over a parent: the address its peers reach this rank at */
};

/* One end of the star. */
static struct collie__link link_to(const collie_comm *comm, int r)
{
    const struct collie__bootstrap *b = comm->boot;
    return (struct collie__link){b->fd[r], b->seal ? b->seal[r] : NULL};
}

static collie_status io_failed(collie_comm *comm, int peer, const char *what)
{
    if (errno == EBADMSG)
        return collie__fail(comm, COLLIE_ERR_AUTH,
                            "rank %d refused what rank %d sent during %s: it failed "
                            "authentication (COLLIE_ENCRYPT=1), so it was altered, replayed or "
                            "reordered on the way",
                            comm->rank, peer, what);
    if (errno == ETIMEDOUT)
        return collie__fail(comm, COLLIE_ERR_TIMEOUT,
                            "rank %d waited COLLIE_TIMEOUT=%.1f s for rank %d during %s",
                            comm->rank, comm->timeout_s, peer, what);
    return collie__fail(comm, COLLIE_ERR_PEER_LOST, "rank %d lost rank %d during %s: %s",
                        comm->rank, peer, what, strerror(errno));
}

static int send_frame(struct collie__link l, collie_status status, const void *data, size_t len,
                      uint64_t dl)
{
    struct frame f = {FRAME_MAGIC, (uint32_t)status, len};
    return collie__link_send(l, &f, sizeof f, dl) || (len && collie__link_send(l, data, len, dl))
               ? -1
               : 0;
}

/* Rank 0 tells every connected rank why the job cannot start, best effort. */
static void broadcast_failure(collie_comm *comm, collie_status status)
{
    uint64_t dl = collie__now_ns() + 2000000000ull;
    for (int r = 1; r < comm->size; r++)
        if (comm->boot->fd[r] >= 0)
            send_frame(link_to(comm, r), status, comm->last_error, strlen(comm->last_error) + 1,
                       dl);
}

/* Receives a frame of exactly `len` payload bytes, or the sender's error. */
static collie_status recv_frame(collie_comm *comm, int peer, void *data, size_t len,
                                const char *what)
{
    struct collie__link l = link_to(comm, peer);
    struct frame f;
    if (collie__link_recv(l, &f, sizeof f, comm->deadline_ns) != 0)
        return io_failed(comm, peer, what);
    if (f.magic != FRAME_MAGIC)
        return collie__fail(comm, COLLIE_ERR_INTERNAL, "garbled bootstrap frame from rank %d",
                            peer);
    if (f.status != COLLIE_OK) {
        char msg[sizeof comm->last_error] = "";
        size_t n = f.len < sizeof msg ? f.len : sizeof msg - 1;
        if (collie__link_recv(l, msg, n, comm->deadline_ns) != 0)
            msg[0] = 0;
        msg[n] = 0;
        collie_status st =
            f.status <= COLLIE_ERR_ABORTED ? (collie_status)f.status : COLLIE_ERR_INTERNAL;
        if (!msg[0]) /* whatever a peer sends, a failure here has a message */
            snprintf(msg, sizeof msg, "rank %d failed (%s) during %s and sent no reason", peer,
                     collie__status_name(st), what);
        return collie__fail_from_peer(comm, st, msg);
    }
    if (f.len != len)
        return collie__fail(comm, COLLIE_ERR_MISMATCH,
                            "rank %d sent %llu bytes during %s where %zu were agreed: do all "
                            "ranks run the same collie version?",
                            peer, (unsigned long long)f.len, what, len);
    if (len && collie__link_recv(l, data, len, comm->deadline_ns) != 0)
        return io_failed(comm, peer, what);
    return COLLIE_OK;
}

/* The seal of a connection to or from the rendezvous; NULL: failed (comm failed). */
static struct collie__seal *sealed(collie_comm *comm, const struct collie__auth_nonces *nonces,
                                   int connector, const struct hello *h)
{
    struct collie__seal *s = collie__seal_new(comm->token, nonces, connector, h, sizeof *h);
    if (!s)
        collie__fail(comm, COLLIE_ERR_NOMEM,
                     "rank %d could not set up the encryption of the rendezvous "
                     "(COLLIE_ENCRYPT=1; its log says why)",
                     comm->rank);
    return s;
}

static collie_status accept_all(collie_comm *comm, const struct collie__identity *id)
{
    int listen_fd = id->listen_fd;
    char err[256];
    if (listen_fd < 0 &&
        collie__sock_listen(id->addr_host, id->addr_port, &listen_fd, err, sizeof err) != 0)
        return collie__fail(comm, COLLIE_ERR_SYSTEM, "rank 0 (the rendezvous): %s", err);
    struct collie__gate *gate =
        collie__gate_open(listen_fd, comm->token, sizeof(struct hello), "rank 0 (the rendezvous)");
    collie_status st =
        gate ? COLLIE_OK : collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the rendezvous");
    for (int joined = 1; joined < comm->size && st == COLLIE_OK;) {
        int fd;
        struct hello h;
        struct collie__auth_nonces nonces;
        if (collie__gate_next(gate, comm->deadline_ns, &fd, &h, &nonces) != 0) {
            st = collie__fail(comm, errno == ETIMEDOUT ? COLLIE_ERR_TIMEOUT : COLLIE_ERR_SYSTEM,
                              "rank 0 waited %.1f s for ranks to connect to %s:%d; %d of %d "
                              "arrived (COLLIE_TIMEOUT; did every rank start?)%s%s",
                              comm->timeout_s, id->addr_host, id->addr_port, joined, comm->size,
                              errno == ETIMEDOUT ? "" : ": ",
                              errno == ETIMEDOUT ? "" : strerror(errno));
            break;
        }
        if (h.magic != HELLO_MAGIC) { /* it knows the token, but speaks something else */
            char peer[128];
            collie__sock_peer_name(fd, peer, sizeof peer);
            COLLIE_WARN("bootstrap",
                        "refused a connection from %s to %s:%d: it proved it knows COLLIE_TOKEN "
                        "but sent no rendezvous hello (a collie of another version?)",
                        peer, id->addr_host, id->addr_port);
            close(fd);
            continue;
        }
        struct collie__link l = {fd, comm->boot->seal ? sealed(comm, &nonces, 0, &h) : NULL};
        if (comm->boot->seal && !l.seal) {
            close(fd);
            st = comm->failed;
            break;
        }
        if (h.version != PROTOCOL_VERSION || h.size != comm->size || h.rank <= 0 ||
            h.rank >= comm->size || comm->boot->fd[h.rank] >= 0) {
            st = collie__fail(comm, COLLIE_ERR_MISMATCH,
                              "a rank joined as rank %d of %d (protocol %u), but rank 0 expects "
                              "ranks 1..%d of %d (protocol %u), each once",
                              h.rank, h.size, h.version, comm->size - 1, comm->size,
                              PROTOCOL_VERSION);
            send_frame(l, st, comm->last_error, strlen(comm->last_error) + 1,
                       collie__now_ns() + 1000000000ull);
            collie__link_close(&l);
            break;
        }
        comm->boot->fd[h.rank] = fd;
        if (comm->boot->seal)
            comm->boot->seal[h.rank] = l.seal;
        joined++;
    }
    collie__gate_close(gate);
    close(listen_fd);
    if (st != COLLIE_OK)
        broadcast_failure(comm, st);
    return st;
}

/*
 * A rank's connection to the rendezvous, its token proven both ways: OK with
 * *fd and the nonces, or the status it failed with.  A connection closed
 * before rank 0 answered a single byte is tried again until the deadline,
 * as a refused one is: a proxy or tunnel in front of rank 0 (ssh -L, a
 * service address) accepts before rank 0 listens, then closes.
 */
static collie_status join(collie_comm *comm, const struct collie__identity *id, int *fd,
                          struct collie__auth_nonces *nonces)
{
    uint64_t pause_ns = 1000000;
    for (int closed = 0;; closed++) {
        char err[256];
        if (collie__sock_connect(id->addr_host, id->addr_port, comm->deadline_ns, fd, err,
                                 sizeof err) != 0)
            return collie__fail(comm, COLLIE_ERR_TIMEOUT, "rank %d: rank 0's rendezvous: %s%s",
                                comm->rank, err,
                                closed ? " (every connection made was closed unanswered: a "
                                         "proxy in front of a rendezvous that never listened?)"
                                       : "");
        int proof = collie__auth_connect(*fd, comm->token, comm->deadline_ns, nonces);
        if (proof == 0)
            return COLLIE_OK;
        int e = errno;
        close(*fd);
        *fd = -1;
        if (proof == -2)
            return collie__fail(comm, COLLIE_ERR_AUTH,
                                "rank %d: the rendezvous at %s:%d could not prove it knows this "
                                "rank's COLLIE_TOKEN (another job, another token, or another "
                                "COLLIE_ENCRYPT)",
                                comm->rank, id->addr_host, id->addr_port);
        if (proof == -1 || collie__now_ns() + pause_ns >= comm->deadline_ns)
            return collie__fail(comm, e == ETIMEDOUT ? COLLIE_ERR_TIMEOUT : COLLIE_ERR_PEER_LOST,
                                "rank %d: the rendezvous at %s:%d closed the connection before "
                                "the handshake (rank 0 failed, or this job is over): %s",
                                comm->rank, id->addr_host, id->addr_port, strerror(e));
        struct timespec ts = {0, (long)pause_ns};
        nanosleep(&ts, NULL);
        if (pause_ns < 100000000)
            pause_ns *= 2;
    }
}

collie_status collie__bootstrap_open(collie_comm *comm, const struct collie__identity *id)
{
    if (comm->size == 1)
        return COLLIE_OK;
    struct collie__bootstrap *b = calloc(1, sizeof *b);
    int *fds = malloc(sizeof(int) * (size_t)comm->size);
    int encrypt = collie__seal_enabled();
    struct collie__seal **seals = encrypt ? calloc((size_t)comm->size, sizeof *seals) : NULL;
    if (!b || !fds || (encrypt && !seals)) {
        free(b), free(fds), free(seals);
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the bootstrap");
    }
    for (int r = 0; r < comm->size; r++)
        fds[r] = -1;
    b->fd = fds;
    b->seal = seals;
    comm->boot = b;
    collie_status st;
    if (comm->rank == 0) {
        st = accept_all(comm, id);
    } else {
        struct collie__auth_nonces nonces;
        st = join(comm, id, &fds[0], &nonces);
        struct hello h = {HELLO_MAGIC, PROTOCOL_VERSION, comm->rank, comm->size};
        if (st == COLLIE_OK && collie__sock_send(fds[0], &h, sizeof h, comm->deadline_ns) != 0)
            st = io_failed(comm, 0, "the rendezvous");
        if (st == COLLIE_OK && encrypt && !(seals[0] = sealed(comm, &nonces, 1, &h)))
            st = comm->failed;
    }
    if (st != COLLIE_OK)
        collie__bootstrap_close(comm);
    return st;
}

collie_status collie__bootstrap_open_over(collie_comm *comm, struct collie__bootstrap_over *over)
{
    struct collie__bootstrap *b = calloc(1, sizeof *b);
    int *fds = malloc(sizeof(int) * (size_t)comm->size);
    if (!b || !fds) {
        free(b), free(fds);
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for the bootstrap");
    }
    for (int r = 0; r < comm->size; r++)
        fds[r] = -1;
    b->fd = fds;
    b->over = over;
    snprintf(b->host, sizeof b->host, "%s", over->host);
    comm->boot = b;
    return COLLIE_OK;
}

void collie__bootstrap_made(collie_comm *comm)
{
    if (comm && comm->boot)
        comm->boot->over = NULL;
}

collie_status collie__bootstrap_allgather(collie_comm *comm, const void *mine, void *all,
                                          size_t len)
{
    unsigned char *out = all;
    memcpy(out + (size_t)comm->rank * len, mine, len);
    if (comm->size == 1)
        return COLLIE_OK;
    if (comm->boot->host[0]) /* made over a parent: no connections of its own */
        return comm->boot->over
                   ? collie__bootstrap_over_allgather(comm, comm->boot->over, mine, all, len)
                   : collie__fail(comm, COLLIE_ERR_INTERNAL,
                                  "rank %d: an exchange after its communicator was made over "
                                  "its parent",
                                  comm->rank);
    if (comm->rank != 0) {
        if (send_frame(link_to(comm, 0), COLLIE_OK, mine, len, comm->deadline_ns) != 0)
            return io_failed(comm, 0, "a bootstrap exchange");
        collie_status st =
            recv_frame(comm, 0, out, len * (size_t)comm->size, "a bootstrap exchange");
        /* This rank's own entry comes back as it went: else the table is garbled. */
        if (st == COLLIE_OK && memcmp(out + (size_t)comm->rank * len, mine, len))
            return collie__fail(comm, COLLIE_ERR_INTERNAL,
                                "rank %d: rank 0's table of a bootstrap exchange holds another "
                                "entry for this rank than it sent: does every rank run the same "
                                "collie version?",
                                comm->rank);
        return st;
    }
    collie_status st = COLLIE_OK;
    for (int r = 1; r < comm->size && st == COLLIE_OK; r++)
        st = recv_frame(comm, r, out + (size_t)r * len, len, "a bootstrap exchange");
    if (st != COLLIE_OK) {
        broadcast_failure(comm, st);
        return st;
    }
    for (int r = 1; r < comm->size; r++)
        if (send_frame(link_to(comm, r), COLLIE_OK, out, len * (size_t)comm->size,
                       comm->deadline_ns) != 0) {
            st = io_failed(comm, r, "a bootstrap exchange");
            broadcast_failure(comm, st);
            return st;
        }
    return COLLIE_OK;
}

int collie__bootstrap_local_addr(const collie_comm *comm, char *host, size_t len)
{
    const struct collie__bootstrap *b = comm->boot;
    if (b && b->host[0]) {
        snprintf(host, len, "%s", b->host);
        return 0;
    }
    for (int r = 0; b && r < comm->size; r++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        if (b->fd[r] >= 0 && getsockname(b->fd[r], (struct sockaddr *)&ss, &sl) == 0 &&
            getnameinfo((struct sockaddr *)&ss, sl, host, (socklen_t)len, NULL, 0,
                        NI_NUMERICHOST) == 0)
            return 0;
    }
    return -1;
}

collie_status collie__bootstrap_own_addr(collie_comm *comm, char *host, size_t len)
{
    const char *ifname = collie__config_string(COLLIE_CFG_SOCKET_IFNAME);
    char seen[256];
    if (*ifname && collie__sock_if_addr(ifname, host, len, seen, sizeof seen))
        return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                            "COLLIE_SOCKET_IFNAME='%s': rank %d has no IPv4 interface of that "
                            "name (it has: %s)",
                            ifname, comm->rank, seen);
    if (!*ifname && collie__bootstrap_local_addr(comm, host, len) != 0)
        return collie__fail(comm, COLLIE_ERR_SYSTEM,
                            "rank %d cannot tell its own address from the rendezvous; set "
                            "COLLIE_SOCKET_IFNAME",
                            comm->rank);
    return COLLIE_OK;
}

void collie__bootstrap_close(collie_comm *comm)
{
    struct collie__bootstrap *b = comm->boot;
    if (!b)
        return;
    for (int r = 0; r < comm->size; r++) {
        if (b->fd[r] >= 0)
            close(b->fd[r]);
        if (b->seal)
            collie__seal_free(b->seal[r]);
    }
    free(b->fd);
    free(b->seal);
    free(b);
    comm->boot = NULL;
}
