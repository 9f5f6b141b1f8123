/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * timeline.h - COLLIE_TIMELINE=FILE: every operation of this process as
 * Chrome trace events (chrome://tracing, Perfetto), one file per process,
 * FILE.rankN.json (N: its rank in the first communicator it made).
 *
 * One event row ("process") per rank; threads within it: the caller
 * (blocking calls, waits), the collective lane and the point-to-point lane.
 * Each operation is a complete event from start to end with its
 * collective, bytes, algorithm, sequence number, communicator and fusion;
 * a "queued" event spans issue to start; a "wait" event spans collie_wait.
 * Times are microseconds of CLOCK_MONOTONIC: ranks of one host share it,
 * hosts do not.  Off (one branch per call) unless the variable is set.
 */
#ifndef COLLIE_TIMELINE_H
#define COLLIE_TIMELINE_H

#include <stdint.h>

#include "../core/comm.h"

struct collie_request;
struct collie__op;

/* A communicator was made / finalized: the file opens with the first and closes with the last. */
void collie__timeline_attach(collie_comm *comm);
void collie__timeline_detach(collie_comm *comm);

/* A request completed at t_end (its issue and start times are in it). */
void collie__timeline_op(collie_comm *comm, const struct collie_request *r, uint64_t t_end);

/* A blocking call ran on the caller's thread from t0 to t1. */
void collie__timeline_blocking(collie_comm *comm, const struct collie__op *op, uint64_t t0,
                               uint64_t t1);

/* The caller waited in collie_wait from t0 to t1. */
void collie__timeline_wait(collie_comm *comm, uint64_t t0, uint64_t t1);

/* Whether the timeline is on (cheap: one load). */
int collie__timeline_on(void);

#endif
