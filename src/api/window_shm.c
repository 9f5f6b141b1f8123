/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_shm.c - a window's mailboxes for the in-neighbours on its own host,
 * in shared memory: each rank's segment (a memfd, which peers reach through
 * /proc and map; nothing is left behind in /dev/shm) holds its published
 * value and one box per local in-neighbour, which that neighbour writes
 * directly, under the box's lock, without the owner or its thread.
 *
 * A box is a 64-byte header (lock, version, weight) and the data.  The lock
 * is held only to copy or add one deposit; a waiter spins briefly, then
 * yields and naps, and fails with TIMEOUT after COLLIE_TIMEOUT (a rank that
 * died holding a lock cannot hang its neighbours).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../core/segment.h"
#include "api.h"
#include "window.h"

#define SEG_MAGIC 0x57534731u /* "WSG1" */
#define SPINS 64

struct seg_header {
    uint32_t magic, nboxes;
    uint64_t bytes;
    unsigned char pad[48];
};
_Static_assert(sizeof(struct seg_header) == 64, "one cache line");

struct collie__win_shm {
    unsigned char *base; /* this rank's segment */
    size_t size;
    unsigned char **peer; /* by global rank: a local neighbour's segment, mapped */
    size_t *peer_size;
    int *slot;    /* by in-neighbour: its box here, or -1 (another host) */
    int *slot_at; /* by out-neighbour: this rank's box there, or -1 */
};

static size_t box_bytes(size_t bytes)
{
    return sizeof(struct collie__win_box) + ((bytes + 63) & ~(size_t)63);
}

/* Box b of a segment: 0 is the published value, 1.. the in-neighbours'. */
static struct collie__win_box *box_of(unsigned char *base, size_t bytes, int b)
{
    return (struct collie__win_box *)(base + sizeof(struct seg_header) +
                                      (size_t)b * box_bytes(bytes));
}

static int local(const collie_win *win, int r)
{
    return collie_host_of(win->comm, r) == collie_host_index(win->comm);
}

/* Where in-neighbour rank `from` writes in rank `to`'s segment: its rank among to's local in-neighbours. */
static int slot_in(const collie_win *win, const collie_topology *topo, int to, int from,
                   int *scratch)
{
    int n = collie_topology_in(topo, to, scratch, NULL, win->comm->size), s = 0;
    for (int k = 0; k < n; k++) {
        if (scratch[k] == from)
            return s;
        s += local(win, scratch[k]);
    }
    return -1;
}

/* Maps global rank r's segment, given its pid and fd. */
static collie_status map_peer(collie_win *win, int r, int pid, int fd)
{
    struct collie__win_shm *s = win->shm;
    struct collie__seg seg;
    int err = collie__seg_open_peer(pid, fd, &seg);
    if (err) {
        char path[COLLIE__SEG_PATH_LEN];
        collie__seg_path(pid, fd, path);
        return collie__fail(win->comm, COLLIE_ERR_SYSTEM,
                            "rank %d cannot open rank %d's window segment at %s: %s",
                            win->comm->rank, r, path, strerror(err));
    }
    const struct seg_header *h = NULL;
    if (seg.file_size >= sizeof *h && collie__seg_map(&seg, seg.file_size, 1) == 0)
        h = seg.base;
    if (!h || h->magic != SEG_MAGIC || h->bytes != win->bytes) {
        collie__seg_close(&seg);
        return collie__fail(win->comm, COLLIE_ERR_MISMATCH,
                            "rank %d: rank %d's window segment is not one of this window's "
                            "(%zu bytes of data)",
                            win->comm->rank, r, win->bytes);
    }
    s->peer[r] = seg.base;
    s->peer_size[r] = seg.bytes;
    return COLLIE_OK;
}

/* This rank's segment: the published value and its local in-neighbours' boxes, zeroed. */
static int create(collie_win *win, int nboxes)
{
    struct collie__win_shm *s = win->shm;
    s->size = sizeof(struct seg_header) + (size_t)(nboxes + 1) * box_bytes(win->bytes);
    struct collie__seg seg;
    if (collie__seg_create("collie-window", s->size, &seg) != 0)
        return -1;
    s->base = seg.base;
    *(struct seg_header *)seg.base =
        (struct seg_header){.magic = SEG_MAGIC, .nboxes = (uint32_t)nboxes, .bytes = win->bytes};
    return seg.fd;
}

