/* SPDX-License-Identifier: BSD-3-Clause */
/* plot.h - drawing with gnuplot: FILE.png from FILE.png.dat and FILE.png.gp, written beside it. */
#ifndef COLLIE_TOOLS_PLOT_H
#define COLLIE_TOOLS_PLOT_H

#include <stdio.h>

struct tools_plot {
    char dat[1024], gp[1024]; /* the data and the gnuplot script, kept for the user */
    FILE *d, *g;
};

/* Opens PNG.dat and PNG.gp for writing; 0, or -1 with nothing left open. */
int tools_plot_open(struct tools_plot *p, const char *png);

/*
 * Closes both files and runs gnuplot on the script: 0 drawn; 1 gnuplot is
 * not installed (said on stderr, with the command that installs it); -1 failed.
 */
int tools_plot_draw(struct tools_plot *p, const char *png, const char *who);

#endif
