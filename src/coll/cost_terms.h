/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cost_terms.h - the terms every algorithm's price is written in (cost.c):
 * a sync of a host's ranks, bytes moved by its cores, copies between ranks'
 * memory, steps over the links.  Each algorithm's file prices itself with
 * them (its descriptor's cost, algo.h), following its steps; `s` is the
 * call's bytes as the API takes them, n the ranks, L the ranks per host.
 */
#ifndef COLLIE_COST_TERMS_H
#define COLLIE_COST_TERMS_H

#include <math.h>

#include "cost.h"

typedef const struct collie__machine machine;

/* Steps of a recursive halving or doubling over n: ceil(log2 n). */
double collie__cost_log2_steps(int n);
/* A group that is not a power of two folds in and out first (fold.c): two more steps. */
double collie__cost_fold_steps(int n);

/* ---- within a host: the shared-memory window (ranks = L, hosts = 1) ---- */

/* A host whose ranks outnumber its cores: its rates and its trees were fitted apart. */
int collie__cost_crowded(machine *m);
/* One sync of the host's ranks (shm.c's collie__win_sync). */
double collie__cost_sync(machine *m);
/*
 * Seconds for every rank of the host to move `user` bytes of its buffers at
 * `user_beta` and `slot` bytes of the staging slots, the cores shared.
 */
double collie__cost_move(machine *m, double user_beta, double user, double slot);
/* The same for one rank while the others wait: a root's share of a reduce. */
double collie__cost_alone(machine *m, double user_beta, double user, double slot);
/* A reduction's rate of the user's buffers and of the slots it reads, for a call of s. */
double collie__cost_resident_beta(machine *m, double s);
/* The same for a oneshot, where every rank reduces every rank's slot. */
double collie__cost_reduction_beta(machine *m, double s);
/*
 * Whether an allreduce of s is an exchange of two ranks in one core's cache
 * (shm.c's collie__win_exchange): two ranks near each other on cores of
 * their own, whose buffers and slots fit in each core's own cache.
 */
int collie__cost_pair(machine *m, double s);
/*
 * Seconds of such an exchange that moves `user` bytes of the buffers and
 * `slot` of the slots a rank, in `phases` phases that each read `fresh`
 * bytes the peer has just written.
 */
double collie__cost_pair_move(machine *m, double user, double slot, int phases, double fresh);
/*
 * Seconds for the other of two such ranks to read a broadcast's s bytes just
 * after the root wrote them, the root running ahead (host_pair_fresh_beta);
 * -1 where the call does not fit a core's own cache or the rate is unset.
 */
double collie__cost_pair_fresh(machine *m, double s);
/* Rounds of `bytes` through a slot: at least one. */
double collie__cost_rounds(machine *m, double bytes);
/* The staged copies' rate of the user's buffers, for ranks that each hold `held` bytes. */
double collie__cost_staged_beta(machine *m, double held);
/* The same for allgather's and reduce_scatter's copies. */
double collie__cost_blocks_beta(machine *m, double held);
/* Whether two ranks' staged copies, `held` bytes of buffers a rank, run at the pair's rate. */
int collie__cost_pair_copies(machine *m, double held);
/* Seconds of such copies, `copied` bytes a rank. */
double collie__cost_pair_copy(machine *m, double copied);

/* ---- within a host: copies between ranks' memory (shm.h's attach) ---- */

/* Whether the single copies are offered: alltoall's, and the others' (ranks on their cores). */
int collie__cost_attach_offered_alltoall(machine *m);
int collie__cost_attach_offered(machine *m);
/*
 * Seconds for each of the host's ranks, all copying at once, to make `calls`
 * system calls that copy `bytes`, while `resident` bytes of the host's
 * buffers must stay in its cache.
 */
double collie__cost_attach(machine *m, double calls, double bytes, double resident);
/* What copies of `bytes` into the user's output add where `resident` leaves the cache. */
double collie__cost_written(machine *m, double bytes, double resident);
/* Allgather's and alltoall's single copies: each rank copies its block and the peers'. */
double collie__cost_gather_direct(machine *m, double s, double resident, int offered);

/* ---- point to point: every step at the links' rates ---- */

/* One step's latency, and the bytes per second through one host's link each way. */
double collie__cost_step_alpha(machine *m);
double collie__cost_link_rate(machine *m);
/* Flows that share one link at once: a host's ranks (one pair's ring on one host). */
double collie__cost_flows(machine *m);
/* `steps` steps one after another that move `link_bytes` through each host's link, each way. */
double collie__cost_over_links(machine *m, double steps, double link_bytes);
/* Whether a tree's message of s waits for its receiver on a crowded host. */
int collie__cost_switched(machine *m, double s);
/* A binomial tree of whole messages, each rank moving `user` bytes at `user_beta`. */
double collie__cost_tree(machine *m, double s, double user, double user_beta);

#endif