collie_status collie__win_shm_open(collie_win *win, const collie_topology *topo)
{
    collie_comm *comm = win->comm;
    int n = comm->size;
    struct collie__win_shm *s = calloc(1, sizeof *s);
    win->shm = s;
    int32_t *ids = calloc(2 * (size_t)n, sizeof *ids), *scratch = calloc((size_t)n, sizeof(int));
    if (s) {
        s->peer = calloc((size_t)n, sizeof *s->peer);
        s->peer_size = calloc((size_t)n, sizeof *s->peer_size);
        s->slot = calloc((size_t)win->nin + 1, sizeof *s->slot);
        s->slot_at = calloc((size_t)win->nout + 1, sizeof *s->slot_at);
    }
    if (!s || !ids || !scratch || !s->peer || !s->peer_size || !s->slot || !s->slot_at) {
        free(ids), free(scratch);
        return collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for a window's segment",
                            comm->rank);
    }
    int nboxes = 0;
    for (int d = 0; d < win->nin; d++)
        s->slot[d] = local(win, win->in[d]) ? nboxes++ : -1;
    for (int k = 0; k < win->nout; k++)
        s->slot_at[k] =
            local(win, win->out[k]) ? slot_in(win, topo, win->out[k], comm->rank, scratch) : -1;
    int fd = create(win, nboxes);
    int32_t mine[2] = {(int32_t)getpid(), fd};
    collie_status st = collie_allgather(comm, mine, ids, 2, COLLIE_INT32);
    for (int r = 0; st == COLLIE_OK && r < n; r++)
        if (ids[2 * r + 1] < 0)
            st =
                collie__fail(comm, COLLIE_ERR_SYSTEM,
                             "rank %d could not make its window segment (memfd_create or mmap)", r);
    /* the local neighbours': out-neighbours to deposit into, in-neighbours to get from */
    for (int k = 0; st == COLLIE_OK && k < win->nout; k++)
        if (s->slot_at[k] >= 0 && !s->peer[win->out[k]])
            st = map_peer(win, win->out[k], ids[2 * win->out[k]], ids[2 * win->out[k] + 1]);
    for (int d = 0; st == COLLIE_OK && d < win->nin; d++)
        if (s->slot[d] >= 0 && !s->peer[win->in[d]])
            st = map_peer(win, win->in[d], ids[2 * win->in[d]], ids[2 * win->in[d] + 1]);
    collie_status done = collie_barrier(comm); /* every peer mapped it (or failed) */
    if (fd >= 0)
        close(fd);
    free(ids), free(scratch);
    return st != COLLIE_OK ? st : done;
}

void collie__win_shm_close(collie_win *win)
{
    struct collie__win_shm *s = win->shm;
    if (!s)
        return;
    for (int r = 0; s->peer && r < win->comm->size; r++)
        if (s->peer[r])
            munmap(s->peer[r], s->peer_size[r]);
    if (s->base)
        munmap(s->base, s->size);
    free(s->peer), free(s->peer_size), free(s->slot), free(s->slot_at);
    free(s);
    win->shm = NULL;
}

struct collie__win_box *collie__win_box_published(const collie_win *win)
{
    return box_of(win->shm->base, win->bytes, 0);
}

struct collie__win_box *collie__win_box_in(const collie_win *win, int d)
{
    int b = win->shm->slot[d];
    return b < 0 ? NULL : box_of(win->shm->base, win->bytes, 1 + b);
}

struct collie__win_box *collie__win_box_at(const collie_win *win, int k)
{
    int b = win->shm->slot_at[k];
    return b < 0 ? NULL : box_of(win->shm->peer[win->out[k]], win->bytes, 1 + b);
}

struct collie__win_box *collie__win_box_theirs(const collie_win *win, int d)
{
    return win->shm->slot[d] < 0 ? NULL : box_of(win->shm->peer[win->in[d]], win->bytes, 0);
}

collie_status collie__win_box_lock(collie_win *win, struct collie__win_box *b)
{
    for (int i = 0; i < SPINS; i++)
        if (!atomic_exchange_explicit(&b->lock, 1, memory_order_acquire))
            return COLLIE_OK;
    uint64_t deadline = collie__now_ns() + (uint64_t)(win->comm->timeout_s * 1e9);
    for (int tries = 0;; tries++) {
        if (!atomic_exchange_explicit(&b->lock, 1, memory_order_acquire))
            return COLLIE_OK;
        if (tries < 16) {
            sched_yield();
            continue;
        }
        if (collie__now_ns() > deadline)
            return collie__fail(win->comm, COLLIE_ERR_TIMEOUT,
                                "rank %d waited COLLIE_TIMEOUT=%.1f s for a window box that "
                                "another rank of this host holds (did it die holding it?)",
                                win->comm->rank, win->comm->timeout_s);
        struct timespec nap = {0, 20000};
        nanosleep(&nap, NULL);
    }
}

void collie__win_box_unlock(struct collie__win_box *b)
{
    atomic_store_explicit(&b->lock, 0, memory_order_release);
}
