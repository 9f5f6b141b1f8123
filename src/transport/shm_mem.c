/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm_mem.c - memory that the ranks of a host map from each other
 * (collie_mem_alloc, as NCCL's ncclMemAlloc).  Each segment is a memfd of
 * its own; each process keeps one table of its live segments, itself a
 * memfd that its peers map.  A single copy whose peer buffer lies in such a
 * segment is a plain copy through the peer's mapping, where cross-memory
 * attach has the kernel pin every 4 KiB page it reads: about half the
 * speed.
 *
 * The table has one writer, this process under a mutex, and readers in
 * other processes: a sequence counter, odd while the table changes; a
 * reader that sees it odd or moved reads again.  A peer's buffer in a call
 * cannot be freed during that call (the user may not), so the entry a
 * reader finds for it is current.  Serials tell a segment from a later one
 * at the same address; the inode, checked when a peer opens the memfd
 * through /proc, tells the file from another that took its number.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../core/log.h"
#include "../core/segment.h"
#include "collie.h"
#include "shm.h"

#define TABLE_MAGIC 0x636f6c6c6d656d31ull /* "collmem1" */
#define TABLE_ENTRIES 255
#define READ_TRIES 1000 /* a table that keeps changing is read through the kernel instead */

struct mem_entry {
    _Atomic uint64_t serial; /* 0: none */
    _Atomic uint64_t base, length, ino;
    _Atomic int64_t fd;
};

struct mem_table {
    _Atomic uint32_t seq;  /* odd while the writer changes the entries */
    _Atomic uint32_t used; /* entries [0, used) are live */
    uint64_t magic;
    struct mem_entry e[TABLE_ENTRIES];
};

/* What this process allocated, for collie_mem_free. */
struct segment {
    struct segment *next;
    struct collie__seg seg;
    uint64_t serial;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct mem_table *table; /* NULL until the first communicator or segment asks */
static struct collie__seg table_seg = {.fd = -1};
static int table_refused; /* the kernel refused it once: not tried again */
static struct segment *segments;
static uint64_t next_serial = 1;
static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;

/*
 * A forked child shares the table's pages with its parent (MAP_SHARED):
 * it must never write them.  It forgets the table; its inherited segments
 * stay its memory (shared with the parent, as any MAP_SHARED mapping) and
 * may still be freed, but are no longer registered.
 */
static void forget_table_in_child(void)
{
    collie__seg_close(&table_seg);
    table = NULL;
    pthread_mutex_init(&lock, NULL);
}

static void install_fork_handler(void) { pthread_atfork(NULL, NULL, forget_table_in_child); }

/* Under the lock: the table, created on first need; NULL when the kernel refused. */
static struct mem_table *own_table(void)
{
    if (table || table_refused)
        return table;
    pthread_once(&fork_handler_once, install_fork_handler);
    int err = collie__seg_create("collie-mem-table", sizeof *table, &table_seg);
    if (err) {
        COLLIE_INFO("shm",
                    "no table of collie_mem segments (%s): peers copy them through the kernel",
                    strerror(err));
        table_refused = 1;
        return NULL;
    }
    table = table_seg.base;
    table->magic = TABLE_MAGIC;
    return table;
}

int collie__mem_table_fd(void)
{
    pthread_mutex_lock(&lock);
    int fd = own_table() ? table_seg.fd : -1;
    pthread_mutex_unlock(&lock);
    return fd;
}

/*
 * Under the lock: entries change between two moves of the counter.  Every
 * store between them is a release store, so none is seen before the odd
 * counter; the reader's loads are acquire loads, so its second look at the
 * counter comes after them (find_entry).  No fences: ThreadSanitizer
 * checks the library and does not model them.
 */
static void table_begin(struct mem_table *t)
{
    atomic_fetch_add_explicit(&t->seq, 1, memory_order_relaxed);
}

static void table_end(struct mem_table *t)
{
    atomic_fetch_add_explicit(&t->seq, 1, memory_order_release);
}

#define PUT(field, v) atomic_store_explicit(&(field), (v), memory_order_release)
#define GET(field) atomic_load_explicit(&(field), memory_order_acquire)

static void entry_copy(struct mem_entry *to, const struct mem_entry *from)
{
    PUT(to->serial, GET(from->serial));
    PUT(to->base, GET(from->base));
    PUT(to->length, GET(from->length));
    PUT(to->ino, GET(from->ino));
    PUT(to->fd, GET(from->fd));
}

/* Under the lock: records a segment in the table, if there is one with room. */
static void table_add(const struct segment *g)
{
    struct mem_table *t = own_table();
    if (!t)
        return;
    uint32_t used = atomic_load_explicit(&t->used, memory_order_relaxed);
    if (used == TABLE_ENTRIES) {
        COLLIE_INFO("shm",
                    "%d collie_mem segments live: a further one is copied through the kernel",
                    TABLE_ENTRIES);
        return;
    }
    struct mem_entry *e = &t->e[used];
    table_begin(t);
    PUT(e->serial, g->serial);
    PUT(e->base, (uint64_t)(uintptr_t)g->seg.base);
    PUT(e->length, g->seg.bytes);
    PUT(e->ino, g->seg.ino);
    PUT(e->fd, g->seg.fd);
    PUT(t->used, used + 1);
    table_end(t);
}

/* Under the lock: takes a segment's entry out, the last one moving into its place. */
static void table_remove(uint64_t serial)
{
    struct mem_table *t = table;
    if (!t)
        return;
    uint32_t used = atomic_load_explicit(&t->used, memory_order_relaxed);
    for (uint32_t i = 0; i < used; i++) {
        if (atomic_load_explicit(&t->e[i].serial, memory_order_relaxed) != serial)
            continue;
        table_begin(t);
        entry_copy(&t->e[i], &t->e[used - 1]);
        PUT(t->e[used - 1].serial, 0);
        PUT(t->used, used - 1);
        table_end(t);
        return;
    }
}

collie_status collie_mem_alloc(void **ptr, size_t bytes)
{
    if (!ptr || !bytes)
        return COLLIE_ERR_INVALID_ARG;
    long page = sysconf(_SC_PAGESIZE);
    size_t length = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    struct segment *g = calloc(1, sizeof *g);
    int err = g ? collie__seg_create("collie-mem", length, &g->seg) : ENOMEM;
    if (err) {
        COLLIE_WARN("shm", "collie_mem_alloc of %zu bytes: %s", bytes, strerror(err));
        free(g);
        return err == ENOMEM || err == ENOSPC ? COLLIE_ERR_NOMEM : COLLIE_ERR_SYSTEM;
    }
    pthread_mutex_lock(&lock);
    g->serial = next_serial++;
    g->next = segments;
    segments = g;
    table_add(g);
    pthread_mutex_unlock(&lock);
    *ptr = g->seg.base;
    return COLLIE_OK;
}

collie_status collie_mem_free(void *ptr)
{
    if (!ptr)
        return COLLIE_OK;
    pthread_mutex_lock(&lock);
    struct segment **at = &segments;
    while (*at && (*at)->seg.base != ptr)
        at = &(*at)->next;
    struct segment *g = *at;
    if (g) {
        *at = g->next;
        table_remove(g->serial);
    }
    pthread_mutex_unlock(&lock);
    if (!g)
        return COLLIE_ERR_INVALID_ARG;
    collie__seg_close(&g->seg);
    free(g);
    return COLLIE_OK;
}

/*
 * A peer's side, per communicator: its table, mapped on first need, and up
 * to PEER_MAPS of its segments mapped here.
 */
#define PEER_MAPS 8

struct collie__peer_mem {
    int pid, table_fd; /* table_fd < 0: the peer has no table */
    int broken;        /* its table could not be mapped: not tried again */
    const struct mem_table *table;
    struct peer_map {
        uint64_t serial, base, length;
        unsigned char *local; /* NULL: free */
    } map[PEER_MAPS];
    unsigned next; /* the map replaced when all are taken */
};

struct collie__peer_mem *collie__mem_peers(int n, const int32_t *pids, const int32_t *table_fds)
{
    struct collie__peer_mem *p = calloc((size_t)n, sizeof *p);
    for (int r = 0; p && r < n; r++) {
        p[r].pid = pids[r];
        p[r].table_fd = table_fds[r];
    }
    return p;
}

static void unmap_one(struct peer_map *m)
{
    if (m->local)
        munmap(m->local, m->length);
    m->local = NULL;
}

void collie__mem_peers_close(struct collie__peer_mem *p, int n)
{
    for (int r = 0; p && r < n; r++) {
        for (int k = 0; k < PEER_MAPS; k++)
            unmap_one(&p[r].map[k]);
        if (p[r].table)
            munmap((void *)(uintptr_t)p[r].table, sizeof *p[r].table);
    }
    free(p);
}

static const struct mem_table *peer_table(struct collie__peer_mem *p)
{
    if (p->table || p->broken || p->table_fd < 0)
        return p->table;
    struct collie__seg seg;
    int err = collie__seg_open_peer(p->pid, p->table_fd, &seg);
    if (!err && seg.file_size != sizeof *p->table) {
        collie__seg_close(&seg);
        err = EBADMSG; /* not a table of this version */
    }
    if (!err)
        err = collie__seg_map(&seg, sizeof *p->table, 0);
    if (!err && ((const struct mem_table *)seg.base)->magic != TABLE_MAGIC) {
        collie__seg_close(&seg);
        err = EBADMSG; /* not a table of this version */
    }
    if (err) {
        COLLIE_INFO("shm",
                    "pid %d's table of collie_mem segments cannot be mapped (%s): its segments "
                    "are copied through the kernel",
                    p->pid, strerror(err));
        p->broken = 1;
        return NULL;
    }
    return p->table = seg.base;
}

/* The entry of the peer's table that holds [remote, remote + n), read whole; 0 when none. */
static int find_entry(const struct mem_table *t, uintptr_t remote, size_t n, struct mem_entry *out)
{
    for (int tries = 0; tries < READ_TRIES; tries++) {
        uint32_t seq = atomic_load_explicit(&t->seq, memory_order_acquire);
        if (seq & 1)
            continue;
        int found = 0;
        uint32_t used = GET(t->used);
        for (uint32_t i = 0; i < used && i < TABLE_ENTRIES && !found; i++) {
            const struct mem_entry *e = &t->e[i];
            uint64_t base = GET(e->base), length = GET(e->length);
            if (remote < base || remote - base > length || n > length - (remote - base))
                continue;
            entry_copy(out, e);
            found = 1;
        }
        if (atomic_load_explicit(&t->seq, memory_order_relaxed) == seq)
            return found;
    }
    return 0;
}

size_t collie__mem_table_bytes(void) { return sizeof(struct mem_table); }

int collie__mem_table_find(const void *bytes, uintptr_t remote, size_t n, uint64_t *base,
                           uint64_t *length)
{
    struct mem_entry e;
    if (!find_entry(bytes, remote, n, &e))
        return 0;
    *base = atomic_load_explicit(&e.base, memory_order_relaxed);
    *length = atomic_load_explicit(&e.length, memory_order_relaxed);
    return 1;
}

/* Whether the peer's table still holds a segment of this serial. */
static int still_live(const struct mem_table *t, uint64_t serial)
{
    uint32_t used = atomic_load_explicit(&t->used, memory_order_relaxed);
    for (uint32_t i = 0; i < used && i < TABLE_ENTRIES; i++)
        if (atomic_load_explicit(&t->e[i].serial, memory_order_relaxed) == serial)
            return 1;
    return 0;
}

/* Maps the peer's segment of entry e into a free (or freed) map; NULL when it cannot. */
static struct peer_map *map_segment(struct collie__peer_mem *p, const struct mem_table *t,
                                    const struct mem_entry *e)
{
    struct peer_map *m = NULL;
    for (int k = 0; k < PEER_MAPS; k++) /* segments the peer has freed since */
        if (p->map[k].local && !still_live(t, p->map[k].serial))
            unmap_one(&p->map[k]);
    for (int k = 0; k < PEER_MAPS && !m; k++)
        if (!p->map[k].local)
            m = &p->map[k];
    if (!m) {
        m = &p->map[p->next++ % PEER_MAPS];
        unmap_one(m);
    }
    uint64_t length = atomic_load_explicit(&e->length, memory_order_relaxed);
    struct collie__seg seg;
    if (collie__seg_open_peer(p->pid, atomic_load_explicit(&e->fd, memory_order_relaxed), &seg))
        return NULL;
    if (seg.ino != atomic_load_explicit(&e->ino, memory_order_relaxed) || length > SIZE_MAX) {
        collie__seg_close(&seg);
        return NULL;
    }
    if (collie__seg_map(&seg, (size_t)length, 1))
        return NULL;
    unsigned char *at = seg.base;
    *m = (struct peer_map){.serial = atomic_load_explicit(&e->serial, memory_order_relaxed),
                           .base = atomic_load_explicit(&e->base, memory_order_relaxed),
                           .length = length,
                           .local = at};
    return m;
}

unsigned char *collie__mem_peer(struct collie__peer_mem *peers, int r, uintptr_t remote, size_t n)
{
    struct collie__peer_mem *p = &peers[r];
    const struct mem_table *t = peer_table(p);
    struct mem_entry e;
    if (!t || !find_entry(t, remote, n, &e))
        return NULL;
    uint64_t serial = atomic_load_explicit(&e.serial, memory_order_relaxed);
    struct peer_map *m = NULL;
    for (int k = 0; k < PEER_MAPS && !m; k++)
        if (p->map[k].local && p->map[k].serial == serial)
            m = &p->map[k];
    if (!m)
        m = map_segment(p, t, &e);
    return m ? m->local + (remote - m->base) : NULL;
}
