/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ring_stream.c - streams of messages through a pair's shared-memory
 * ring arrive intact, whatever their sizes: small ones that the sender
 * brings back to the ring's start once they could pass its first bytes
 * (shm_xfer.c's skip_before), large ones that wrap, the turns between the
 * two, and senders held up by a full ring in the middle of such a skip.
 * The user's sends, a tree broadcast (the collectives' channel) and an
 * allreduce whose ranks send and receive at once (rabenseifner: a sender
 * that stopped after a skip, its ring all but empty, was never moved again
 * while its rank waited on its receive) alike; every byte is checked.
 *
 * Run as `collie run -n N test_ring_stream` with COLLIE_ALGO naming
 * broadcast:tree and allreduce:rabenseifner: ranks 2k and 2k+1 stream to
 * each other in turn (an odd last rank sits out the messages); then the
 * broadcast from each root in turn; then the allreduce.  With
 * COLLIE_RING_HEAD=1 the small messages keep to the rings' heads, with 0
 * they walk them whole; with `mixed` as its argument, each rank sets
 * COLLIE_RING_HEAD to its rank's parity before init, and the ranks must
 * still frame alike (local rank 0's value holds for the host).
 */
#include "test_util.h"

/* Payload sizes, in bytes, around each edge of the ring's rules (a ring is 256 KiB). */
static const size_t script[] = {
    0,     1,     63,   1000, 4095, 4096, 4097, 4096,   4096,   4096, 4096, 4095, 1,    4096,
    12000, 70000, 4096, 1000, 1000, 1000, 1000, 300000, 4096,   7,    8192, 4096, 0,    4057,
    4096,  4096,  4096, 4096, 4096, 4096, 4096, 4096,   262144, 4096, 1,    2048, 2048,
};
#define SCRIPT_LEN (sizeof script / sizeof script[0])
#define PASSES                                                                                     \
    40 /* the script again and again: its messages cross the ring's laps at every offset */
#define LARGEST 300000

static unsigned char pattern(size_t msg, size_t i, int from)
{
    return (unsigned char)(msg * 131u + i * 7u + (size_t)from * 29u + (i >> 8));
}

static void fill(unsigned char *buf, size_t len, size_t msg, int from)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(msg, i, from);
}

static void check(const unsigned char *buf, size_t len, size_t msg, int from, int me,
                  const char *what)
{
    for (size_t i = 0; i < len; i++)
        CHECK(buf[i] == pattern(msg, i, from),
              "rank %d, %s #%zu (%zu bytes) from rank %d: byte %zu is %u, not %u", me, what, msg,
              len, from, i, buf[i], pattern(msg, i, from));
}

/* Rank `from` sends the script PASSES times to `to`, which now and then lets its ring fill. */
static void stream(collie_comm *comm, unsigned char *buf, int from, int to)
{
    const int me = collie_rank(comm);
    for (size_t msg = 0; msg < PASSES * SCRIPT_LEN; msg++) {
        size_t len = script[msg % SCRIPT_LEN];
        if (me == from) {
            fill(buf, len, msg, from);
            CHECK_OK(comm, collie_send(comm, buf, len, COLLIE_UINT8, to));
        } else {
            if (msg % 97 == 0) /* the sender runs ahead until its ring is full */
                test_sleep(0.002);
            memset(buf, 0xa5, len);
            CHECK_OK(comm, collie_recv(comm, buf, len, COLLIE_UINT8, from));
            check(buf, len, msg, from, me, "message");
        }
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "mixed")) {
        const char *rank = getenv("COLLIE_RANK");
        CHECK(rank, "mixed: COLLIE_RANK not set (run under collie run)");
        setenv("COLLIE_RING_HEAD", atoi(rank) % 2 ? "0" : "1", 1);
    }
    collie_comm *comm = test_init();
    const int me = collie_rank(comm), n = collie_size(comm), partner = me ^ 1;
    unsigned char *buf = malloc(LARGEST);
    CHECK(buf, "out of memory");
    if (partner < n) {
        stream(comm, buf, me & ~1, me | 1);
        stream(comm, buf, me | 1, me & ~1);
    }
    CHECK_OK(comm, collie_barrier(comm));
    /* The collectives' channel: each root broadcasts the script, the tree's messages through the rings. */
    for (int root = 0; root < n; root++)
        for (size_t msg = 0; msg < PASSES * SCRIPT_LEN / 4; msg++) {
            size_t len = script[msg % SCRIPT_LEN];
            if (me == root)
                fill(buf, len, msg, root);
            else
                memset(buf, 0xa5, len);
            CHECK_OK(comm, collie_broadcast(comm, buf, len, COLLIE_UINT8, root));
            check(buf, len, msg, root, me, "broadcast");
        }
    /* Both ways at once: each rank's halves cross its peer's in every step. */
    int32_t *sum = malloc(LARGEST);
    CHECK(sum, "out of memory");
    for (size_t msg = 0; msg < PASSES * SCRIPT_LEN; msg++) {
        size_t count = script[msg % SCRIPT_LEN] / sizeof(int32_t);
        for (size_t i = 0; i < count; i++)
            sum[i] = (int32_t)(msg * 7 + i) * (me + 1);
        CHECK_OK(comm, collie_allreduce(comm, sum, sum, count, COLLIE_INT32, COLLIE_SUM));
        for (size_t i = 0; i < count; i++)
            CHECK(sum[i] == (int32_t)(msg * 7 + i) * (n * (n + 1) / 2),
                  "rank %d, allreduce #%zu (%zu elements): element %zu is %d", me, msg, count, i,
                  sum[i]);
    }
    free(sum);
    free(buf);
    CHECK_OK(comm, collie_finalize(comm));
    printf("rank %d: %zu messages, broadcasts and allreduces checked\n", me,
           (size_t)PASSES * SCRIPT_LEN);
    return 0;
}
