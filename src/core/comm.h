/*
 * comm.h - the communicator (opaque outside the library) and the error
 * discipline every module follows: the function that first decides something
 * failed calls collie__fail(); callers only pass the status up.
 */
#ifndef COLLIE_COMM_H
#define COLLIE_COMM_H

#include <stdint.h>
#include <time.h>

#include "collie.h"
#include "op.h"

struct collie__bootstrap;
struct collie__shm;
struct collie__net;
struct collie__transport;
struct collie__algo;

struct collie_comm {
    int rank, size;
    int local_rank, local_size;
    int nhosts;
    int cpus; /* CPUs this process may run on */
    int *local_to_global; /* this host's ranks, indexed by local rank (in hosts.ranks) */
    struct {
        int *identity;   /* [r] = r: the flat group */
        int *host_of;    /* [r]: host index of rank r (hosts numbered by their lowest rank) */
        int *ranks;      /* every rank, grouped by host: host h's are ranks[start[h] .. start[h+1]) */
        int *start;      /* nhosts + 1 offsets into ranks */
        int max_local;   /* most ranks on one host */
    } hosts;

    struct collie__bootstrap *boot;
    struct collie__shm *shm;
    struct collie__net *net; /* NULL on one host */
    const struct collie__transport **peer_transport; /* indexed by global rank */

    double timeout_s;
    size_t nt_min; /* COLLIE_NT_MIN: outputs this large bypass the caches; 0 never */
    uint64_t deadline_ns;       /* of the bootstrap exchange in flight (waits in shm have their own) */
    struct collie__op_desc cur; /* the call in flight */
    uint32_t seq;               /* collectives completed so far */
    uint8_t cur_algo;           /* the algorithm running cur (select.c's table index) */
    uint32_t algo_logged[COLLIE_COLL_COUNT]; /* bit per algorithm whose choice was logged */
    const struct collie__algo *forced[COLLIE_COLL_COUNT]; /* by COLLIE_ALGO, else NULL */
    const void **scratch_srcs; /* local_size pointers, for reduction sources */
    void *scratch[2];          /* collie__scratch() */
    size_t scratch_bytes[2];

    unsigned long long ops, bytes_sent; /* collie_get_counters */
    collie_status failed; /* sticky status; COLLIE_OK while healthy */
    char last_error[512];
};

static inline uint64_t collie__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Starts the deadline of a bootstrap exchange: now + COLLIE_TIMEOUT. */
static inline void collie__arm_deadline(collie_comm *comm)
{
    comm->deadline_ns = collie__now_ns() + (uint64_t)(comm->timeout_s * 1e9);
}

/*
 * Records a failure decided here: formats the detail into last_error (logged
 * at WARN) and returns status.  Every status but INVALID_ARG and UNSUPPORTED
 * also fails the communicator, and tells the other ranks on this host so that
 * none of them waits for this one in vain.
 */
collie_status collie__fail(collie_comm *comm, collie_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Adopts a failure first decided by another rank (message already formatted). */
collie_status collie__fail_from_peer(collie_comm *comm, collie_status status, const char *msg);

/* Index among this host's ranks of a global rank, or -1 if it lives on another host. */
static inline int collie__local_index(const collie_comm *comm, int global_rank)
{
    for (int i = 0; i < comm->local_size; i++)
        if (comm->local_to_global[i] == global_rank)
            return i;
    return -1;
}

/*
 * Scratch buffers of at least `bytes` for algorithms, grown on demand and
 * freed at finalize; NULL after failing the communicator with NOMEM.  Two
 * that never alias: COLLIE_SCRATCH_TMP for the point-to-point algorithms'
 * receive blocks, COLLIE_SCRATCH_WORK for the callers that wrap them.
 */
enum collie__scratch_id { COLLIE_SCRATCH_WORK, COLLIE_SCRATCH_TMP };
void *collie__scratch(collie_comm *comm, enum collie__scratch_id id, size_t bytes);

/* Algorithms and transports count what they hand to peers (collie_get_counters). */
static inline void collie__count_sent(collie_comm *comm, size_t bytes) { comm->bytes_sent += bytes; }

/* "COLLIE_ERR_TIMEOUT", ...: the enumerator's name, for logs. */
const char *collie__status_name(collie_status status);

/* Where init failures are described when there is no communicator yet. */
char *collie__init_error_buffer(size_t *len);

#endif
