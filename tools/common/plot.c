/* SPDX-License-Identifier: BSD-3-Clause */
/* plot.c - see plot.h. */
#include "plot.h"

#include <stdlib.h>

int tools_plot_open(struct tools_plot *p, const char *png)
{
    snprintf(p->dat, sizeof p->dat, "%s.dat", png);
    snprintf(p->gp, sizeof p->gp, "%s.gp", png);
    p->d = fopen(p->dat, "w");
    p->g = fopen(p->gp, "w");
    if (p->d && p->g)
        return 0;
    if (p->d)
        fclose(p->d);
    if (p->g)
        fclose(p->g);
    return -1;
}

int tools_plot_draw(struct tools_plot *p, const char *png, const char *who)
{
    int closed = fclose(p->d) | fclose(p->g);
    if (closed)
        return -1;
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr,
                "%s: gnuplot is not installed, so %s was not drawn; install it with "
                "`apt-get install gnuplot-nox`, then run `gnuplot %s` (the data is in %s)\n",
                who, png, p->gp, p->dat);
        return 1;
    }
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "gnuplot '%s'", p->gp);
    return system(cmd) == 0 ? 0 : -1;
}
