/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_train.c - `collie sim train`: a data-parallel step predicted at any
 * scale.  A step is compute (a third forward, two thirds backward) and the
 * gradients' synchronization, in buckets that the backward pass fills in
 * order, each sent as soon as it is full and the previous one is done (as
 * the asynchronous core and DDP overlap them), or all after the backward
 * pass with --no-overlap.  Throughput, scaling efficiency (BlueFog:
 * throughput_N / (N x throughput_1)) and linearity (ACSpeed: multi-host
 * throughput / one host's / hosts) per rank count, for each --sync given.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "common/plot.h"
#include "sim.h"

#define MAX_SYNCS 8
#define MAX_RANKS_LIST 64

static const struct {
    const char *name;
    double params;
} models[] = {{"resnet50", 25557032}, {"resnet18", 11689512}, {"vgg16", 138357544}};

struct sync {
    const char *label;
    const char *coll; /* "allreduce", "neighbor_allreduce", "hierarchical_neighbor_allreduce" */
    const char *algo; /* NULL: the library's choice */
};

struct train_opts {
    double params, sample_s;
    int batch, overlap, degree, elem, nsyncs, nranks;
    size_t bucket;
    int ranks[MAX_RANKS_LIST];
    struct sync syncs[MAX_SYNCS];
    char sync_text[MAX_SYNCS][64];
    const char *plot, *csv;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: collie sim train [options]\n"
            "  --model NAME          resnet50, resnet18 or vgg16 (their parameter counts)\n"
            "  --params N            or the parameter count (25.6M, 1e6, ...)\n"
            "  --sample-ms T         compute of one sample on one rank, forward and backward\n"
            "  --batch B             samples per rank per step (default 32)\n"
            "  -d, --dtype T         gradients' type (default float32)\n"
            "  --bucket SIZE         bytes per bucket (default 25M, as DDP)\n"
            "  --no-overlap          synchronize after the backward pass, not during it\n"
            "  --sync LIST           allreduce, allreduce:ALGO (ring, hierarchical, ...),\n"
            "                        neighbor (--degree peers), hierarchical-neighbor\n"
            "                        (default allreduce)\n"
            "  --degree D            peers per rank in neighbour averaging (default 1: one-peer)\n"
            "  --scale LIST          rank counts (default 1,2,4,... up to --ranks)\n"
            "  --plot FILE.png       throughput and scaling efficiency against ranks\n"
            "  --csv FILE            the rows as CSV\n"
            "\n%s",
            sim_machine_usage);
}

static int add_sync(struct train_opts *o, const char *item, size_t len)
{
    if (o->nsyncs == MAX_SYNCS || len >= sizeof o->sync_text[0])
        return -1;
    char *text = o->sync_text[o->nsyncs];
    memcpy(text, item, len);
    text[len] = '\0';
    struct sync *s = &o->syncs[o->nsyncs];
    s->label = text;
    s->algo = NULL;
    if (!strcmp(text, "allreduce"))
        s->coll = "allreduce";
    else if (!strncmp(text, "allreduce:", 10))
        s->coll = "allreduce", s->algo = text + 10;
    else if (!strcmp(text, "neighbor"))
        s->coll = "neighbor_allreduce";
    else if (!strcmp(text, "hierarchical-neighbor"))
        s->coll = "hierarchical_neighbor_allreduce";
    else
        return -1;
    o->nsyncs++;
    return 0;
}

