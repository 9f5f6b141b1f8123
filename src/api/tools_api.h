/*
 * tools_api.h - the small internal API that the `collie` command (tools/)
 * uses beyond collie.h: what `collie info` shows and which algorithm
 * `collie bench` reports.  The only private header the tools may include
 * (scripts/check_layers.sh enforces it); none of it is ABI, and nothing here
 * exposes a struct.
 */
#ifndef COLLIE_TOOLS_API_H
#define COLLIE_TOOLS_API_H

#include <stddef.h>
#include <stdio.h>

#include "collie.h"

/* Whether this process is a rank of a job: any launcher's rank variable that collie_init reads is set. */
int collie__tools_in_a_job(void);

/* CPUs this rank may run on, and hosts in the job; -1 for a NULL comm. */
int collie__tools_cpus(const collie_comm *comm);
int collie__tools_hosts(const collie_comm *comm);

/*
 * Prints one line per transport of this build: its name, and how many of
 * this rank's peers it carries in comm's job ("not used" when none).
 */
void collie__tools_print_transports(const collie_comm *comm, FILE *out);

/*
 * The name of the algorithm comm would run for collective `coll`
 * ("allreduce", ...) over `bytes` bytes, by the same choice the call makes;
 * NULL for an unknown collective name.
 */
const char *collie__tools_algo(const collie_comm *comm, const char *coll, size_t bytes);

/* Prints every collective with its algorithms (`collie info`). */
void collie__tools_print_algos(FILE *out);

/* Prints the configuration table: name, value, default, meaning (`collie info --config`). */
void collie__tools_print_config(FILE *out);

#endif
