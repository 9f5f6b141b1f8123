/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm.h - what the algorithms (src/coll/) see of the shared-memory
 * transport: the staging "window" that host-local algorithms work on.  The
 * transport itself (its table, collie__shm_transport) is opened and driven
 * through transport.h like any other.
 *
 * The window gives each local rank two staging buffers ("slots") of
 * collie__win_bytes() bytes, used alternately by successive rounds.  A round
 * is: write into your own slot, collie__win_sync(), then read any slot.
 * Because every round syncs all ranks between writing and reading, a slot is
 * free again two rounds later with no further waiting.  Which buffer is whose
 * may change from round to round (collie__win_exchange()), alike on every
 * rank; collie__win_slot() says.
 */
#ifndef COLLIE_SHM_H
#define COLLIE_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "../core/comm.h"

/*
 * Publishes this rank's descriptor of the collective about to run; the next
 * collie__win_sync() compares it with every peer's (COLLIE_ERR_MISMATCH).
 */
void collie__shm_begin(collie_comm *comm, const struct collie__op_desc *desc);

/* Bytes of one staging slot. */
size_t collie__win_bytes(const collie_comm *comm);

/*
 * Bytes of the ring each ordered pair of a host's `local_size` ranks sends
 * its messages through, one per channel: COLLIE_P2P_BUFFER's, halved while
 * all of a host's rings would exceed their bound (the segment is planned so).
 */
size_t collie__shm_ring_bytes(int local_size);

/*
 * Starts a staging round whose slots hold `bytes` each (at most
 * collie__win_bytes()); returns the parity (0 or 1) of the slots it uses.
 * A round of a few KiB is placed elsewhere in its slots than the rounds
 * before it (shm.c says why): collie__win_slot() then points there.
 */
unsigned collie__win_round(collie_comm *comm, size_t bytes);

/*
 * collie__win_round() for an exchange: a round in which every local rank
 * writes its slot and reads all of each other's slot, as far as it wrote it.
 * At 2 ranks the slots of a parity change hands each time it comes round, in
 * place (shm.c says why); otherwise it is collie__win_round().
 */
unsigned collie__win_exchange(collie_comm *comm, size_t bytes);

/* Local rank r's slot of the given parity, as the round of that parity placed it. */
void *collie__win_slot(const collie_comm *comm, int local_rank, unsigned parity);

/* Posts this rank's progress and waits until every local rank has posted as much. */
collie_status collie__win_sync(collie_comm *comm);

/*
 * Data that rides with a sync, for calls this small: up to
 * COLLIE__WIN_CARRY bytes written at collie__win_carry() before
 * collie__win_sync() are read by every local rank, after it, at
 * collie__win_carried(comm, r).  They share the cache line of the sync's
 * flag, so a peer gets both in one trip where a slot costs a second one.
 * Valid until the sync after next; uses no slot and no round.
 */
#define COLLIE__WIN_CARRY 24

/*
 * A pair's ring keeps a loop of messages of 512 B to a quarter of this in
 * its first COLLIE__RING_HOT_BYTES, in the cores' first-level caches
 * (shm_xfer.c); larger ones stream through the whole ring.
 */
#define COLLIE__RING_HOT_BYTES (16u << 10)
void *collie__win_carry(collie_comm *comm);
const void *collie__win_carried(const collie_comm *comm, int local_rank);

/*
 * Single-copy reads (shm_attach.c): whether this communicator's ranks read
 * each other's memory directly, probed when the segment opened and alike on
 * every rank (so the cost model chooses alike).
 */
int collie__attach_ok(const collie_comm *comm);

/*
 * Seconds of one single-copy system call on this host, the median of what
 * the communicator's ranks measured when the segment opened (alike on every
 * rank); 0 where single copies are off.
 */
double collie__attach_call_s(const collie_comm *comm);

/*
 * Bytes per second of a single copy beside its call, from the same probe:
 * the kernel's copy of a 32 KiB block of a peer's, read again and again, the
 * medians of the ranks' fastest reads; 0 where single copies are off or it
 * was not measured.
 */
double collie__attach_beta(const collie_comm *comm);

/*
 * Copies n bytes at `remote` in local rank `local_rank`'s address space into
 * dst, in one copy by the kernel.  COLLIE_OK, or fails the communicator:
 * PEER_LOST when the rank has exited, SYSTEM naming the error otherwise.
 */
collie_status collie__attach_read(collie_comm *comm, int local_rank, void *dst, uintptr_t remote,
                                  size_t n);

/* The same from src into `remote` in local rank local_rank's address space. */
collie_status collie__attach_write(collie_comm *comm, int local_rank, uintptr_t remote,
                                   const void *src, size_t n);

/*
 * The kernel copies with `rep movsb`, which crawls (1.6-2.3 GB/s against
 * 8-11 on this machine's AMD EPYC) when the destination lies 1-31 bytes
 * past the source modulo 4 KiB, as glibc's memcpy does (reduce/copy.h).
 * Where the caller chooses a buffer's address, this one in [at, at + 63]
 * lies a multiple of 64 bytes from `far`, the peer's address it is copied
 * from or to, which never crawls: reserve 63 bytes more for it.
 */
static inline unsigned char *collie__attach_place(unsigned char *at, uintptr_t far)
{
    return at + ((far - (uintptr_t)at) & 63);
}

/*
 * Memory the host's ranks map from each other (shm_mem.c; the public
 * collie_mem_alloc and collie_mem_free are defined there): this process's
 * table of its segments, for its peers to open through /proc; -1 when none.
 */
int collie__mem_table_fd(void);

/*
 * The local peers' tables and the segments of theirs this rank has mapped,
 * for one communicator: n peers' pids and table fds (-1: none).  NULL when
 * out of memory (every copy then goes through the kernel).
 */
struct collie__peer_mem;
struct collie__peer_mem *collie__mem_peers(int n, const int32_t *pids, const int32_t *table_fds);
void collie__mem_peers_close(struct collie__peer_mem *peers, int n);

/*
 * Where [remote, remote + n) of local peer r lies in this process, when it
 * lies within one of the peer's segments, mapped here on first use; NULL
 * when it does not (or cannot be mapped): the kernel copies it.
 */
unsigned char *collie__mem_peer(struct collie__peer_mem *peers, int r, uintptr_t remote, size_t n);

/*
 * The lookup collie__mem_peer makes in a peer's table, over `bytes` (what
 * a peer wrote, collie__mem_table_bytes() of them, 8-byte aligned):
 * 1 and the base and length of the entry that holds [remote, remote + n),
 * or 0.  For fuzz/mem_table.c: a peer writes the table.
 */
size_t collie__mem_table_bytes(void);
int collie__mem_table_find(const void *bytes, uintptr_t remote, size_t n, uint64_t *base,
                           uint64_t *length);

/*
 * For shm.c's set-up: what peers' probes read here, to free() once every
 * local rank has probed (NULL when COLLIE_CMA=0, or without memory).
 */
void *collie__attach_probe_area(void);

/*
 * Whether rank `me` of n reads every other's probe word (addrs[r] 0: that
 * rank declines); where it does, *call_ns is the fastest such read's time
 * and *block_ns the fastest read of the area's block (0: none).
 */
int collie__attach_probe(const int32_t *pids, const uint64_t *addrs, int n, int me,
                         uint32_t *call_ns, uint32_t *block_ns);

#endif
