/* SPDX-License-Identifier: BSD-3-Clause */
/* launch.h - what the subcommands that start their own jobs (bench, train) share. */
#ifndef COLLIE_TOOLS_LAUNCH_H
#define COLLIE_TOOLS_LAUNCH_H

#include <stddef.h>

/* Whether this process is a rank of a job (any launcher's rank variable is set). */
int tools_in_a_job(void);

/* The path of the running `collie` executable; 0, or -1. */
int tools_self_path(char *buf, size_t len);

/* The path of executable `name` in the directory of the running one; 0, or -1. */
int tools_sibling_path(const char *name, char *buf, size_t len);

/*
 * Runs argv (argv[0] looked up in PATH) and waits; 0 if it exited with
 * status 0.  A SIGINT, SIGTERM or SIGHUP this process gets meanwhile goes
 * to the job (`collie run` stops its ranks), and this process goes on once
 * the job has ended: tools_interrupted() then says which signal came.
 */
int tools_run_job(char **argv);

/* The signal a job was stopped by through tools_run_job, or 0. */
int tools_interrupted(void);

#endif