static int parse_list(const char *v, struct train_opts *o, int scale)
{
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        if (scale) {
            char *end;
            long r = strtol(p, &end, 10);
            if (end != p + len || r < 1 || r > 1 << 30 || o->nranks == MAX_RANKS_LIST)
                return -1;
            o->ranks[o->nranks++] = (int)r;
        } else if (add_sync(o, p, len)) {
            return -1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

static int parse(int argc, char **argv, const int *used, struct train_opts *o)
{
    o->batch = 32;
    o->overlap = 1;
    o->degree = 1;
    o->elem = 4;
    o->bucket = 25u << 20;
    for (int i = 1; i < argc; i++) { /* argv[0] is "train" */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (used[i])
            continue;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--no-overlap")) {
            o->overlap = 0;
            continue;
        }
        if (!v) {
            fprintf(stderr, "collie sim train: unknown option or missing value: %s\n", a);
            return -1;
        }
        i++;
        int bad = 0;
        if (!strcmp(a, "--model")) {
            bad = 1;
            for (size_t k = 0; k < sizeof models / sizeof models[0]; k++)
                if (!strcmp(v, models[k].name))
                    o->params = models[k].params, bad = 0;
        } else if (!strcmp(a, "--params")) {
            char *end;
            o->params = strtod(v, &end);
            if (*end == 'M')
                o->params *= 1e6, end++;
            else if (*end == 'K' || *end == 'k')
                o->params *= 1e3, end++;
            bad = *end || !(o->params >= 1);
        } else if (!strcmp(a, "--sample-ms")) {
            bad = sim_positive(v, &o->sample_s);
            o->sample_s *= 1e-3;
        } else if (!strcmp(a, "--batch")) {
            bad = sim_whole(v, &o->batch);
        } else if (!strcmp(a, "-d") || !strcmp(a, "--dtype")) {
            int t = bench_dtype_by_name(v);
            bad = t < 0;
            o->elem = t < 0 ? 0 : (int)bench_dtype_size((collie_dtype)t);
        } else if (!strcmp(a, "--bucket")) {
            bad = bench_parse_bytes(v, &o->bucket) || !o->bucket;
        } else if (!strcmp(a, "--sync")) {
            bad = parse_list(v, o, 0);
        } else if (!strcmp(a, "--degree")) {
            bad = sim_whole(v, &o->degree);
        } else if (!strcmp(a, "--scale")) {
            bad = parse_list(v, o, 1);
        } else if (!strcmp(a, "--plot")) {
            o->plot = v;
        } else if (!strcmp(a, "--csv")) {
            o->csv = v;
        } else {
            fprintf(stderr, "collie sim train: unknown option %s (collie sim train -h)\n", a);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "collie sim train: %s '%s': not a valid value\n", a, v);
            return -1;
        }
    }
    if (!(o->params > 0) || !(o->sample_s > 0)) {
        fprintf(stderr, "collie sim train: give the model (--model or --params) and its "
                        "compute (--sample-ms)\n");
        return -1;
    }
    if (!o->nsyncs)
        add_sync(o, "allreduce", 9);
    return 0;
}

struct step {
    double time, comm, exposed;
    const char *algo;
};

/*
 * One step on machine m: buckets filled by the backward pass in order; each
 * starts when it is full and the one before it is done.
 */
static int step_on(const struct collie__machine *m, const struct train_opts *o,
                   const struct sync *s, struct step *out)
{
    double compute = o->sample_s * o->batch, forward = compute / 3, backward = compute - forward;
    double total = o->params * o->elem, done = 0, free_at = 0, comm = 0;
    out->algo = "-";
    if ((int)collie__tools_machine_get(m, "ranks") > 1) {
        for (double sent = 0; sent < total; sent += (double)o->bucket) {
            double bytes = fmin((double)o->bucket, total - sent), t;
            double ready = o->overlap ? forward + backward * (sent + bytes) / total : compute;
            if (collie__tools_predict(m, s->coll, s->algo, (size_t)bytes, o->degree, &t,
                                      &out->algo))
                return -1;
            free_at = fmax(free_at, ready) + t;
            comm += t;
        }
        done = free_at;
    }
    out->time = fmax(compute, done);
    out->comm = comm;
    out->exposed = out->time - compute;
    return 0;
}

/* The machine with n ranks on as many hosts as the description's ranks per host need. */
static int place(struct collie__machine *m, int n, int per_host)
{
    char ranks[32], hosts[32], rph[32], err[512];
    int L = per_host < n ? per_host : n;
    snprintf(ranks, sizeof ranks, "%d", n);
    snprintf(hosts, sizeof hosts, "%d", (n + L - 1) / L);
    snprintf(rph, sizeof rph, "%d", L);
    if (collie__tools_machine_set(m, "ranks", ranks, err, sizeof err) ||
        collie__tools_machine_set(m, "hosts", hosts, err, sizeof err) ||
        collie__tools_machine_set(m, "ranks_per_host", rph, err, sizeof err) ||
        collie__tools_machine_check(m, err, sizeof err)) {
        fprintf(stderr, "collie sim train: %d ranks: %s\n", n, err);
        return -1;
    }
    return 0;
}

