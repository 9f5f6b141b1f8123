/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm_attach.c - single copies between the ranks of one host.  Linux
 * cross-memory attach (process_vm_readv, _writev) copies between a peer's
 * address space and ours directly: one copy where staging through the
 * window takes two, and no handoff of cache lines between the ranks.
 *
 * Nothing grants it but the kernel's own rule (the ptrace access check):
 * processes of one user may, unless Yama's ptrace_scope is 1 or more (then
 * only an ancestor may) or a seccomp profile forbids the call, as container
 * runtimes' defaults often do.  So it is probed when the segment opens, every
 * rank reading every local peer, and the verdict is agreed on by the whole
 * communicator (shm.c): the cost model then chooses alike everywhere.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "../core/clock.h"
#include "../core/config.h"
#include "../core/log.h"
#include "../reduce/copy.h"
#include "shm.h"
#include "shm_layout.h"

/* What a peer's probe reads first out of this process. */
static const uint64_t probe_word = 0x636f6c6c69652d31ull; /* "collie-1" */

/*
 * Then the block it times the kernel's copy with: 32 KiB, where `direct` and
 * the window come closest at two ranks, and where the call's own cost is a
 * quarter of the time, so the two are told apart.  Read again and again, as
 * a benchmark's loop reads an unchanged buffer (the rates the model was
 * fitted to): a block the owner has just written comes over at a third of
 * that (measured on a Xeon, 2 ranks: 6-8 GB/s, against 25-34).
 */
#define PROBE_BLOCK ((size_t)32 << 10)

/*
 * Each peer is read PROBE_CALLS times and the fastest call kept: the first
 * pays for faulting and the walk of page tables, and a rank preempted in
 * one does not count.
 */
#define PROBE_CALLS 8

void *collie__attach_probe_area(void)
{
    if (!collie__config_int(COLLIE_CFG_CMA))
        return NULL;
    unsigned char *area = aligned_alloc(4096, PROBE_BLOCK);
    if (area) {
        memset(area, 0x5a, PROBE_BLOCK); /* its pages present before a peer reads them */
        memcpy(area, &probe_word, sizeof probe_word);
    }
    return area;
}

/* One call, reading (write 0) or writing; the bytes it copied, or -1 with errno. */
static ssize_t copy_once(int pid, int write, void *mine, uintptr_t remote, size_t n)
{
    struct iovec local = {mine, n}, far = {(void *)remote, n};
    return write ? process_vm_writev(pid, &local, 1, &far, 1, 0)
                 : process_vm_readv(pid, &local, 1, &far, 1, 0);
}

/* The fastest of PROBE_CALLS reads of `pid`'s block at `area` into `block`; UINT64_MAX: failed. */
static uint64_t fastest_block(int pid, uintptr_t area, unsigned char *block)
{
    uint64_t fastest = UINT64_MAX;
    for (int k = 0; block && k < PROBE_CALLS; k++) {
        uint64_t t0 = collie__now_ns();
        if (copy_once(pid, 0, block, area, PROBE_BLOCK) != (ssize_t)PROBE_BLOCK)
            return UINT64_MAX;
        uint64_t t = collie__now_ns() - t0;
        fastest = t < fastest ? t : fastest;
    }
    return fastest;
}

static uint32_t to_u32(uint64_t ns)
{
    return ns == UINT64_MAX ? 0 : ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

int collie__attach_probe(const int32_t *pids, const uint64_t *addrs, int n, int me,
                         uint32_t *call_ns, uint32_t *block_ns)
{
    *call_ns = *block_ns = 0;
    if (!addrs[me])
        return 0;
    unsigned char *block = malloc(PROBE_BLOCK);
    if (block)
        memset(block, 0, PROBE_BLOCK); /* faulted in before any call is timed */
    uint64_t fastest = UINT64_MAX, fastest_copy = UINT64_MAX;
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        for (int k = 0; k < PROBE_CALLS; k++) {
            uint64_t word = 0, t0 = collie__now_ns();
            if (!addrs[r] || copy_once(pids[r], 0, &word, (uintptr_t)addrs[r], sizeof word) !=
                                 (ssize_t)sizeof word) {
                COLLIE_INFO("shm",
                            "cross-memory attach to local rank %d (pid %d) refused: %s; "
                            "collectives stage through shared memory",
                            r, (int)pids[r], addrs[r] ? strerror(errno) : "COLLIE_CMA=0 there");
                free(block);
                return 0;
            }
            uint64_t t = collie__now_ns() - t0;
            fastest = t < fastest ? t : fastest;
            if (word != probe_word) {
                free(block);
                return 0;
            }
        }
        uint64_t copy = fastest_block(pids[r], (uintptr_t)addrs[r], block);
        fastest_copy = copy < fastest_copy ? copy : fastest_copy;
    }
    free(block);
    *call_ns = to_u32(fastest);
    *block_ns = to_u32(fastest_copy); /* 0 without memory: the built-in rate then stands */
    return 1;
}

