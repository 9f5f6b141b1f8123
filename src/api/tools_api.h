/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tools_api.h - the small internal API that the `collie` command (tools/)
 * uses beyond collie.h: what `collie info` shows, which algorithm
 * `collie bench` reports, and the cost model `collie sim` predicts with.
 * The only private header the tools may include (scripts/check_layers.sh
 * enforces it); none of it is ABI, and no struct's layout shows here.
 */
#ifndef COLLIE_TOOLS_API_H
#define COLLIE_TOOLS_API_H

#include <stddef.h>
#include <stdio.h>

#include "collie.h"

/* Whether this process is a rank of a job: any launcher's rank variable that collie_init reads is set. */
int collie__tools_in_a_job(void);

/*
 * Whose variables named comm's ranks ("Slurm", "Open MPI", ...) and where
 * rank 0's address came from (a variable, the launcher's PMIx or PMI-2
 * store, Slurm's step); "?" for a NULL comm.
 */
const char *collie__tools_launcher(const collie_comm *comm);
const char *collie__tools_rendezvous(const collie_comm *comm);

/* Where collie_allreduce_ef on comm runs its error-feedback codes, in words. */
const char *collie__tools_ef(const collie_comm *comm);

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

/*
 * Forces comm's algorithms as COLLIE_ALGO would ("allreduce:direct"), after
 * init: every rank of comm alike (`collie bench --tune` measures an
 * algorithm the model would not choose).  INVALID_ARG or UNSUPPORTED,
 * naming the cause, where it is unknown or this job cannot run it.
 */
collie_status collie__tools_force(collie_comm *comm, const char *spec);

/* Whether comm's ranks on this host copy each other's buffers directly (cross-memory attach). */
int collie__tools_attach(const collie_comm *comm);

/* The microseconds of one such copy's system call, as comm measured it at init; 0: none. */
double collie__tools_attach_call_us(const collie_comm *comm);
/* The GB/s of such a copy beside its call, as comm measured it at init; 0: none. */
double collie__tools_attach_gbs(const collie_comm *comm);

/* Whether comm measured the links between its hosts at init (COLLIE_NET_PROBE). */
int collie__tools_links_measured(const collie_comm *comm);

/*
 * The cost model's machine (src/coll/cost.h), opaque: its placement and its
 * rates, which a description file or "key = value" settings give.
 */
struct collie__machine;

/*
 * A machine with no ranks yet and the library's rates (the defaults, or
 * COLLIE_MACHINE's file: an error reading it goes to err, and the defaults
 * stay); NULL when out of memory.
 */
struct collie__machine *collie__tools_machine_new(char *err, size_t errlen);
void collie__tools_machine_free(struct collie__machine *m);

/* The placement of comm's job (ranks, hosts, ranks per host, cores, slot, attach) into m. */
void collie__tools_machine_place(struct collie__machine *m, const collie_comm *comm);

/* The links' rates comm measured at init into m, where it measured them (else m's stay). */
void collie__tools_machine_links(struct collie__machine *m, const collie_comm *comm);

/* One key of the description file ("link_bandwidth_gbs", "0.125"); 0, or -1 with err. */
int collie__tools_machine_set(struct collie__machine *m, const char *key, const char *value,
                              char *err, size_t errlen);

/* Reads a description file over m; 0, or -1 with err naming the file and line. */
int collie__tools_machine_read(struct collie__machine *m, const char *path, char *err,
                               size_t errlen);

/* Completes the placement (ranks per host from ranks and hosts); 0, or -1 with err. */
int collie__tools_machine_check(struct collie__machine *m, char *err, size_t errlen);

/* Writes m as a description file. */
void collie__tools_machine_write(const struct collie__machine *m, FILE *out);

/* The value of one key of m in the file's unit (GB/s, us), or NaN for an unknown key. */
double collie__tools_machine_get(const struct collie__machine *m, const char *key);

/*
 * The predicted seconds of collective `coll` over `bytes` (count x element
 * size, as the API call takes it; the neighbour operations send to `degree`
 * peers) on m, by algorithm `algo`, or by the one the library would choose
 * when algo is NULL; *chosen gets its name.  -1 for an unknown collective or
 * an algorithm it does not have.
 */
int collie__tools_predict(const struct collie__machine *m, const char *coll, const char *algo,
                          size_t bytes, int degree, double *seconds, const char **chosen);

/* Prints every collective with its algorithms (`collie info`). */
void collie__tools_print_algos(FILE *out);

/* Prints the configuration table: name, value, default, meaning (`collie info --config`). */
void collie__tools_print_config(FILE *out);
/* Prints the configuration reference, docs/CONFIGURATION.md (`collie info --config-markdown`). */
void collie__tools_print_config_markdown(FILE *out);

#endif
