/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rendezvous.h - rank 0's address from the launcher, where the user set
 * none (identity_from_env's last resort).
 */
#ifndef COLLIE_RENDEZVOUS_H
#define COLLIE_RENDEZVOUS_H

#include <stddef.h>

#include "collie.h"

struct collie__identity;

/*
 * What this process's launcher offers for the rendezvous ("PMIx", "PMI-2",
 * "Slurm's step"), or NULL.  Starts nothing.
 */
const char *collie__rendezvous_offered(void);

/*
 * Fills id's address, token and (rank 0) listener through what the launcher
 * offers (rendezvous_offered() is not NULL).  COLLIE_OK, or the failure
 * (TIMEOUT: the launcher did not answer in time) with err naming the
 * launcher, what was expected and what to set.
 */
collie_status collie__rendezvous_from_launcher(struct collie__identity *id, char *err,
                                               size_t errlen);

/* The port rank 0 listens on in Slurm step job.step without PMI. */
int collie__rendezvous_slurm_port(long job, long step);

#endif
