/*
 * shm_xfer.c - collective messages (xfer.h) between ranks of one host: the
 * collectives' channel of per-pair byte rings, moved without blocking.  The
 * header and the payload travel as one byte stream; the receiver checks the
 * header before it copies payload out of the ring.
 */
#include <string.h>

#include "../core/comm.h"
#include "shm.h"
#include "shm_layout.h"
#include "transport.h"
#include "xfer.h"

#define HDR sizeof(struct collie__wire)

static void push(collie_comm *comm, struct collie__xfer *x, int to)
{
    struct collie__shm *s = comm->shm;
    struct collie__chan *c = collie__shm_chan(s, COLLIE_SHM_CH_COLL, s->me, to);
    unsigned char *ring = collie__shm_ring(s, COLLIE_SHM_CH_COLL, s->me, to);
    uint32_t cap = (uint32_t)s->map.ring_bytes, *head = &s->sent[COLLIE_SHM_CH_COLL * s->n + to];
    struct collie__xfer_stripe *st = &x->st[0];
    uint32_t room = cap - (*head - atomic_load_explicit(&c->tail.value, memory_order_acquire));
    if (!room)
        return;
    if (st->hdr_done < HDR) {
        size_t n = HDR - st->hdr_done < room ? HDR - st->hdr_done : room;
        collie__ring_put(ring, cap, *head, (const unsigned char *)&x->hdr[0] + st->hdr_done, n);
        st->hdr_done += n, *head += (uint32_t)n, room -= (uint32_t)n;
    }
    if (st->hdr_done == HDR && st->done < st->len && room) {
        size_t n = st->len - st->done < room ? st->len - st->done : room;
        collie__ring_put(ring, cap, *head, x->buf + st->done, n);
        st->done += n, *head += (uint32_t)n;
        collie__count_sent(comm, n);
    }
    collie__flag_post(&c->head, *head);
}

static collie_status pull(collie_comm *comm, struct collie__xfer *x, int from)
{
    struct collie__shm *s = comm->shm;
    struct collie__chan *c = collie__shm_chan(s, COLLIE_SHM_CH_COLL, from, s->me);
    const unsigned char *ring = collie__shm_ring(s, COLLIE_SHM_CH_COLL, from, s->me);
    uint32_t cap = (uint32_t)s->map.ring_bytes, *tail = &s->rcvd[COLLIE_SHM_CH_COLL * s->n + from];
    struct collie__xfer_stripe *st = &x->st[0];
    uint32_t avail = atomic_load_explicit(&c->head.value, memory_order_acquire) - *tail;
    if (!avail)
        return COLLIE_OK;
    if (st->hdr_done < HDR) {
        size_t n = HDR - st->hdr_done < avail ? HDR - st->hdr_done : avail;
        collie__ring_get(ring, cap, *tail, (unsigned char *)&x->hdr[0] + st->hdr_done, n);
        st->hdr_done += n, *tail += (uint32_t)n, avail -= (uint32_t)n;
        if (st->hdr_done == HDR) {
            collie__flag_post(&c->tail, *tail);
            collie_status bad = collie__xfer_check(comm, x, 0);
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

collie_status collie__shm_xfer_wait(collie_comm *comm, const struct collie__xfer *x)
{
    struct collie__shm *s = comm->shm;
    int peer = collie__local_index(comm, x->peer);
    if (x->send) {
        struct collie__chan *c = collie__shm_chan(s, COLLIE_SHM_CH_COLL, s->me, peer);
        uint32_t head = s->sent[COLLIE_SHM_CH_COLL * s->n + peer];
        return collie__flag_wait(comm, &c->tail, head - (uint32_t)s->map.ring_bytes + 1, peer,
                                 "room in its ring");
    }
    struct collie__chan *c = collie__shm_chan(s, COLLIE_SHM_CH_COLL, peer, s->me);
    return collie__flag_wait(comm, &c->head, s->rcvd[COLLIE_SHM_CH_COLL * s->n + peer] + 1, peer,
                             "its message");
}
