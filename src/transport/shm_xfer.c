/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm_xfer.c - messages (wire.h) between ranks of one host: a byte ring per
 * ordered pair and channel, moved without blocking.  The header and the
 * payload travel as one byte stream; the receiver checks the header before
 * it copies payload out of the ring.  Collectives and the user's send/recv
 * take the same path on separate channels.
 *
 * Each end reads the other's counter only when its own copy of it runs out:
 * the sender the tail when the room it knows of is short, the receiver the
 * head when the bytes it knows of are taken.  A message of a sender running
 * ahead (a tree's root in a loop, a stream of sends) then costs the
 * receiver the ring's lines alone, not also the head's, and the sender
 * leaves the receiver's tail line in the receiver's cache, where its posts
 * cost nothing.  Measured at 2 ranks, a 4-64 byte broadcast tree in a loop
 * went from 0.22-0.24 to 0.18-0.19 us, a ring allreduce of 4 B-1 KiB took
 * 0.82-0.86x its time.
 */
#include <string.h>

#include "shm.h"
#include "shm_layout.h"
#include "transport.h"

#define HDR sizeof(struct collie__wire)

/* Copies up to n bytes of src into the ring at *head; returns how many went. */
static size_t put(unsigned char *ring, uint32_t cap, uint32_t *head, uint32_t room,
                  const unsigned char *src, size_t n)
{
    if (n > room)
        n = room;
    collie__ring_put(ring, cap, *head, src, n);
    *head += (uint32_t)n;
    return n;
}

/*
 * Where a message starts in its ring.  A loop of messages of a few KiB (a
 * tree's broadcast or reduction, a stream of sends) walked the whole ring,
 * so a line came round again only after it had left both cores' first-level
 * caches: the sender's store and the receiver's load each fetched it from
 * further out.  Measured at 2 ranks on an AMD EPYC, a tree broadcast in a
 * loop on a 16 KiB ring against the 256 KiB one: 1 KiB 0.12 against 0.24
 * us with the cores close, 0.44 against 0.86 apart; 4 KiB 0.43 against
 * 0.57 and 1.54 against 2.20 (a 32 KiB ring gained nothing: with the
 * call's buffers it overflows the 32 KiB cache).  So after a message of
 * HOT_MSG_MIN to SMALL_MSG ring bytes, the next one starts at the ring's
 * start again once it could pass the first RING_HOT bytes: both ends know
 * the last message's size and where it ended, and skip alike without a
 * word.  Large messages still stream through the whole ring; so do
 * messages of a few lines, which ran 0.08-0.10 us either way and up to
 * 0.03 slower brought back.  With more
 * ranks than CPUs a sender that runs many messages ahead is what makes a
 * loop fast (a rank is switched in once per many calls): 4 ranks on 2
 * cores took 0.24 us a 1 KiB tree broadcast on the whole ring, 0.73-0.89
 * brought back, so there the whole ring stays in use.  On an Intel Xeon
 * the head lost 2.2-2.5x (1-4 KiB), so the host's leader decides whether
 * to keep it (s->ring_head, shm.c's ring_head_choice()).
 */
#define RING_HOT ((uint32_t)COLLIE__RING_HOT_BYTES)
#define SMALL_MSG (RING_HOT / 4 + (uint32_t)HDR)
#define HOT_MSG_MIN ((uint32_t)512)

static size_t skip_before(const struct collie__shm *s, uint32_t last, uint32_t pos)
{
    uint32_t cap = (uint32_t)s->map.ring_bytes, at = pos % cap;
    if (!s->ring_head || s->crowded || cap < 4 * RING_HOT || last < HOT_MSG_MIN ||
        last > SMALL_MSG || at <= RING_HOT - SMALL_MSG)
        return 0;
    return cap - at;
}

/*
 * Fills what room there is, posting every quarter ring so that the receiver
 * starts copying out while this rank still copies in.
 */
static void push(collie_comm *comm, struct collie__xfer *x, int to)
{
    struct collie__shm *s = comm->shm;
    struct collie__chan *c = collie__shm_chan(s, (int)x->chan, s->me, to);
    unsigned char *ring = collie__shm_ring(s, (int)x->chan, s->me, to);
    const unsigned at = x->chan * (unsigned)s->n + (unsigned)to;
    uint32_t cap = (uint32_t)s->map.ring_bytes, *head = &s->sent[at], *tail = &s->tail_seen[at];
    struct collie__xfer_stripe *st = &x->st[0];
    if (!st->placed) {
        st->skip = skip_before(s, s->sent_last[at], *head);
        st->placed = 1;
    }
    uint32_t posted = *head;
    while (!collie__xfer_stripe_done(x, 0)) {
        uint32_t room = cap - (*head - *tail);
        if (room < cap / 4 && room < st->skip + (HDR - st->hdr_done) + (st->len - st->done)) {
            *tail = atomic_load_explicit(&c->tail.value, memory_order_acquire);
            room = cap - (*head - *tail);
        }
        if (st->skip && room) { /* nothing to copy, so not a quarter at a time */
            uint32_t n = room < st->skip ? room : (uint32_t)st->skip;
            *head += n, st->skip -= n;
            /*
             * Counted again, from the receiver's tail where short: a room
             * that a skip used up was counted from this end's old copy of
             * the tail, and a sender that stopped there, the ring all but
             * empty, was never moved again (its rank waited on a receive).
             */
            continue;
        }
        if (room > cap / 4)
            room = cap / 4;
        if (!room) {
            if (*head != posted) /* a skip the receiver may pass */
                collie__flag_post(&c->head, *head);
            return;
        }
        if (st->hdr_done < HDR) {
            size_t n = put(ring, cap, head, room, (const unsigned char *)&x->hdr[0] + st->hdr_done,
                           HDR - st->hdr_done);
            st->hdr_done += n, room -= (uint32_t)n;
        }
        if (st->hdr_done == HDR && st->done < st->len && room) {
            size_t n = put(ring, cap, head, room, x->buf + st->done, st->len - st->done);
            st->done += n;
            collie__count_sent(comm, (enum collie__lane)x->chan, n);
        }
        collie__flag_post(&c->head, *head);
        posted = *head;
    }
    s->sent_last[at] = (uint32_t)(HDR + st->len);
}

static collie_status pull(collie_comm *comm, struct collie__xfer *x, int from)
{
    struct collie__shm *s = comm->shm;
    struct collie__chan *c = collie__shm_chan(s, (int)x->chan, from, s->me);
    const unsigned char *ring = collie__shm_ring(s, (int)x->chan, from, s->me);
    const unsigned at = x->chan * (unsigned)s->n + (unsigned)from;
    uint32_t cap = (uint32_t)s->map.ring_bytes, *tail = &s->rcvd[at], *head = &s->head_seen[at];
    struct collie__xfer_stripe *st = &x->st[0];
    if (!st->placed) {
        st->skip = skip_before(s, s->rcvd_last[at], *tail);
        st->placed = 1;
    }
    if (*head == *tail)
        *head = atomic_load_explicit(&c->head.value, memory_order_acquire);
    uint32_t avail = *head - *tail;
    if (!avail)
        return COLLIE_OK;
    if (st->skip) {
        uint32_t n = avail < st->skip ? avail : (uint32_t)st->skip;
        *tail += n, st->skip -= n, avail -= n;
    }
    if (!st->skip && st->hdr_done < HDR) {
        size_t n = HDR - st->hdr_done < avail ? HDR - st->hdr_done : avail;
        collie__ring_get(ring, cap, *tail, (unsigned char *)&x->hdr[0] + st->hdr_done, n);
        st->hdr_done += n, *tail += (uint32_t)n, avail -= (uint32_t)n;
        if (st->hdr_done == HDR) {
            collie_status bad = collie__wire_check(comm, x, 0);
            if (bad != COLLIE_OK)
                return bad;
        }
    }
    if (st->hdr_done == HDR && st->done < st->len && avail) {
        size_t n = st->len - st->done < avail ? st->len - st->done : avail;
        collie__ring_get(ring, cap, *tail, x->buf + st->done, n);
        st->done += n, *tail += (uint32_t)n;
    }
    collie__flag_post(&c->tail, *tail);
    if (collie__xfer_stripe_done(x, 0))
        s->rcvd_last[at] = (uint32_t)(HDR + st->len);
    return COLLIE_OK;
}

int collie__shm_xfer_stripes(const collie_comm *comm, int peer, size_t len)
{
    (void)comm, (void)peer, (void)len;
    return 1;
}

collie_status collie__shm_xfer_progress(collie_comm *comm, struct collie__xfer *x)
{
    int local = collie__local_index(comm, x->peer);
    collie_status st = COLLIE_OK;
    if (x->send)
        push(comm, x, local);
    else
        st = pull(comm, x, local);
    if (st == COLLIE_OK && x->left && collie__xfer_stripe_done(x, 0))
        x->left = 0;
    return st;
}

/*
 * A sender waits for its full ring (push() returns only then) to free a batch
 * of room, ROOM_BATCH bytes, before it looks again.  Waiting for the first
 * byte instead, a sender that runs a ring ahead of a slightly slower
 * receiver (a reduce tree's leaf in a loop) read the receiver's tail line on
 * every message, and the receiver's next post of it then missed too.
 * Measured at 2 ranks on the Xeon, a reduce tree of 64-256 bytes in a loop
 * went from 0.15-0.19 to 0.08-0.10 us a call.  More room than the message needs
 * may never come (the receiver may need this sender's next message first),
 * so that wait ends after ROOM_BATCH_WAIT_NS and the sender then takes what
 * room there is.
 */
#define ROOM_BATCH ((uint32_t)16384)
#define ROOM_BATCH_WAIT_NS ((uint64_t)20000)

static collie_status wait_for_room(collie_comm *comm, const struct collie__xfer *x, int peer,
                                   size_t at, uint64_t until_ns)
{
    struct collie__shm *s = comm->shm;
    struct collie__chan *c = collie__shm_chan(s, (int)x->chan, s->me, peer);
    uint32_t cap = (uint32_t)s->map.ring_bytes, sent = s->sent[at];
    uint32_t batch = cap / 4 < ROOM_BATCH ? cap / 4 : ROOM_BATCH;
    uint64_t batch_until = collie__now_ns() + ROOM_BATCH_WAIT_NS;
    if (!until_ns || batch_until < until_ns) {
        collie_status st = collie__flag_wait(comm, &c->tail, sent - cap + batch, peer,
                                             "room in its ring", x->desc, batch_until);
        if (st != COLLIE_OK)
            return st;
    }
    return collie__flag_wait(comm, &c->tail, sent - cap + 1, peer, "room in its ring", x->desc,
                             until_ns);
}

collie_status collie__shm_xfer_wait(collie_comm *comm, const struct collie__xfer *x,
                                    uint64_t until_ns)
{
    struct collie__shm *s = comm->shm;
    int peer = collie__local_index(comm, x->peer);
    size_t at = x->chan * (size_t)s->n + (size_t)peer;
    if (x->send)
        return wait_for_room(comm, x, peer, at, until_ns);
    struct collie__chan *c = collie__shm_chan(s, (int)x->chan, peer, s->me);
    return collie__flag_wait(comm, &c->head, s->rcvd[at] + 1, peer, "its message", x->desc,
                             until_ns);
}