int collie__attach_ok(const collie_comm *comm) { return comm->shm && comm->shm->attach; }

double collie__attach_call_s(const collie_comm *comm)
{
    return comm->shm && comm->shm->attach ? comm->shm->attach_call_ns * 1e-9 : 0;
}

double collie__attach_beta(const collie_comm *comm)
{
    const struct collie__shm *s = comm->shm;
    if (!s || !s->attach || s->attach_block_ns <= s->attach_call_ns)
        return 0;
    return (double)PROBE_BLOCK / ((s->attach_block_ns - s->attach_call_ns) * 1e-9);
}

/* n bytes between `mine` and `remote` in local rank local_rank, all of them or a failure. */
static collie_status copy_all(collie_comm *comm, int local_rank, int write, unsigned char *mine,
                              uintptr_t remote, size_t n)
{
    const struct collie__shm *s = comm->shm;
    int pid = s->ctl[local_rank].pid, peer = comm->local_to_global[local_rank];
    while (n) {
        ssize_t done = copy_once(pid, write, mine, remote, n);
        if (done > 0) {
            mine += done, remote += (uintptr_t)done, n -= (size_t)done;
            continue;
        }
        if (done < 0 && errno == EINTR)
            continue;
        if (done < 0 && errno == ESRCH)
            return collie__fail(comm, COLLIE_ERR_PEER_LOST,
                                "rank %d (pid %d) exited while rank %d %s its buffer", peer, pid,
                                comm->rank, write ? "wrote into" : "read");
        return collie__fail(comm, COLLIE_ERR_SYSTEM,
                            "process_vm_%sv of %zu bytes at %#lx in rank %d (pid %d): %s (is "
                            "that rank's buffer, or this one's, shorter than the call's count?)",
                            write ? "write" : "read", n, (unsigned long)remote, peer, pid,
                            done < 0 ? strerror(errno) : "nothing copied");
    }
    return COLLIE_OK;
}

/* Whether the kernel's copy from src to dst crawls: dst 1-31 bytes past src modulo 4 KiB (shm.h). */
static int crawls(uintptr_t dst, uintptr_t src) { return ((dst - src) & 4095) - 1 < 31; }

/*
 * The pieces of a copy the kernel would crawl through go by a buffer placed
 * at the peer's address modulo 64 (collie__attach_place), copied from or to
 * ours by collie__copy, fast at any distance.  A piece stays in L2.  A 2 MiB
 * read measured 6.2-7.5 GB/s so, where the crawl ran at 1.6-2.3 and the
 * kernel's copy between placed buffers at 8-9.
 */
#define BOUNCE_PIECE ((size_t)128 << 10)

static collie_status copy(collie_comm *comm, int local_rank, int write, unsigned char *mine,
                          uintptr_t remote, size_t n)
{
    struct collie__shm *s = comm->shm;
    unsigned char *mapped = s->peers ? collie__mem_peer(s->peers, local_rank, remote, n) : NULL;
    atomic_fetch_add_explicit(mapped ? &s->attach_bytes_mapped : &s->attach_bytes_kernel, n,
                              memory_order_relaxed);
    if (mapped) { /* a peer's collie_mem segment: a plain copy, nothing pinned */
        if (write)
            collie__copy(mapped, mine, n);
        else
            collie__copy(mine, mapped, n);
        return COLLIE_OK;
    }
    uintptr_t here = (uintptr_t)mine;
    if (!crawls(write ? remote : here, write ? here : remote))
        return copy_all(comm, local_rank, write, mine, remote, n);
    unsigned char *bounce = collie__scratch(comm, COLLIE_SCRATCH_BOUNCE, BOUNCE_PIECE + 63);
    if (!bounce)
        return comm->failed;
    collie_status st = COLLIE_OK;
    for (size_t off = 0; st == COLLIE_OK && off < n; off += BOUNCE_PIECE) {
        size_t m = n - off < BOUNCE_PIECE ? n - off : BOUNCE_PIECE;
        unsigned char *at = collie__attach_place(bounce, remote + off);
        if (write)
            collie__copy(at, mine + off, m);
        st = copy_all(comm, local_rank, write, at, remote + off, m);
        if (!write && st == COLLIE_OK)
            collie__copy(mine + off, at, m);
    }
    return st;
}

collie_status collie__attach_read(collie_comm *comm, int local_rank, void *dst, uintptr_t remote,
                                  size_t n)
{
    return copy(comm, local_rank, 0, dst, remote, n);
}

collie_status collie__attach_write(collie_comm *comm, int local_rank, uintptr_t remote,
                                   const void *src, size_t n)
{
    return copy(comm, local_rank, 1, (unsigned char *)(uintptr_t)src, remote, n);
}