static int plot(const struct train_opts *o, const double *thr)
{
    struct tools_plot p;
    if (tools_plot_open(&p, o->plot))
        return -1;
    for (int s = 0; s < o->nsyncs; s++) { /* block s: ranks throughput efficiency */
        fprintf(p.d, "# %s\n", o->syncs[s].label);
        for (int k = 0; k < o->nranks; k++)
            fprintf(p.d, "%d %.6g %.6g\n", o->ranks[k], thr[s * o->nranks + k], /* efficiency: */
                    thr[s * o->nranks + k] * o->sample_s / o->ranks[k]); /* over n x 1/sample */
        fprintf(p.d, "\n\n");
    }
    fprintf(p.g,
            "set terminal pngcairo size 1100,440 noenhanced font ',10'\nset output '%s'\n"
            "set multiplot layout 1,2 title 'collie sim train (predicted)'\nset grid\n"
            "set logscale x 2\nset xlabel 'ranks'\nset key top left\n"
            "set ylabel 'samples/s'\nset title 'throughput'\nplot ",
            o->plot);
    for (int s = 0; s < o->nsyncs; s++)
        fprintf(p.g, "%s'%s' index %d using 1:2 with linespoints title '%s'", s ? ", " : "", p.dat,
                s, o->syncs[s].label);
    fprintf(p.g, "\nset key bottom left\nset ylabel 'scaling efficiency'\nset yrange [0:1.05]\n"
                 "set title 'throughput / (ranks x one rank)'\nplot ");
    for (int s = 0; s < o->nsyncs; s++)
        fprintf(p.g, "%s'%s' index %d using 1:3 with linespoints title '%s'", s ? ", " : "", p.dat,
                s, o->syncs[s].label);
    fprintf(p.g, "\nunset multiplot\n");
    return tools_plot_draw(&p, o->plot, "collie sim train") < 0 ? -1 : 0;
}

int sim_train(int argc, char **argv, const int *used, struct collie__machine *m)
{
    struct train_opts o = {0};
    if (parse(argc, argv, used, &o) || sim_machine_ready(m))
        return 2;
    int top = (int)collie__tools_machine_get(m, "ranks");
    int per_host = (int)collie__tools_machine_get(m, "ranks_per_host");
    if (!o.nranks)
        for (int r = 1; r <= top && o.nranks < MAX_RANKS_LIST; r *= 2)
            o.ranks[o.nranks++] = r;
    double *thr = calloc((size_t)(o.nsyncs * o.nranks), sizeof *thr);
    FILE *csv = o.csv ? fopen(o.csv, "w") : NULL;
    if (!thr || (o.csv && !csv)) {
        perror(o.csv ? o.csv : "collie sim train");
        free(thr);
        return 1;
    }
    if (csv)
        fprintf(csv, "sync,ranks,hosts,step_ms,comm_ms,exposed_ms,samples_per_s,efficiency,"
                     "linearity,algo\n");
    double compute = o.sample_s * o.batch, one = o.batch / compute;
    sim_machine_header(m, stdout);
    printf("# collie sim train: %.4g M parameters, %.4g MB of gradients in %.4g MB buckets, "
           "%s; compute %.2f ms a step (%d samples x %.3f ms)\n",
           o.params / 1e6, o.params * o.elem / 1e6, (double)o.bucket / 1e6,
           o.overlap ? "overlapped with the backward pass" : "after the backward pass",
           compute * 1e3, o.batch, o.sample_s * 1e3);
    int rc = 0;
    for (int s = 0; s < o.nsyncs && !rc; s++) {
        printf("#\n# sync %s\n#%6s %6s %10s %10s %11s %12s %10s %9s  %s\n", o.syncs[s].label,
               "ranks", "hosts", "step(ms)", "comm(ms)", "exposed(ms)", "samples/s", "efficiency",
               "linearity", "algo");
        double host_thr = 0;
        for (int k = 0; k < o.nranks && !rc; k++) {
            struct step st;
            int n = o.ranks[k], hosts = (n + per_host - 1) / per_host;
            if (place(m, n, per_host) || step_on(m, &o, &o.syncs[s], &st)) {
                fprintf(stderr, "collie sim train: --sync %s: no such algorithm\n",
                        o.syncs[s].label);
                rc = 2;
                break;
            }
            double t = n * o.batch / st.time, eff = t / (n * one);
            thr[s * o.nranks + k] = t;
            if (n == per_host)
                host_thr = t;
            char lin[16] = "-";
            if (hosts > 1 && host_thr > 0)
                snprintf(lin, sizeof lin, "%.3f", t / host_thr / hosts);
            printf("%7d %6d %10.2f %10.2f %11.2f %12.1f %10.3f %9s  %s\n", n, hosts, st.time * 1e3,
                   st.comm * 1e3, st.exposed * 1e3, t, eff, lin, st.algo);
            if (csv)
                fprintf(csv, "%s,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%s\n", o.syncs[s].label, n,
                        hosts, st.time * 1e3, st.comm * 1e3, st.exposed * 1e3, t, eff, lin,
                        st.algo);
        }
    }
    if (csv && fclose(csv))
        rc = 1;
    if (!rc && o.plot && plot(&o, thr))
        rc = 1;
    free(thr);
    return rc;
}
