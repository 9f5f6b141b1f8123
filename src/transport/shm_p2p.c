/*
 * shm_p2p.c - send/recv between ranks of one host: a byte ring per ordered
 * pair, its head advanced by the sender and its tail by the receiver.  Each
 * message starts with a small header so the receiver can check it gets what
 * it asked for before it writes a byte of the user's buffer.
 */
#include <string.h>

#include "../core/comm.h"
#include "shm.h"
#include "shm_layout.h"
#include "transport.h"

#define MSG_MAGIC 0x434c5032u /* "CLP2" */

struct msg_header {
    uint32_t magic;
    uint32_t dtype;
    uint64_t count;
};

static collie_status push(collie_comm *comm, int to, const unsigned char *src, size_t len)
{
    struct collie__shm *s = comm->shm;
    struct collie__chan *c = collie__shm_chan(s, COLLIE_SHM_CH_USER, s->me, to);
    unsigned char *ring = collie__shm_ring(s, COLLIE_SHM_CH_USER, s->me, to);
    uint32_t cap = (uint32_t)s->map.ring_bytes, head = s->sent[COLLIE_SHM_CH_USER * s->n + to];
    const size_t total = len;
    while (len) {
        uint32_t tail = atomic_load_explicit(&c->tail.value, memory_order_acquire);
        uint32_t room = cap - (head - tail);
        if (!room) {
            collie_status st = collie__flag_wait(comm, &c->tail, head - cap + 1, to,
                                                 "room in its receive ring");
            if (st != COLLIE_OK)
                return st;
            continue;
        }
        /* Post in quarter-ring pieces so the receiver starts copying early. */
        size_t n = len < room ? len : room;
        if (n > cap / 4)
            n = cap / 4;
        collie__ring_put(ring, cap, head, src, n);
        head += (uint32_t)n;
        src += n;
        len -= n;
        collie__flag_post(&c->head, head);
    }
    s->sent[COLLIE_SHM_CH_USER * s->n + to] = head;
    collie__count_sent(comm, total);
    return COLLIE_OK;
}

static collie_status pull(collie_comm *comm, int from, unsigned char *dst, size_t len)
{
    struct collie__shm *s = comm->shm;
    struct collie__chan *c = collie__shm_chan(s, COLLIE_SHM_CH_USER, from, s->me);
    const unsigned char *ring = collie__shm_ring(s, COLLIE_SHM_CH_USER, from, s->me);
    uint32_t cap = (uint32_t)s->map.ring_bytes, tail = s->rcvd[COLLIE_SHM_CH_USER * s->n + from];
    while (len) {
        uint32_t head = atomic_load_explicit(&c->head.value, memory_order_acquire);
        uint32_t avail = head - tail;
        if (!avail) {
            collie_status st = collie__flag_wait(comm, &c->head, tail + 1, from, "its message");
            if (st != COLLIE_OK)
                return st;
            continue;
        }
        size_t n = len < avail ? len : avail;
        collie__ring_get(ring, cap, tail, dst, n);
        tail += (uint32_t)n;
        dst += n;
        len -= n;
        collie__flag_post(&c->tail, tail);
    }
    s->rcvd[COLLIE_SHM_CH_USER * s->n + from] = tail;
    return COLLIE_OK;
}

static collie_status shm_send(collie_comm *comm, int peer, const void *buf,
                              const struct collie__op_desc *desc)
{
    int to = collie__local_index(comm, peer);
    struct msg_header h = {MSG_MAGIC, desc->dtype, desc->count};
    collie_status st = push(comm, to, (const unsigned char *)&h, sizeof h);
    if (st != COLLIE_OK)
        return st;
    return push(comm, to, buf, desc->count * collie__dtype_size(desc->dtype));
}

static collie_status shm_recv(collie_comm *comm, int peer, void *buf,
                              const struct collie__op_desc *desc)
{
    int from = collie__local_index(comm, peer);
    struct msg_header h;
    collie_status st = pull(comm, from, (unsigned char *)&h, sizeof h);
    if (st != COLLIE_OK)
        return st;
    if (h.magic != MSG_MAGIC)
        return collie__fail(comm, COLLIE_ERR_INTERNAL,
                            "rank %d's ring from rank %d lost framing (magic %#x)", comm->rank,
                            peer, h.magic);
    if (h.count != desc->count || h.dtype != desc->dtype)
        return collie__fail(comm, COLLIE_ERR_MISMATCH,
                            "rank %d called recv(count=%llu, %s) but rank %d sent "
                            "(count=%llu, %s)",
                            comm->rank, (unsigned long long)desc->count,
                            collie__dtype_name(desc->dtype), peer, (unsigned long long)h.count,
                            collie__dtype_name((int)h.dtype));
    return pull(comm, from, buf, desc->count * collie__dtype_size(desc->dtype));
}

const struct collie__transport collie__shm_transport = {
    .name = "shm",
    .send = shm_send,
    .recv = shm_recv,
    .stripes = collie__shm_xfer_stripes,
    .progress = collie__shm_xfer_progress,
};
