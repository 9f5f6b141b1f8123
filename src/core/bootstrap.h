/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bootstrap.h - how ranks find each other: identity from the environment, a
 * TCP rendezvous at rank 0, and the small exchanges (allgathers over its
 * star, or over a parent communicator: bootstrap_over.c) that set up the
 * transports.
 */
#ifndef COLLIE_BOOTSTRAP_H
#define COLLIE_BOOTSTRAP_H

#include <stddef.h>

#include "comm.h"

#define COLLIE_HOST_ID_LEN 96

struct collie__bootstrap_over;

struct collie__identity {
    int rank, size;
    int local_rank, local_size; /* from the launcher, -1 if it did not say */
    char addr_host[256];        /* rendezvous host ("" for a one-rank job) */
    int addr_port;
    char host_id[COLLIE_HOST_ID_LEN];
    const char *source;     /* which launcher's variables were used */
    const char *rendezvous; /* where addr came from (a variable, the launcher's store) */
    int listen_fd;          /* rank 0: a listener already open at addr, else -1 */
    char token[72];         /* the job's secret from the launcher's store, else "" */
    int token_public;       /* token only tells jobs apart: derived from their ids, no secret */
    struct collie__bootstrap_over *over; /* made inside a parent (split): its exchanges; or NULL */
};

/*
 * Fills id from COLLIE_* variables, else torchrun's, else Open MPI's, else
 * MPICH's PMI_*, else Slurm's; with none of them, a one-rank job.  Rank 0's
 * address comes from COLLIE_ADDR, else MASTER_ADDR, else the launcher: its
 * PMIx or PMI-2 key-value store (rank 0 opens its listener and publishes it
 * with a fresh token), else Slurm's step (SLURM_STEP_NODELIST's first node,
 * a port from the job's and step's ids).  COLLIE_OK, or the failure
 * (INVALID_ARG: a variable is missing or wrong; TIMEOUT: the launcher did
 * not answer) with a message naming the launcher and what to set.
 */
collie_status collie__identity_from_env(struct collie__identity *id, char *err, size_t errlen);

/*
 * Fills id for rank of size, rank 0 listening at host:port (collie_init_rank,
 * collie_comm_split): the host identity as identity_from_env finds it.
 */
void collie__identity_for_rank(struct collie__identity *id, int rank, int size, const char *host,
                               int port);

/*
 * This kernel's boot id (/proc/sys/kernel/random/boot_id, without its
 * newline) into buf: alike in every namespace and container of one machine,
 * never alike on two.  "" where it cannot be read.
 */
void collie__identity_boot_id(char *buf, size_t len);

/*
 * A launcher's count variable: -1 unset (or name NULL), -2 set but not a
 * non-negative integer, else its value.
 */
long collie__env_count(const char *name);

/* Whether any launcher's rank variable (those identity_from_env reads) is set. */
int collie__identity_in_a_job(void);

/*
 * Connects rank 0 with every other rank (rank 0 listens at the address, the
 * others retry until it does, within COLLIE_TIMEOUT).  A one-rank job needs
 * no connection.  On failure nothing is left open.  Rank 0 returns once
 * every rank has joined, the others once they have: the first allgather
 * after it is what tells them all that the job is whole (a barrier here
 * would cost a round of its own).
 */
collie_status collie__bootstrap_open(collie_comm *comm, const struct collie__identity *id);

/* all[r*len .. (r+1)*len) receives rank r's `mine`, on every rank. */
collie_status collie__bootstrap_allgather(collie_comm *comm, const void *mine, void *all,
                                          size_t len);

/*
 * A communicator made inside a live one whose ranks it takes (a split whose
 * groups each lie on one host): its exchanges ride on the parent's
 * allgathers, each carrying every group's records at once, instead of a
 * rendezvous of its own.  Every rank of the parent takes part in exactly
 * COLLIE__BOOTSTRAP_OVER_ROUNDS of them, in a group or not, failed or not
 * (collie__bootstrap_over_finish), so the parent's collectives stay in step.
 */
#define COLLIE__BOOTSTRAP_OVER_ROUNDS 3  /* the cards, shared memory's two */
#define COLLIE__BOOTSTRAP_OVER_BYTES 512 /* the largest record of a round */
struct collie__bootstrap_over {
    collie_comm *parent;
    const int *members; /* rank i of the new communicator is the parent's members[i] */
    int rounds;         /* the parent's allgathers this rank has taken part in */
    /* the parent's allgather of `len` bytes a rank (the api layer's collie_allgather) */
    collie_status (*allgather)(collie_comm *parent, const void *mine, void *all, size_t len);
    char host[64]; /* the address this rank's peers reach it at (for its door) */
};

/* As collie__bootstrap_open, over `over` (which must outlive the exchanges): connects nothing. */
collie_status collie__bootstrap_open_over(collie_comm *comm, struct collie__bootstrap_over *over);

/* comm, opened over a parent, is made: it takes part in no more exchanges. */
void collie__bootstrap_made(collie_comm *comm);

/*
 * The exchange of collie__bootstrap_allgather for a communicator opened over
 * a parent: one parent allgather, whose records of this communicator's ranks
 * land in `all`.  A rank whose record says it failed fails this one with its
 * reason; one that has finished, or sent another length, with MISMATCH.
 */
collie_status collie__bootstrap_over_allgather(collie_comm *comm,
                                               struct collie__bootstrap_over *over,
                                               const void *mine, void *all, size_t len);

/*
 * Ends this rank's part in the making of a communicator over a parent (comm:
 * the new one, or NULL when none was made; status: how its making ended):
 * takes part in the parent's allgathers that remain of
 * COLLIE__BOOTSTRAP_OVER_ROUNDS, saying it has finished or why it failed,
 * and detaches comm from `over`.  COLLIE_OK, or the parent's failure.
 */
collie_status collie__bootstrap_over_finish(struct collie__bootstrap_over *over, collie_comm *comm,
                                            collie_status status);

/* This rank's end of its rendezvous connections, as a numeric address; 0, or -1. */
int collie__bootstrap_local_addr(const collie_comm *comm, char *host, size_t len);

/*
 * The address this rank's peers on other hosts reach it at: the first IPv4
 * address of COLLIE_SOCKET_IFNAME, else this rank's end of its rendezvous
 * connections.  COLLIE_OK, or the failure recorded on comm.
 */
collie_status collie__bootstrap_own_addr(collie_comm *comm, char *host, size_t len);

/* Closes every bootstrap connection; NULL-safe. */
void collie__bootstrap_close(collie_comm *comm);

#endif
