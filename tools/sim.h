/* SPDX-License-Identifier: BSD-3-Clause */
/* sim.h - `collie sim`: the library's cost model as a simulator (tools/sim*.c). */
#ifndef COLLIE_TOOLS_SIM_H
#define COLLIE_TOOLS_SIM_H

#include <stdio.h>

#include "api/tools_api.h"

/*
 * Applies the machine options among argv (--machine FILE first, then
 * --ranks/-n, --hosts, --ranks-per-host, --cores, --links, --link RATE,LAT,
 * --host RATE,LAT, --set KEY=VALUE) to m, marking each argument it took in
 * used[].  0, or -1 with the reason on stderr.
 */
int sim_machine_options(struct collie__machine *m, int argc, char **argv, int *used);

/* Completes m's placement; 0, or -1 with the reason on stderr. */
int sim_machine_ready(struct collie__machine *m);

/* The machine as "# " lines: the description a table was predicted from. */
void sim_machine_header(const struct collie__machine *m, FILE *out);

/* A number > 0 that is all of v (no unit, no trailing text) into *out; 0, or -1. */
int sim_positive(const char *v, double *out);
/* The same for a whole number that fits an int. */
int sim_whole(const char *v, int *out);

/* The machine options' help, shared by `collie sim` and `collie sim train`. */
extern const char sim_machine_usage[];

/* `collie sim train ...` (sim_train.c); argv[0] is "train", used[] what the machine took. */
int sim_train(int argc, char **argv, const int *used, struct collie__machine *m);

#endif
