/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tools.h - the subcommands of `collie`; each returns the process exit code.
 * `collie bench` is declared with its own module (bench/bench.h).
 */
#ifndef COLLIE_TOOLS_H
#define COLLIE_TOOLS_H

int collie_tool_run(int argc, char **argv);
int collie_tool_info(int argc, char **argv);

/* `collie timeline FILE`: merges the ranks' COLLIE_TIMELINE traces into one. */
int collie_tool_timeline(int argc, char **argv);
/* `collie sim`: the cost model's predictions for any machine (sim.c). */
int collie_tool_sim(int argc, char **argv);
int collie_tool_train(int argc, char **argv); /* the collie-train executable */

#endif
