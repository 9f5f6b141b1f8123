/* SPDX-License-Identifier: BSD-3-Clause */
/* train_scaling.h - reporting several `collie train` runs: the scaling table and the plot. */
#ifndef COLLIE_TRAIN_SCALING_H
#define COLLIE_TRAIN_SCALING_H

/*
 * Reads the raw results the runs' rank 0 appended to `raw` (lines "run ..."
 * and "epoch ..."), prints the scaling table if `scaling`, draws `png` if
 * given.  0, or -1 if nothing came back.
 */
int train_report_runs(const char *raw, double target, int scaling, const char *png);

#endif
