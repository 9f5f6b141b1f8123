/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net.h - TCP between ranks on different hosts: the connections (net.c) and
 * the data path (tcp.c).
 *
 * Every pair of ranks on different hosts holds `streams` connections for the
 * messages of collectives, which large messages are striped over (one stream
 * stays far below a fast link's rate), and one more for collie_send/recv.
 * The higher rank connects; both ends prove they know COLLIE_TOKEN (auth.h)
 * before a connection joins, and with COLLIE_ENCRYPT=1 every byte after that
 * travels sealed (seal.h).  Data sockets are non-blocking and driven by the
 * calling thread (xfer.c).  Private to src/transport/: the table in tcp.c
 * is the transport's face.
 */
#ifndef COLLIE_NET_H
#define COLLIE_NET_H

#include "../core/comm.h"

struct collie__net {
    int streams;       /* collective connections per remote peer */
    int *fd;           /* [peer * (streams + 1) + k]; k == streams: send/recv; -1: a local peer */
    size_t stripe_min; /* messages shorter than this use one stream */
    /*
     * Per connection, as fd: who may write to it, and whether a message is
     * half written.  The thread that fails the communicator tells each peer
     * why in a last message (tcp.c), which must never land inside another.
     */
    _Atomic unsigned char *claim; /* CLAIM_FREE, CLAIM_SENDING, CLAIM_ENDED */
    unsigned char *mid;           /* written by the claim's holder only */
    struct collie__seal **seal;   /* as fd, with COLLIE_ENCRYPT=1 (seal.h); else NULL */
    /*
     * How long a wait for these connections looks and yields before it
     * sleeps in poll() (xfer.c; COLLIE_YIELD_US, as shared memory's waits).
     */
    uint64_t yield_ns;
};

enum { COLLIE_NET_CLAIM_FREE, COLLIE_NET_CLAIM_SENDING, COLLIE_NET_CLAIM_ENDED };

/* The index of connection k to peer in fd, claim and mid. */
static inline size_t collie__net_index(const collie_comm *comm, int peer, int k)
{
    return (size_t)peer * (size_t)(comm->net->streams + 1) + (size_t)k;
}

/* Connection k (k == streams: the send/recv one) to a remote peer. */
static inline int *collie__net_slot(const collie_comm *comm, int peer, int k)
{
    return &comm->net->fd[collie__net_index(comm, peer, k)];
}

static inline int collie__net_fd(const collie_comm *comm, int peer, int k)
{
    return *collie__net_slot(comm, peer, k);
}

/* Where a rank listens for its peers on other hosts, as the ranks allgather it. */
struct collie__net_endpoint {
    char host[64]; /* numeric address, NUL-terminated */
    int32_t port;
};

/*
 * Checks the allgathered endpoints, bytes every peer sent: each address
 * NUL-terminated and each port in 1..65535, else fails naming the rank (a
 * rank that could not listen sends port 0, its log says why).  The only
 * reader of those bytes before they are used; fuzzed (fuzz/bootstrap.c).
 */
collie_status collie__net_check_endpoints(collie_comm *comm,
                                          const struct collie__net_endpoint *all);

/*
 * Connects every pair of ranks on different hosts.  Collective over the
 * bootstrap; a no-op on one host.  Listens on COLLIE_SOCKET_IFNAME's address,
 * else on the address this rank reached (or was reached at by) the
 * rendezvous.
 */
collie_status collie__net_open(collie_comm *comm);

/*
 * Shuts every connection down (they stay open until close), so that ranks on
 * other hosts waiting for this failed one see it at once.  NULL-safe.
 */
void collie__net_shutdown(collie_comm *comm);

/* Closes every connection; NULL-safe.  Peers see the connections end. */
void collie__net_close(collie_comm *comm);

#endif
