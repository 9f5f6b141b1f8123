/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_room_wait.c - a sender held up by a full ring waits for a batch of
 * room (shm_xfer.c's wait_for_room), but not for room that the receiver
 * frees only after this sender's next message: that wait is bounded.
 *
 * Rank 0 fills its ring to rank 1 to all but a few bytes (a small message,
 * then one that takes the rest), then sends a third that does not fit.
 * Rank 1 receives the small one, which makes room for the third, and then
 * waits for rank 2; rank 2 waits for rank 0's next message.  The room the
 * third needs is there; a batch of it comes only once rank 1 has heard from
 * rank 2.  Every byte is checked.
 *
 * Run as `collie run -n 3 test_room_wait` with a short COLLIE_TIMEOUT: a
 * sender that waited for its batch unbounded fails at that timeout.
 */
#include "test_util.h"
#include "transport/shm.h"
#include "transport/wire.h"

enum { SMALL = 400, THIRD = 200, LEFT = 8, NOTE = 64 };

static unsigned char pattern(int msg, size_t i)
{
    return (unsigned char)(msg * 61 + i * 13 + (i >> 9));
}

static void fill(unsigned char *buf, size_t len, int msg)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(msg, i);
}

static void check(const unsigned char *buf, size_t len, int msg)
{
    for (size_t i = 0; i < len; i++)
        CHECK(buf[i] == pattern(msg, i), "message %d (%zu bytes): byte %zu is %u, not %u", msg, len,
              i, buf[i], pattern(msg, i));
}

int main(void)
{
    collie_comm *comm = test_init();
    CHECK(collie_size(comm) == 3 && collie_local_size(comm) == 3,
          "run as `collie run -n 3` (one host), not %d ranks", collie_size(comm));
    const int me = collie_rank(comm);
    const size_t hdr = sizeof(struct collie__wire), cap = collie__shm_ring_bytes(3);
    /* Small messages keep off the ring's head rule (shm_xfer.c's skip_before): under 512 bytes. */
    const size_t large = cap - 2 * hdr - SMALL - LEFT;
    const size_t len[3] = {SMALL, large, THIRD};
    unsigned char *buf = malloc(large);
    CHECK(buf, "out of memory");
    if (me == 0) {
        for (int msg = 0; msg < 3; msg++) {
            fill(buf, len[msg], msg);
            CHECK_OK(comm, collie_send(comm, buf, len[msg], COLLIE_UINT8, 1));
        }
        fill(buf, NOTE, 3);
        CHECK_OK(comm, collie_send(comm, buf, NOTE, COLLIE_UINT8, 2));
    } else if (me == 1) {
        CHECK_OK(comm, collie_recv(comm, buf, SMALL, COLLIE_UINT8, 0));
        check(buf, SMALL, 0);
        CHECK_OK(comm, collie_recv(comm, buf, NOTE, COLLIE_UINT8, 2));
        check(buf, NOTE, 3);
        for (int msg = 1; msg < 3; msg++) {
            CHECK_OK(comm, collie_recv(comm, buf, len[msg], COLLIE_UINT8, 0));
            check(buf, len[msg], msg);
        }
    } else {
        CHECK_OK(comm, collie_recv(comm, buf, NOTE, COLLIE_UINT8, 0));
        check(buf, NOTE, 3);
        CHECK_OK(comm, collie_send(comm, buf, NOTE, COLLIE_UINT8, 1));
    }
    free(buf);
    CHECK_OK(comm, collie_finalize(comm));
    printf("rank %d: done (ring %zu bytes)\n", me, cap);
    return 0;
}
