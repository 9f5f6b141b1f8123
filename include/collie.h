/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * collie.h - the public API of libcollie, collective communication for
 * data-parallel training.
 *
 * Every call that can fail returns a collie_status; collie_strerror() names it
 * and collie_last_error(comm) holds the detail of the last failure (which rank,
 * which peer, what was expected).  Handles are opaque.  A communicator is used
 * by one thread at a time (collie_comm_abort excepted: it may come from any
 * thread).
 *
 * Semantics follow NCCL and MPI: sendbuf == recvbuf means in place; count == 0
 * is a valid no-op (its arguments and this rank's failure are checked, no peer
 * is: another rank's abort reaches the next call that moves data); COLLIE_AVG
 * is the sum divided by the number of ranks
 * (integer division, truncating, for integer types); float16 and bfloat16 are
 * reduced in float32 and rounded once to nearest even; every rank receives
 * bit-identical results.
 */
#ifndef COLLIE_H
#define COLLIE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define COLLIE_API __attribute__((visibility("default")))
#else
#define COLLIE_API
#endif

#define COLLIE_VERSION_MAJOR 0
#define COLLIE_VERSION_MINOR 1
#define COLLIE_VERSION_PATCH 0

typedef struct collie_comm collie_comm;
/* One pending non-blocking operation (collie_iallreduce & co.). */
typedef struct collie_request collie_request;

/*
 * Every status, with the one-line message collie_strerror() returns for it:
 * X(NAME, message).  One table generates the enum, the names and the
 * messages, so they cannot drift apart (libuv's UV_ERRNO_MAP).  Values are
 * stable: new statuses are only ever appended.
 */
#define COLLIE_STATUS_MAP(X)                                                                       \
    X(COLLIE_OK, "success")                                                                        \
    X(COLLIE_ERR_INVALID_ARG, "invalid argument: collie_last_error() names the argument and the "  \
                              "allowed range")                                                     \
    X(COLLIE_ERR_SYSTEM, "a system call failed: collie_last_error() names the call and errno")     \
    X(COLLIE_ERR_TIMEOUT, "timed out waiting for a peer: check that every rank makes the same "    \
                          "calls, or raise COLLIE_TIMEOUT if the job is only slow")                \
    X(COLLIE_ERR_PEER_LOST, "a peer rank exited or became unreachable: look at that rank's "       \
                            "output (collie_last_error() names it)")                               \
    X(COLLIE_ERR_MISMATCH, "ranks called different collectives, or the same one with different "   \
                           "count/dtype/op/root: collie_last_error() shows both sides")            \
    X(COLLIE_ERR_NOMEM, "out of memory")                                                           \
    X(COLLIE_ERR_AUTH, "authentication failed: a peer could not prove it knows COLLIE_TOKEN")      \
    X(COLLIE_ERR_UNSUPPORTED, "not supported by this build or configuration: collie_last_error() " \
                              "says what is missing")                                              \
    X(COLLIE_ERR_INTERNAL, "internal error in collie: please report it with the output of "        \
                           "COLLIE_DEBUG=INFO")                                                    \
    X(COLLIE_ERR_ABORTED, "the communicator was aborted (collie_comm_abort): finalize it and "     \
                          "create a new one")

typedef enum {
#define COLLIE_STATUS_ENUM(name, message) name,
    COLLIE_STATUS_MAP(COLLIE_STATUS_ENUM)
#undef COLLIE_STATUS_ENUM
} collie_status;

typedef enum {
    COLLIE_FLOAT32,
    COLLIE_FLOAT64,
    COLLIE_FLOAT16,
    COLLIE_BFLOAT16,
    COLLIE_INT8,
    COLLIE_UINT8,
    COLLIE_INT32,
    COLLIE_INT64
} collie_dtype;

typedef enum { COLLIE_SUM, COLLIE_PROD, COLLIE_MIN, COLLIE_MAX, COLLIE_AVG } collie_op;

/*
 * Joins the job described by the environment (COLLIE_RANK/SIZE/ADDR as set by
 * `collie run`, or the variables of torchrun, Open MPI's mpirun or Slurm's
 * srun) and returns a communicator over all its ranks in *comm.  Collective:
 * every rank of the job must call it; it waits at most COLLIE_TIMEOUT seconds
 * for the others.  With no job variables at all it makes a one-rank job.
 * On error *comm is set to NULL, nothing is left behind, and the returned
 * status says why (COLLIE_DEBUG=WARN, the default, prints the detail).
 */
COLLIE_API collie_status collie_init(collie_comm **comm);

/*
 * Leaves the job and frees the communicator.  Not collective: peers still
 * waiting on this rank learn that it left (COLLIE_ERR_PEER_LOST) instead of
 * hanging.  NULL is accepted and ignored.
 */
COLLIE_API collie_status collie_finalize(collie_comm *comm);

/* This rank's index in [0, size), or -1 for a NULL communicator. */
COLLIE_API int collie_rank(const collie_comm *comm);
/* Number of ranks in the job, or -1 for a NULL communicator. */
COLLIE_API int collie_size(const collie_comm *comm);
/* This rank's index among the ranks on its host, or -1 for NULL. */
COLLIE_API int collie_local_rank(const collie_comm *comm);
/* Number of ranks on this rank's host, or -1 for NULL. */
COLLIE_API int collie_local_size(const collie_comm *comm);
/* Number of hosts the ranks are on, or -1 for NULL. */
COLLIE_API int collie_host_count(const collie_comm *comm);
/* This rank's host, 0..collie_host_count - 1 (hosts numbered in the order of their lowest rank). */
COLLIE_API int collie_host_index(const collie_comm *comm);
/* The host of any rank of comm, as collie_host_index; -1 for NULL or a rank out of range. */
COLLIE_API int collie_host_of(const collie_comm *comm, int rank);

/* A static, never NULL, one-line description of status and what to do next. */
COLLIE_API const char *collie_strerror(collie_status status);

/*
 * The detail of the last failure on comm (who, which peer, what was expected),
 * or "" if none.  Valid until the next call on comm.  Never NULL; for a NULL
 * comm it describes the last failure of a call without a communicator (collie_init
 * above all) in the calling thread.
 */
COLLIE_API const char *collie_last_error(const collie_comm *comm);

/*
 * What comm has done since collie_init: the collectives and point-to-point
 * calls it completed, and the bytes of this rank's data that other ranks
 * received, once per receiving rank, whichever side moved them: sent over a
 * socket, staged in shared memory for a peer to copy, written into a peer's
 * buffer, or read out of this rank's buffer by a peer.  A ring allreduce of
 * S bytes on n ranks counts 2(n-1)/n S on each.  Payload only: headers and
 * syncs are not counted.  Either output may be NULL.  Returns
 * COLLIE_ERR_INVALID_ARG for a NULL comm and writes nothing then.
 */
COLLIE_API collie_status collie_get_counters(const collie_comm *comm, unsigned long long *ops,
                                             unsigned long long *bytes_sent);

/*
 * Converts count elements of src (src_dtype) into dst (dst_dtype) with the
 * library's own rounding (to nearest even, as its reductions round):
 * float32 to and from float16 and bfloat16, and float32 to float32.  Local:
 * no communicator, no communication.  Returns COLLIE_ERR_UNSUPPORTED for
 * any other pair and COLLIE_ERR_INVALID_ARG for a NULL buffer with count >
 * 0; writes nothing then.  dst and src must not overlap unless both dtypes
 * are float32.
 */
COLLIE_API collie_status collie_convert(void *dst, collie_dtype dst_dtype, const void *src,
                                        collie_dtype src_dtype, size_t count);

/*
 * Memory that the other ranks of this host read and write as their own, as
 * NCCL's ncclMemAlloc: collie_mem_alloc maps `bytes` (rounded up to pages),
 * zeroed and page-aligned, into *ptr, in a shared segment of its own that
 * this host's ranks map when a call first needs it.  A collective whose
 * buffers lie in such memory copies them between the host's ranks with a
 * plain copy where other buffers go through the kernel (cross-memory
 * attach, which pins every 4 KiB page it reads: about half the speed).
 * Any part of it may be given to any call of any communicator; it needs no
 * communicator itself.  The pages are shared (MAP_SHARED): a child forked
 * after it sees and writes the same memory.  Returns COLLIE_ERR_INVALID_ARG
 * for a NULL ptr or 0 bytes, COLLIE_ERR_NOMEM or COLLIE_ERR_SYSTEM when the
 * kernel refuses; writes nothing then.
 */
COLLIE_API collie_status collie_mem_alloc(void **ptr, size_t bytes);

/*
 * Frees what collie_mem_alloc returned (NULL: nothing to do).  No call in
 * flight may still use it.  Returns COLLIE_ERR_INVALID_ARG, freeing
 * nothing, for any pointer collie_mem_alloc did not return.
 */
COLLIE_API collie_status collie_mem_free(void *ptr);

/*
 * Seconds on a monotonic clock, as MPI_Wtime: for measuring intervals
 * within one process (the origin is arbitrary and differs between hosts).
 */
COLLIE_API double collie_wtime(void);

/* The library version, "MAJOR.MINOR.PATCH". Never NULL. */
COLLIE_API const char *collie_version(void);

/*
 * Collectives.  All ranks call them in the same order with the same count,
 * dtype, op and root; otherwise every rank returns COLLIE_ERR_MISMATCH.
 * Invalid arguments return COLLIE_ERR_INVALID_ARG on the calling rank at once,
 * without communicating, and leave the communicator usable.  Any other
 * failure (timeout, lost peer, mismatch) is sticky: later calls return it at
 * once.  A call that returns COLLIE_ERR_INVALID_ARG writes nothing; after any
 * other failure the output buffers' contents are undefined (they may hold
 * partial results), as with MPI and NCCL: results are streamed into them.
 */

/* recvbuf[i] = op over ranks of sendbuf[i], on every rank.  count elements. */
COLLIE_API collie_status collie_allreduce(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                          size_t count, collie_dtype dtype, collie_op op);

/* Copies root's buf to buf on every rank. */
COLLIE_API collie_status collie_broadcast(collie_comm *comm, void *buf, size_t count,
                                          collie_dtype dtype, int root);

/* Like allreduce, but only root's recvbuf is written (others may pass NULL). */
COLLIE_API collie_status collie_reduce(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                       size_t count, collie_dtype dtype, collie_op op, int root);

/*
 * recvbuf (size * sendcount elements) receives every rank's sendbuf in rank
 * order.  In place: sendbuf == recvbuf, or sendbuf == recvbuf + rank*sendcount
 * elements; either way the own block is read from recvbuf.
 */
COLLIE_API collie_status collie_allgather(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                          size_t sendcount, collie_dtype dtype);

/*
 * sendbuf holds size blocks of recvcount elements; rank r receives in recvbuf
 * the reduction of block r over all ranks.  In place: recvbuf == sendbuf
 * (result in the first block, as MPI_IN_PLACE) or recvbuf == sendbuf +
 * rank*recvcount elements (as NCCL).
 */
COLLIE_API collie_status collie_reduce_scatter(collie_comm *comm, const void *sendbuf,
                                               void *recvbuf, size_t recvcount, collie_dtype dtype,
                                               collie_op op);

/* Block j (count elements) of rank i's sendbuf lands in block i of rank j's recvbuf. */
COLLIE_API collie_status collie_alltoall(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                         size_t count, collie_dtype dtype);

/* Returns once every rank has entered the barrier. */
COLLIE_API collie_status collie_barrier(collie_comm *comm);

/*
 * Blocking point-to-point.  A send returns once the message is buffered or
 * delivered; a recv once it has arrived.  Messages between a pair arrive in
 * order; the receiver's count and dtype must match the sender's
 * (COLLIE_ERR_MISMATCH otherwise).  Sending to oneself is an invalid argument.
 */
COLLIE_API collie_status collie_send(collie_comm *comm, const void *buf, size_t count,
                                     collie_dtype dtype, int peer);
COLLIE_API collie_status collie_recv(collie_comm *comm, void *buf, size_t count, collie_dtype dtype,
                                     int peer);

/*
 * Non-blocking operations.  Each takes the blocking call's arguments, then
 * req, and returns at once: the arguments are checked now (INVALID_ARG
 * returns at once, nothing is queued, *req is NULL), the communication
 * happens in the background and *req completes it.
 *
 * - Order: every rank issues the operations of a communicator, blocking and
 *   non-blocking alike, in the same order, and they run in that order.  A
 *   blocking call is its non-blocking form plus a wait.  Point-to-point
 *   requests keep their order per pair and direction, and progress beside
 *   the collectives (an isend never waits for a later collective, nor the
 *   reverse), so exchanges that would deadlock with blocking sends complete.
 * - Buffers belong to collie until the request completes: do not write a send
 *   buffer or read a receive buffer before.
 * - Progress without the caller: threads of the communicator (started at its
 *   first non-blocking call, one for collectives and one for point-to-point,
 *   sleeping when idle, never polling) move the operations while the caller
 *   computes; a caller blocked in collie_wait runs queued collectives itself
 *   (no hand-off between threads on the latency path).  A collective under
 *   64 KiB (4 KiB across hosts) issued while the communicator is busy does
 *   not wake the thread (that costs more than such a call): it starts at the
 *   caller's wait, or within 1 ms.
 * - Errors found later complete the request with the status, make it sticky
 *   on the communicator, and complete every other pending request with it.
 * - Requests may be waited or tested in any order, each exactly once to
 *   completion (that frees it).  collie_finalize completes or fails pending
 *   requests first; they can still be waited on afterwards.
 */
COLLIE_API collie_status collie_iallreduce(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                           size_t count, collie_dtype dtype, collie_op op,
                                           collie_request **req);
COLLIE_API collie_status collie_ibroadcast(collie_comm *comm, void *buf, size_t count,
                                           collie_dtype dtype, int root, collie_request **req);
COLLIE_API collie_status collie_ireduce(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                        size_t count, collie_dtype dtype, collie_op op, int root,
                                        collie_request **req);
COLLIE_API collie_status collie_iallgather(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                           size_t sendcount, collie_dtype dtype,
                                           collie_request **req);
COLLIE_API collie_status collie_ireduce_scatter(collie_comm *comm, const void *sendbuf,
                                                void *recvbuf, size_t recvcount, collie_dtype dtype,
                                                collie_op op, collie_request **req);
COLLIE_API collie_status collie_ialltoall(collie_comm *comm, const void *sendbuf, void *recvbuf,
                                          size_t count, collie_dtype dtype, collie_request **req);
COLLIE_API collie_status collie_ibarrier(collie_comm *comm, collie_request **req);
COLLIE_API collie_status collie_isend(collie_comm *comm, const void *buf, size_t count,
                                      collie_dtype dtype, int peer, collie_request **req);
COLLIE_API collie_status collie_irecv(collie_comm *comm, void *buf, size_t count,
                                      collie_dtype dtype, int peer, collie_request **req);

/*
 * Waits until req completes (within the operation's own timeouts) and
 * returns its status; frees req.  A NULL req returns COLLIE_OK (the
 * request of a failed issue is NULL).
 */
COLLIE_API collie_status collie_wait(collie_request *req);

/*
 * Whether req has completed, without blocking: *done = 1 returns its status
 * and frees req; *done = 0 returns COLLIE_OK and req stays pending.
 */
COLLIE_API collie_status collie_test(collie_request *req, int *done);

/* Waits for all n requests (NULL entries are skipped), frees them, returns the first failure. */
COLLIE_API collie_status collie_waitall(size_t n, collie_request **reqs);

/*
 * Fusion (Horovod's tensor fusion, NCCL's groups): between collie_group_start
 * and collie_group_end, non-blocking calls are held; at collie_group_end
 * every run of consecutive allreduces with one dtype and op is packed, in
 * call order, into buffers of at most COLLIE_FUSION_BYTES (64 MiB; 0: never
 * fuse), and each buffer travels as one allreduce.  What is fused depends
 * only on the calls' order and sizes, never on timing, so every rank fuses
 * alike with no extra message.  On one host the results are bit for bit
 * those of the calls one by one (the window algorithms combine ranks in rank
 * order whatever the size); across hosts the fused size may choose another
 * algorithm, and float sums may then differ in the last bits (as with
 * Horovod's and NCCL's fusion).
 * Each call still has its own request.  Groups nest (the outermost end
 * issues).  A blocking collective inside a group is INVALID_ARG: it would
 * wait for calls that are held.
 */
COLLIE_API collie_status collie_group_start(collie_comm *comm);
COLLIE_API collie_status collie_group_end(collie_comm *comm);

/*
 * Allreduce of float32 data that travels as wire_dtype (COLLIE_FLOAT16 or
 * COLLIE_BFLOAT16: half the bytes) and is reduced in float32 (Horovod's
 * Compression.fp16, PyTorch's fp16_compress_hook): each input is rounded to
 * wire_dtype, the reduction widens to float32 and rounds its result once per
 * message hop.  Error bound, per element, for SUM over n ranks:
 *   |result - exact| <= (n + 1) * u * sum over ranks of |x|,
 * u = 2^-11 for float16, 2^-8 for bfloat16 (AVG: that divided by n).
 * float16 overflows to infinity past 65504 (bfloat16 keeps float32's range).
 * sendbuf == recvbuf is in place.
 */
COLLIE_API collie_status collie_allreduce_compressed(collie_comm *comm, const float *sendbuf,
                                                     float *recvbuf, size_t count,
                                                     collie_dtype wire_dtype, collie_op op);
COLLIE_API collie_status collie_iallreduce_compressed(collie_comm *comm, const float *sendbuf,
                                                      float *recvbuf, size_t count,
                                                      collie_dtype wire_dtype, collie_op op,
                                                      collie_request **req);

/*
 * Allreduce with error feedback (1-bit SGD, DeepSpeed's compressed
 * allreduce): far fewer bytes than float32 on the wire, and what each step's
 * rounding drops is kept and added to the next step's input, so that over
 * steps nothing is lost.  A compressor holds that state for one buffer of
 * `count` float32 elements (one per gradient bucket, as PyTorch's PowerSGD
 * state):
 *   COLLIE_COMPRESS_INT8  8 bits an element and a float32 scale per 256
 *                         (3.9x fewer bytes than float32); per step each
 *                         element is off by at most max|x| / 254 of its block
 *   COLLIE_COMPRESS_SIGN  1 bit an element and a scale per 256 (28x fewer):
 *                         +-(mean |x|) of its block; useful only with the
 *                         error feedback, which carries the rest
 * The call reduces in place: each rank adds its residual and compresses its
 * buffer in n chunks, the chunks go to their owners (an alltoall of codes),
 * each owner sums what it got (SUM, or the mean for AVG) with its own
 * residual and compresses that, and the owners' codes are gathered and
 * decoded by every rank: 2 (n-1)/n of the code's bytes per rank, and every
 * rank ends with the same bits.  Codes pay where links are slow, so by
 * default they run only between hosts, and only where the cost model finds
 * the links slow enough for the bytes saved to outweigh the codes' work:
 * the ranks of each host first reduce exactly over shared memory, the
 * hosts' first ranks run the codes, and each passes the result on in its
 * host; elsewhere (one host, fast links) the call is an exact allreduce.
 * COLLIE_EF_CODES (the same on every rank) sets it: hosts, all, off.
 * Ranks whose kinds or counts differ fail with COLLIE_ERR_MISMATCH (naming
 * the kinds and counts, or, where their codes differ in size, the sizes),
 * never with a wrong result.  An infinity or NaN
 * in a block makes that block NaN in the result and clears its residual.
 * A compressor belongs to one communicator; one call at a time may use it.
 */
typedef enum { COLLIE_COMPRESS_INT8 = 1, COLLIE_COMPRESS_SIGN = 2 } collie_compress_kind;
typedef struct collie_compressor collie_compressor;

/*
 * A compressor for count float32 elements on comm, residuals zero.  Where
 * comm spans hosts and some host has several of its ranks, collective over
 * comm (it groups each host's ranks, as collie_comm_split); else local.
 */
COLLIE_API collie_status collie_compressor_create(collie_comm *comm, size_t count,
                                                  collie_compress_kind kind,
                                                  collie_compressor **out);
/* Frees c (NULL-safe); INVALID_ARG while a request still uses it. */
COLLIE_API collie_status collie_compressor_free(collie_compressor *c);

/* buf (count float32, c's count) becomes the compressed SUM or AVG over comm's ranks. */
COLLIE_API collie_status collie_allreduce_ef(collie_comm *comm, collie_compressor *c, float *buf,
                                             size_t count, collie_op op);
COLLIE_API collie_status collie_iallreduce_ef(collie_comm *comm, collie_compressor *c, float *buf,
                                              size_t count, collie_op op, collie_request **req);

/*
 * Explicit set-up without launcher variables (NCCL's unique-id pattern): one
 * rank draws an id (where rank 0 will listen, and a fresh secret), any
 * channel carries the 128 bytes to the others (an MPI broadcast,
 * torch.distributed's store, a file), and every rank joins with it.  The
 * communicator is like collie_init's: the same rendezvous, host detection,
 * transports and authentication (the id's secret replaces COLLIE_TOKEN, so
 * keep the id as private as a token).  An id is good for one communicator.
 */
typedef struct {
    char internal[128];
} collie_unique_id;

/*
 * Draws a fresh id and starts listening for its rank 0: call it in the
 * process that will be rank 0.  Rank 0 listens on COLLIE_SOCKET_IFNAME's
 * address, else on the first interface that is up and not loopback, else
 * on 127.0.0.1.
 */
COLLIE_API collie_status collie_get_unique_id(collie_unique_id *id);

/*
 * Joins the communicator of size ranks that id names, as rank.  Collective
 * over those ranks, within COLLIE_TIMEOUT.  A rank or size out of range, or
 * an id that is not one, is INVALID_ARG at once.  Ranks that disagree on
 * size, or two ranks with one number, fail on every rank within the timeout:
 * MISMATCH, naming both, where rank 0 could tell them, else PEER_LOST or
 * TIMEOUT.  An id already used is INVALID_ARG at once for rank 0 in the
 * process that used it, and TIMEOUT for the others (nobody listens).  Rank
 * 0 of a communicator of more than one rank joins in the process that drew
 * the id (unlike NCCL's, whose root may be anywhere); elsewhere its call is
 * INVALID_ARG at once, saying so.  On
 * error *comm is NULL and collie_last_error(NULL) says why.
 */
COLLIE_API collie_status collie_init_rank(collie_comm **comm, int size, const collie_unique_id *id,
                                          int rank);

/*
 * MPI_Comm_split: collective over comm (in order with its other operations).
 * Ranks that pass the same color >= 0 form one new communicator, ordered by
 * key, then by their rank in comm; a negative color gives *newcomm = NULL.
 * A sub-communicator is a full one (shared memory among its ranks on one
 * host, TCP across hosts, the hierarchical algorithms), can be split again,
 * and is finalized with collie_finalize, before or after its parent.  If
 * the new communicator cannot be made, comm stays usable and
 * collie_last_error(NULL) says why.
 */
COLLIE_API collie_status collie_comm_split(collie_comm *comm, int color, int key,
                                           collie_comm **newcomm);

/*
 * ULFM's MPI_Comm_shrink (NCCL's ncclCommShrink): after a failure, the ranks
 * of comm that are still alive agree on who they are and get a new
 * communicator of exactly those, in their order in comm (rank 0: the
 * lowest survivor).  Call it on every survivor, on comm as it was (failed
 * or not); comm is left as it is and still must be finalized.
 *
 * Within a bounded time, even if more ranks fail meanwhile: a rank whose
 * process is gone is known at once (its listener refuses), a rank that is
 * alive but does not take part within COLLIE_TIMEOUT is left out (a stalled
 * candidate to coordinate costs one COLLIE_TIMEOUT each), and the call
 * gives up after 3 x COLLIE_TIMEOUT.  A rank left out returns
 * COLLIE_ERR_PEER_LOST (or TIMEOUT) and *newcomm NULL.  If a member is lost
 * while the new communicator forms, its init fails on the others like
 * collie_init_rank's; shrink comm again.  On error collie_last_error(NULL)
 * says why.  Like collie_comm_split, not from two threads on one comm.
 */
COLLIE_API collie_status collie_comm_shrink(collie_comm *comm, collie_comm **newcomm);

/*
 * Fails comm now, from any thread: a thread blocked in a call or a wait on
 * comm returns COLLIE_ERR_ABORTED at once, and so does every pending and
 * later call (ranks on this host see it too; ranks on other hosts see this
 * rank's connections end).  What a training framework's watchdog calls (as
 * torch calls ncclCommAbort).  comm must still be finalized.
 */
COLLIE_API collie_status collie_comm_abort(collie_comm *comm);

/*
 * Virtual topologies for decentralized averaging (BlueFog's model): a
 * weighted directed graph over the ranks 0..size-1.  Rank i receives from
 * its in-neighbours j and keeps W[i][i] of its own value, so one averaging
 * step is x_i <- W[i][i] x_i + sum_j W[i][j] x_j.  A topology is immutable
 * once made, holds no communicator and no memory of other ranks' data, and
 * may be shared by threads; collie_topology_free releases it.  Every rank
 * of a job makes the same one (each builder is deterministic).
 *
 * Default weights make W doubly stochastic, so repeated averaging keeps the
 * mean and converges to it: uniform, 1 / (in-degree + 1), on the regular
 * graphs (exponential, ring, full), and Metropolis-Hastings on the others
 * (mesh, star, a symmetric edge list): W[i][j] = 1 / (1 + max(deg i, deg j))
 * for each edge, the rest of the row on W[i][i].  Other weights only when
 * given (collie_topology_from_edges), and collie_topology_check reports them.
 */
typedef struct collie_topology collie_topology;

typedef enum {
    /* i -> i + m*b^k (mod size) for 1 <= m < b and m*b^k < size; param b >= 2 (2: the
     * exponential-2 graph of BlueFog and of Ying et al. 2021, log2(size) neighbours) */
    COLLIE_TOPO_EXPONENTIAL,
    /* the same offsets both ways: i -> i +/- m*b^k; param b >= 2 */
    COLLIE_TOPO_SYMMETRIC_EXPONENTIAL,
    /* i -> i + 1 and i -> i - 1; param 1: one way only (i -> i + 1) */
    COLLIE_TOPO_RING,
    /* a 2-D grid of param columns (0: the squarest), row-major, no wrap-around; irregular */
    COLLIE_TOPO_MESH,
    /* every rank <-> the center, param; irregular */
    COLLIE_TOPO_STAR,
    /* every rank -> every other rank; W = 1/size everywhere: one step is the exact mean */
    COLLIE_TOPO_FULL,
} collie_topology_kind;

/*
 * Makes a topology of kind over size ranks (see each kind for param).
 * INVALID_ARG, naming the argument, for size < 1, an unknown kind, a param
 * out of range or a graph of over 2^28 edges; *topo is NULL on any error.
 */
COLLIE_API collie_status collie_topology_create(collie_topology_kind kind, int size, int param,
                                                collie_topology **topo);

/*
 * A topology from nedges directed edges from[e] -> to[e] (data flows from
 * from[e] to to[e]; duplicates and self-edges are INVALID_ARG).  weights
 * NULL: Metropolis-Hastings when every edge has its reverse, uniform
 * 1/(in-degree + 1) when every rank has in-degree == out-degree == d, and
 * INVALID_ARG otherwise (no doubly-stochastic default exists: give weights).
 * weights given: W[to[e]][from[e]] = weights[e], and each rank's self weight
 * is 1 minus its row's sum (any values accepted; collie_topology_check says
 * what they make).
 */
COLLIE_API collie_status collie_topology_from_edges(int size, size_t nedges, const int *from,
                                                    const int *to, const double *weights,
                                                    collie_topology **topo);

/* Releases topo; NULL is ignored. */
COLLIE_API void collie_topology_free(collie_topology *topo);

/* Number of ranks; -1 for NULL. */
COLLIE_API int collie_topology_size(const collie_topology *topo);

/*
 * rank's in-neighbours (whose data it combines) in increasing order, with the
 * weight rank gives each: writes at most max of them into ranks and weights
 * (either may be NULL) and returns how many there are; -1 for a NULL topo or
 * a rank out of range.
 */
COLLIE_API int collie_topology_in(const collie_topology *topo, int rank, int *ranks,
                                  double *weights, int max);

/* rank's out-neighbours (who combine its data), as collie_topology_in. */
COLLIE_API int collie_topology_out(const collie_topology *topo, int rank, int *ranks,
                                   double *weights, int max);

/* W[rank][rank]; NaN for a NULL topo or a rank out of range. */
COLLIE_API double collie_topology_self_weight(const collie_topology *topo, int rank);

/* What collie_topology_check finds. */
typedef struct {
    int regular;           /* every rank has the same in-degree, and the same out-degree */
    int row_stochastic;    /* each rank's weights sum to 1: averaging keeps constants */
    int column_stochastic; /* each rank's data is spread with total weight 1: keeps the mean */
    int max_degree;        /* the largest in- or out-degree: messages per step */
    /*
     * For a doubly stochastic W, the rate at which repeated averaging
     * contracts the spread around the mean: the spectral radius of W - J/size
     * (J all ones), the second-largest eigenvalue modulus; 0 means one step
     * averages exactly, 1 never converges.  Computed by power iteration
     * (exact for the builders' graphs, whose W is normal; an upper bound
     * within a few percent otherwise).  -1 when W is not doubly stochastic,
     * or size > 4096 or over 2^20 edges (not computed).
     */
    double rho;
} collie_topology_props;

/* Fills *props for topo; INVALID_ARG for NULL arguments. */
COLLIE_API collie_status collie_topology_check(const collie_topology *topo,
                                               collie_topology_props *props);

/*
 * Dynamic schedules: a topology per step, repeating with a period (BlueFog's
 * dynamic topologies).  Step t of a training loop averages over
 * collie_schedule_step(s, t); every rank makes the same schedule and passes
 * the same t.  Each step is a topology as above, so it can be inspected
 * and checked; a schedule owns its steps (valid until collie_schedule_free).
 */
typedef struct collie_schedule collie_schedule;

typedef enum {
    /*
     * Step t: i sends to i + 2^(t mod tau) and keeps half its own value, tau
     * = ceil(log2 size): one message per rank per step whatever the size.
     * After tau steps every rank holds the exact mean when size is a power of
     * two (Ying et al. 2021); otherwise it only contracts.  param unused (0).
     */
    COLLIE_SCHED_ONE_PEER_EXPONENTIAL,
    /*
     * Exact averaging for any size in one-peer steps: every rank holds the
     * mean after the period (log2 P, plus 2 when size is not a power of two:
     * P the largest power of two <= size), each rank sending to at most one
     * rank and receiving from at most one per step.  The ranks past P first
     * fold into ranks 0.., ranks 0..P-1 average over the hypercube weighting
     * each side by how many ranks it stands for, and the mean is copied back.
     * Every step's weights are convex (row-stochastic), so a model never
     * leaves the hull of the ones it mixes.  The finite-time idea is Takezawa
     * et al., "Beyond Exponential Graph" (NeurIPS 2023, arXiv 2305.11420);
     * this construction is collie's, with one peer.  param unused (0).
     */
    COLLIE_SCHED_ONE_PEER_EXACT,
} collie_schedule_kind;

/* Makes a schedule of kind over size ranks; INVALID_ARG as collie_topology_create. */
COLLIE_API collie_status collie_schedule_create(collie_schedule_kind kind, int size, int param,
                                                collie_schedule **sched);

/*
 * Host-aware one-peer schedules (BlueFog's inner/outer dynamic graphs),
 * for hosts of any sizes and any placement of the ranks: host_of[r] is rank
 * r's host, 0..hosts-1, every host used (collie_host_of gives a
 * communicator's).  At step t each host's gateway -- its member t mod (its
 * size), members in rank order -- exchanges with a gateway of another host,
 * and the host's other members exchange among themselves around a ring that
 * skips the gateway: one message per rank per step, and one per host
 * across hosts.  Every step keeps half and takes half (a rank left without
 * a peer keeps all), and every step is doubly stochastic: the mean never
 * moves.  BlueFog needs equal hosts of 3 ranks or more; here a single host
 * is one ring of all its ranks, and when every host holds two ranks (whose
 * gateways would always be the same local ranks, never meeting the other)
 * odd steps pair each host's two ranks.
 */
typedef enum {
    /* Gateways in a ring over the hosts (h -> h + 1); members in a ring (i -> i + 1). */
    COLLIE_SCHED_INNER_OUTER_RING,
    /*
     * Hops of 2^k: between gateways h -> h + 2^(t mod (floor(log2(H - 1)) + 1)) over
     * H hosts, and likewise around each host's ring of members but the gateway.
     */
    COLLIE_SCHED_INNER_OUTER_EXPONENTIAL,
} collie_host_schedule_kind;

/*
 * Makes a host-aware schedule over size ranks (host_of: size entries).  Its
 * period is the least common multiple of the hosts' sizes and of the hop
 * counts; INVALID_ARG, saying so, past 65536 steps or 2^24 step-ranks.
 */
COLLIE_API collie_status collie_schedule_create_hosts(collie_host_schedule_kind kind, int size,
                                                      const int *host_of, collie_schedule **sched);

/*
 * A schedule by name, for command lines and bindings: a static topology as
 * a schedule of period 1 ("exp2" or "exp3", ...: exponential of that base;
 * "sym-exp2"; "ring"; "ring1": one way; "mesh"; "star": centre 0; "full"),
 * or a dynamic one ("onepeer-exp2", "onepeer-exact").  An unknown name is
 * INVALID_ARG, and collie_last_error(NULL) lists the known ones.
 */
COLLIE_API collie_status collie_schedule_from_name(const char *name, int size,
                                                   collie_schedule **sched);

/*
 * The same, knowing the hosts (host_of as collie_schedule_create_hosts; NULL:
 * one host), so that the host-aware names work too: "inner-outer-ring",
 * "inner-outer-exp2".
 */
COLLIE_API collie_status collie_schedule_from_name_hosts(const char *name, int size,
                                                         const int *host_of,
                                                         collie_schedule **sched);

/* Releases sched and its steps; NULL is ignored. */
COLLIE_API void collie_schedule_free(collie_schedule *sched);

/* Steps before the schedule repeats; -1 for NULL. */
COLLIE_API int collie_schedule_period(const collie_schedule *sched);

/* The topology of step t (t mod the period); NULL for a NULL sched or t < 0. */
COLLIE_API const collie_topology *collie_schedule_step(const collie_schedule *sched, long long t);

/*
 * One step of decentralized averaging (BlueFog's neighbor_allreduce): on
 * every rank i, recvbuf = W[i][i] sendbuf + sum over in-neighbours j of
 * W[i][j] x (rank j's sendbuf), the weights topo's.  Every rank of comm
 * calls it, in the same order as its other collectives, with a topology of
 * comm's size; but a rank waits only for its own neighbours, and moves
 * out-degree x count elements.  dtype: COLLIE_FLOAT32, FLOAT64, FLOAT16 or
 * BFLOAT16 (the half types combine in float32 and round once).
 * sendbuf == recvbuf is in place.  The non-blocking form reads topo until
 * the request completes: keep it (and its schedule) until then.  Ranks in
 * different topologies (or schedule steps) fail with MISMATCH naming both
 * ranks and the call, as soon as one sends to the other; a neighbour that
 * never sends fails the wait after COLLIE_TIMEOUT; a lost neighbour,
 * PEER_LOST.  Neighbour steps are numbered apart from the other collectives
 * but run in order with them.
 */
COLLIE_API collie_status collie_neighbor_allreduce(collie_comm *comm, const collie_topology *topo,
                                                   const void *sendbuf, void *recvbuf, size_t count,
                                                   collie_dtype dtype);
COLLIE_API collie_status collie_ineighbor_allreduce(collie_comm *comm, const collie_topology *topo,
                                                    const void *sendbuf, void *recvbuf,
                                                    size_t count, collie_dtype dtype,
                                                    collie_request **req);

/*
 * The same step on float32 data that travels as wire_dtype (COLLIE_FLOAT16
 * or COLLIE_BFLOAT16: half the bytes): each rank's data is rounded once
 * to wire_dtype as it leaves, and combined in float32 with the rank's own
 * value at full precision.  Error bound per element, against the float32
 * step: sum over in-neighbours j of |W[i][j]| |x_j| u, u = 2^-11 for
 * float16, 2^-8 for bfloat16 (float16 overflows past 65504).  Every
 * neighbour must use the same wire_dtype (MISMATCH otherwise).
 */
COLLIE_API collie_status collie_neighbor_allreduce_compressed(collie_comm *comm,
                                                              const collie_topology *topo,
                                                              const float *sendbuf, float *recvbuf,
                                                              size_t count,
                                                              collie_dtype wire_dtype);
COLLIE_API collie_status collie_ineighbor_allreduce_compressed(
    collie_comm *comm, const collie_topology *topo, const float *sendbuf, float *recvbuf,
    size_t count, collie_dtype wire_dtype, collie_request **req);

/*
 * Decentralized averaging between hosts (BlueFog's
 * hierarchical_neighbor_allreduce), each host's ranks acting as one node:
 * topo is over the hosts (collie_host_count nodes), and every rank of host h
 * gets W[h][h] avg_h + sum over in-neighbour hosts g of W[h][g] avg_g,
 * avg_h the mean of host h's sendbufs.  Within a host the ranks average
 * through shared memory; between hosts every local rank exchanges its own
 * 1/(ranks on the host) of the data with its counterparts on the neighbour
 * hosts, all at once (no leader).  Hosts may hold different numbers of
 * ranks.  Every rank calls it, in order with the other collectives; dtypes
 * and failures as collie_neighbor_allreduce.
 */
COLLIE_API collie_status collie_hierarchical_neighbor_allreduce(collie_comm *comm,
                                                                const collie_topology *topo,
                                                                const void *sendbuf, void *recvbuf,
                                                                size_t count, collie_dtype dtype);
COLLIE_API collie_status collie_ihierarchical_neighbor_allreduce(collie_comm *comm,
                                                                 const collie_topology *topo,
                                                                 const void *sendbuf, void *recvbuf,
                                                                 size_t count, collie_dtype dtype,
                                                                 collie_request **req);

/*
 * This rank's part of a dynamic step, chosen per call (BlueFog's
 * neighbor_allreduce with src_weights / dst_weights): it sends to
 * send_ranks, scaling what it sends to send_ranks[k] by send_weights[k]
 * (NULL: 1, the data as is), and computes
 *     recvbuf = self_weight sendbuf + sum over k of recv_weights[k] x (what recv_ranks[k] sent).
 * recv_weights NULL: uniform, 1 / (nrecv + 1) for each received value and for
 * its own (self_weight is then ignored).  Ranks in [0, size), no rank twice
 * in a list, never this rank.  The arrays are read during the call (a
 * non-blocking call copies them).  Every receive must match a send of the
 * same call on the other rank.
 */
typedef struct {
    int nrecv;
    const int *recv_ranks;
    const double *recv_weights;
    double self_weight;
    int nsend;
    const int *send_ranks;
    const double *send_weights;
} collie_neighbors;

COLLIE_API collie_status collie_neighbor_allreduce_dynamic(collie_comm *comm,
                                                           const collie_neighbors *nb,
                                                           const void *sendbuf, void *recvbuf,
                                                           size_t count, collie_dtype dtype);
COLLIE_API collie_status collie_ineighbor_allreduce_dynamic(collie_comm *comm,
                                                            const collie_neighbors *nb,
                                                            const void *sendbuf, void *recvbuf,
                                                            size_t count, collie_dtype dtype,
                                                            collie_request **req);

/*
 * BlueFog's neighbor_allgather: recvbuf receives the sendbufs of this
 * rank's in-neighbours, count elements each, one after the other in the
 * order collie_topology_in lists them (increasing rank); this rank's own
 * data is not among them.  recvbuf holds in-degree x count elements and
 * must not overlap sendbuf.  Any dtype.  Order, failures and moved bytes as
 * collie_neighbor_allreduce; in-neighbours' data lands straight in recvbuf.
 */
COLLIE_API collie_status collie_neighbor_allgather(collie_comm *comm, const collie_topology *topo,
                                                   const void *sendbuf, void *recvbuf, size_t count,
                                                   collie_dtype dtype);
COLLIE_API collie_status collie_ineighbor_allgather(collie_comm *comm, const collie_topology *topo,
                                                    const void *sendbuf, void *recvbuf,
                                                    size_t count, collie_dtype dtype,
                                                    collie_request **req);

/*
 * The same over lists given per call: recvbuf receives nb->nrecv blocks in
 * nb->recv_ranks' order; the weights in nb are not used.
 */
COLLIE_API collie_status collie_neighbor_allgather_dynamic(collie_comm *comm,
                                                           const collie_neighbors *nb,
                                                           const void *sendbuf, void *recvbuf,
                                                           size_t count, collie_dtype dtype);
COLLIE_API collie_status collie_ineighbor_allgather_dynamic(collie_comm *comm,
                                                            const collie_neighbors *nb,
                                                            const void *sendbuf, void *recvbuf,
                                                            size_t count, collie_dtype dtype,
                                                            collie_request **req);

/*
 * BlueFog's pair_gossip: this rank and peer exchange their data, and each
 * computes recvbuf = self_weight sendbuf + pair_weight (the peer's sendbuf)
 * (0.5 and 0.5 average the pair).  peer must call it with this rank as its
 * peer, in the same place among its collectives; a dynamic step with one
 * neighbour each way, so dtypes, in place and failures are
 * collie_neighbor_allreduce_dynamic's.
 */
COLLIE_API collie_status collie_pair_gossip(collie_comm *comm, int peer, const void *sendbuf,
                                            void *recvbuf, size_t count, collie_dtype dtype,
                                            double self_weight, double pair_weight);
COLLIE_API collie_status collie_ipair_gossip(collie_comm *comm, int peer, const void *sendbuf,
                                             void *recvbuf, size_t count, collie_dtype dtype,
                                             double self_weight, double pair_weight,
                                             collie_request **req);

/*
 * One-sided neighbour windows (BlueFog's win_create, win_put,
 * win_accumulate, win_get and win_update, with push-sum's associated
 * weight).  A window gives this rank one mailbox per in-neighbour of its
 * topology (count elements of dtype, and a weight), and a published value
 * that its out-neighbours may fetch.  Deposits need nothing from the rank
 * that owns the mailbox: within a host the depositor writes it in shared
 * memory, across hosts a thread of the window takes the messages in as
 * they come, so asynchronous gossip and push-sum run without matching
 * receives, and ranks may take different numbers of steps.  A mailbox
 * always holds whole deposits, never part of one.
 *
 * A window runs on a communicator of its own, made from comm at creation,
 * so its traffic never waits for comm's operations nor the reverse.  Its
 * calls are made by one thread at a time.  Memory per rank: 2 x in-degree
 * + 3 copies of the data.  Failures are sticky: after a lost neighbour or a
 * timeout every call of the window returns the status.
 */
typedef struct collie_win collie_win;

/*
 * Collective over comm, in order with its other operations: every rank
 * passes a topology of comm's size and the same count and dtype (float32,
 * float64, float16 or bfloat16).  init (count elements; NULL: zeros) is
 * this rank's first published value, and each mailbox starts as that
 * in-neighbour's init, with weight 1, or 0 if it passed NULL (push-sum's
 * start: empty mailboxes).  This rank's associated weight starts at 1.
 * topo may be freed after the call.
 */
COLLIE_API collie_status collie_win_create(collie_comm *comm, const collie_topology *topo,
                                           const void *init, size_t count, collie_dtype dtype,
                                           collie_win **win);

/*
 * Replaces this rank's mailbox on every out-neighbour k (collie_topology_out
 * order) with weights[k] x buf, and its weight with weights[k] x this
 * rank's weight (weights NULL: 1, the data as is); buf also becomes this
 * rank's published value.  Returns once the data has left: the
 * out-neighbours need not be in any call.
 */
COLLIE_API collie_status collie_win_put(collie_win *win, const void *buf, const double *weights);

/*
 * The same, but adds weights[k] x buf into the mailboxes and weights[k] x
 * this rank's weight into theirs; the published value stays.  A push-sum
 * step is accumulate with weights 1 / (out-degree + 1), then
 * collie_win_collect with self_weight 1 / (out-degree + 1).
 */
COLLIE_API collie_status collie_win_accumulate(collie_win *win, const void *buf,
                                               const double *weights);

/*
 * Fetches every in-neighbour's published value and weight into its mailbox
 * here, replacing what was there.  The in-neighbours need not be in any
 * call.
 */
COLLIE_API collie_status collie_win_get(collie_win *win);

/*
 * buf = W[i][i] buf + sum over in-neighbours j of W[i][j] x mailbox j, with
 * the topology's weights, and this rank's weight likewise; buf becomes the
 * published value.  The mailboxes stay.  Local: waits for nobody.
 */
COLLIE_API collie_status collie_win_update(collie_win *win, void *buf);

/*
 * Push-sum's update: buf = self_weight x buf + the sum of the mailboxes,
 * this rank's weight = self_weight x weight + the sum of theirs; the
 * mailboxes are emptied (zero, weight 0) and buf is published.  What was
 * deposited is counted once: the sum over ranks of buf plus what sits in
 * mailboxes and in flight is what accumulate keeps constant.  Local.
 */
COLLIE_API collie_status collie_win_collect(collie_win *win, void *buf, double self_weight);

/*
 * Collective over the window's ranks: returns once every deposit any rank
 * made before its fence has landed in its mailbox (each rank waits only
 * for its in-neighbours' markers).
 */
COLLIE_API collie_status collie_win_fence(collie_win *win);

/* This rank's associated weight (push-sum's p: the estimate is buf / p); NaN for NULL. */
COLLIE_API double collie_win_weight(const collie_win *win);

/*
 * Deposits received from each in-neighbour (collie_topology_in order) since
 * the window was made (a mailbox's version: one that has not moved since
 * the last look holds nothing new): writes at most max into counts,
 * returns the in-degree; -1 for NULL.
 */
COLLIE_API int collie_win_deposits(const collie_win *win, unsigned long long *counts, int max);

/* What the window's last failure was (as collie_last_error); "" for NULL. */
COLLIE_API const char *collie_win_last_error(const collie_win *win);

/*
 * Collective over the window's ranks: waits for every rank, stops the
 * window's thread and frees it.  NULL is a no-op.
 */
COLLIE_API collie_status collie_win_free(collie_win *win);

#ifdef __cplusplus
}
#endif

#endif /* COLLIE_H */
