/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * train_scaling.c - `collie train ... --scaling 1,2,4,8` and `--plot`: the
 * driver runs the same job at each rank count, reads back what rank 0 of
 * each wrote (raw lines, see train_write_raw), and reports BlueFog's
 * scaling efficiency, throughput_N / (N x throughput_1), the speedup and the
 * time to accuracy per rank count; the plot shows test accuracy and loss
 * against wall time for every run, and the speedup against the ideal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/plot.h"
#include "train_scaling.h"

/* One run's summary and epochs, as read back. */
struct run {
    int ranks, epoch_to_target, epochs;
    double thr, ci, ttt, acc, compute, comm;
    double wall[512], loss[512], test[512];
};

static int read_runs(const char *path, struct run *runs, int max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        struct run *r = n ? &runs[n - 1] : NULL;
        double wall, loss, test;
        int ranks, epoch;
        if (!strncmp(line, "run ", 4) && n < max) {
            r = &runs[n++];
            memset(r, 0, sizeof *r);
            if (sscanf(line + 4, "%d %lf %lf %lf %d %lf %lf %lf", &r->ranks, &r->thr, &r->ci,
                       &r->ttt, &r->epoch_to_target, &r->acc, &r->compute, &r->comm) != 8)
                n--;
        } else if (r &&
                   sscanf(line, "epoch %d %d %lf %lf %lf", &ranks, &epoch, &wall, &loss, &test) ==
                       5 &&
                   ranks == r->ranks && r->epochs < 512) {
            r->wall[r->epochs] = wall;
            r->loss[r->epochs] = loss;
            r->test[r->epochs++] = test;
        }
    }
    fclose(f);
    return n;
}

static void print_table(const struct run *runs, int n, double target)
{
    printf("#\n# scaling: efficiency = throughput_N / (N x throughput_1), as BlueFog reports it\n");
    printf("# %5s %14s %10s %8s %10s %12s %6s %9s %12s\n", "ranks", "samples/s", "+-", "speedup",
           "efficiency", "tta(s)", "epoch", "final_acc", "comm/compute");
    /* throughput of one rank: measured, or the first run's per rank if it had more */
    double one = runs[0].thr / runs[0].ranks;
    for (int i = 0; i < n; i++) {
        const struct run *r = &runs[i];
        double speedup = one > 0 ? r->thr / one : 0;
        char tta[32] = "-", ep[16] = "-";
        if (target > 0 && r->ttt >= 0) {
            snprintf(tta, sizeof tta, "%.1f", r->ttt);
            snprintf(ep, sizeof ep, "%d", r->epoch_to_target);
        }
        printf("  %5d %14.1f %10.1f %8.2f %10.2f %12s %6s %9.4f %12.2f\n", r->ranks, r->thr, r->ci,
               speedup, speedup / r->ranks, tta, ep, r->acc,
               r->compute > 0 ? r->comm / r->compute : 0);
    }
}

static int plot(const char *png, const struct run *runs, int n)
{
    struct tools_plot p;
    if (tools_plot_open(&p, png))
        return -1;
    FILE *d = p.d, *g = p.g;
    const char *dat = p.dat;
    for (int i = 0; i < n; i++) { /* blocks 0..n-1: wall loss accuracy per epoch */
        fprintf(d, "# %d ranks\n", runs[i].ranks);
        for (int e = 0; e < runs[i].epochs; e++)
            fprintf(d, "%.3f %.6f %.6f\n", runs[i].wall[e], runs[i].loss[e], runs[i].test[e]);
        fprintf(d, "\n\n");
    }
    fprintf(d, "# scaling: ranks speedup\n"); /* block n */
    for (int i = 0; i < n; i++)
        fprintf(d, "%d %.4f\n", runs[i].ranks,
                runs[0].thr > 0 ? runs[i].thr / (runs[0].thr / runs[0].ranks) : 0);
    fprintf(g,
            "set terminal pngcairo size 1500,480 noenhanced font ',10'\nset output '%s'\n"
            "set multiplot layout 1,3 title 'collie train'\nset grid\nset key bottom right\n"
            "set xlabel 'wall time (s)'\nset ylabel 'test accuracy'\nset title 'accuracy'\nplot ",
            png);
    for (int i = 0; i < n; i++)
        fprintf(g, "%s'%s' index %d using 1:3 with linespoints title '%d ranks'", i ? ", " : "",
                dat, i, runs[i].ranks);
    fprintf(g, "\nset key top right\nset ylabel 'training loss'\nset title 'loss'\nplot ");
    for (int i = 0; i < n; i++)
        fprintf(g, "%s'%s' index %d using 1:2 with linespoints title '%d ranks'", i ? ", " : "",
                dat, i, runs[i].ranks);
    fprintf(g,
            "\nset key top left\nset xlabel 'ranks'\nset ylabel 'speedup'\nset title 'throughput "
            "scaling'\n"
            "plot '%s' index %d using 1:2 with linespoints title 'measured', x with lines title "
            "'ideal'\n"
            "unset multiplot\n",
            dat, n);
    return tools_plot_draw(&p, png, "collie train");
}

int train_report_runs(const char *raw, double target, int scaling, const char *png)
{
    static struct run runs[16];
    int n = read_runs(raw, runs, 16);
    if (n <= 0) {
        fprintf(stderr, "collie train: no results came back from the runs\n");
        return -1;
    }
    if (scaling)
        print_table(runs, n, target);
    if (png && plot(png, runs, n) < 0)
        fprintf(stderr, "collie train: drawing %s failed\n", png);
    return 0;
}
