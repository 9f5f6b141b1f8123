/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm_keep.c - the host segments of finalized communicators, kept mapped
 * for the next communicator of the same ranks (a dup, a split made again).
 * A fresh segment costs its creation little but its pages much: each rank
 * maps the rings it uses and every rank's slot heads into its page tables
 * (shm.c's populate()), a few MiB a rank, the kernel allocating and zeroing
 * each page on its first touch, and unmaps them at finalize.  Measured at 8
 * ranks on 2 vCPUs, that was most of a split's 41 ms; a kept segment's
 * pages are allocated and in every rank's page tables already.
 *
 * Which segment a new communicator may take is decided from what its ranks
 * exchange when it opens (shm.c): one that every local rank kept, from a
 * communicator of the same processes in the same order.  Every one of
 * them has finalized it, so nobody touches it until the new one runs.  The
 * keep lives while the process has a communicator open: finalizing the last
 * unmaps everything, so a process that is done holds nothing.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "../core/config.h"
#include "shm_layout.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct collie__shm_kept keep[COLLIE__SHM_KEEP_MAX]; /* oldest first */
static int kept;                                           /* entries [0, kept) */
static int live; /* communicators of this process with a segment open */
static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;

/*
 * A forked child's pids differ from every kept segment's, so it could never
 * reuse one; it forgets them (they are its parent's) and a lock that some
 * other thread may have held at the fork.
 */
static void forget_in_child(void)
{
    pthread_mutex_init(&lock, NULL);
    kept = live = 0;
}

static void install_fork_handler(void) { pthread_atfork(NULL, NULL, forget_in_child); }

static void unmap(const struct collie__shm_kept *k) { munmap(k->base, k->map.total); }

/* COLLIE_SHM_KEEP, within [0, COLLIE__SHM_KEEP_MAX]. */
static int keep_limit(void)
{
    long long n = collie__config_int(COLLIE_CFG_SHM_KEEP);
    return n < 0 ? 0 : n > COLLIE__SHM_KEEP_MAX ? COLLIE__SHM_KEEP_MAX : (int)n;
}

int collie__shm_keep_take(const struct collie__shm_map *map, struct collie__shm_kept *out)
{
    int taken = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < kept;) {
        if (memcmp(&keep[i].map, map, sizeof *map) != 0) {
            i++;
            continue;
        }
        out[taken++] = keep[i];
        memmove(&keep[i], &keep[i + 1], (size_t)(kept - i - 1) * sizeof *keep);
        kept--;
    }
    pthread_mutex_unlock(&lock);
    return taken;
}

/* Under the lock: keeps k as the newest, unmapping the oldest beyond the limit. */
static void give(const struct collie__shm_kept *k)
{
    int limit = live > 0 ? keep_limit() : 0;
    if (limit == 0) {
        unmap(k);
        return;
    }
    while (kept >= limit) {
        unmap(&keep[0]);
        memmove(&keep[0], &keep[1], (size_t)(kept - 1) * sizeof *keep);
        kept--;
    }
    keep[kept++] = *k;
}

void collie__shm_keep_return(const struct collie__shm_kept *k)
{
    pthread_mutex_lock(&lock);
    give(k);
    pthread_mutex_unlock(&lock);
}

void collie__shm_keep_opened(void)
{
    pthread_once(&fork_handler_once, install_fork_handler);
    pthread_mutex_lock(&lock);
    live++;
    pthread_mutex_unlock(&lock);
}

void collie__shm_keep_closed(const struct collie__shm_kept *k)
{
    pthread_mutex_lock(&lock);
    if (live > 0)
        live--;
    if (k)
        give(k);
    while (live == 0 && kept > 0)
        unmap(&keep[--kept]);
    pthread_mutex_unlock(&lock);
}
