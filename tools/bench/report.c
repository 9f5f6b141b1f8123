/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.c - what collie bench shows: the nccl-tests table (with the
 * baseline and a ratio column when there is one), CSV, JSON and a gnuplot
 * drawing.  Rows of repeated rounds are merged by their median.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "../common/plot.h"
#include "report.h"

static double algbw(const struct bench_row *r, double us) { return (double)r->bytes / us / 1e3; }

static double busbw(const struct bench_row *r, double us)
{
    return algbw(r, us) * bench_busbw_factor(r->coll, r->ranks);
}

#define SPREAD_WARN 2.0 /* rounds of one size further apart than this make a figure suspect */

/* bench_merged over the rounds whose probe read at most limit ns (0: every round). */
static int merged_where(const struct bench_rows *rows, const char *backend, int coll, size_t bytes,
                        double limit, struct bench_row *out)
{
    double mean[128], median[128], comm[128], comp[128], cpu[128], handoff = 0;
    int n = 0, total = 0;
    for (size_t i = 0; i < rows->n && n < 128; i++) {
        const struct bench_row *r = &rows->row[i];
        if (r->coll != coll || r->bytes != bytes || strcmp(r->backend, backend))
            continue;
        total++;
        if (limit > 0 && r->handoff_ns > limit)
            continue;
        if (!n)
            *out = *r;
        else if (r->wrong > out->wrong)
            out->wrong = r->wrong;
        comm[n] = r->comm_us;
        comp[n] = r->comp_us;
        cpu[n] = r->comm_cpu_us;
        handoff = r->handoff_ns > handoff ? r->handoff_ns : handoff;
        mean[n] = r->mean_us;
        median[n++] = r->median_us;
    }
    if (!n)
        return 0;
    out->mean_us = bench_median(mean, n);
    out->median_us = bench_median(median, n);
    out->comm_us = bench_median(comm, n);
    out->comp_us = bench_median(comp, n);
    out->comm_cpu_us = bench_median(cpu, n);
    out->min_us = mean[0];
    out->max_us = mean[n - 1];
    out->rounds = n;
    out->rounds_total = total;
    out->handoff_ns = handoff;
    return 1;
}

int bench_merged(const struct bench_rows *rows, const char *backend, int coll, size_t bytes,
                 struct bench_row *out)
{
    return merged_where(rows, backend, coll, bytes, 0, out);
}

/*
 * One size of a table: collie's row (*a) and each baseline's (b[k], where
 * have[k]), merged over the rounds measured in the machine's fast state --
 * probe within SPREAD_WARN of the run's best -- when every library measured
 * at this size has such a round, so that they are compared in the same
 * state; else over every round.
 */
static int merged_size(const struct bench_rows *rows, const struct bench_opts *o, int coll,
                       size_t bytes, double best_ns, struct bench_row *a, struct bench_row *b,
                       int *have)
{
    double limit = best_ns > 0 ? SPREAD_WARN * best_ns : 0;
    int fast = limit > 0 && merged_where(rows, "collie", coll, bytes, limit, a);
    for (int k = 0; k < o->nbaselines; k++) {
        have[k] = merged_where(rows, o->baselines[k], coll, bytes, 0, &b[k]);
        fast = fast && (!have[k] || merged_where(rows, o->baselines[k], coll, bytes, limit, &b[k]));
    }
    if (fast)
        return 1;
    for (int k = 0; k < o->nbaselines; k++)
        have[k] = merged_where(rows, o->baselines[k], coll, bytes, 0, &b[k]);
    return merged_where(rows, "collie", coll, bytes, 0, a);
}

/* Distinct sizes of coll, in the order first measured. */
static size_t sizes_of(const struct bench_rows *rows, int coll, size_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < rows->n; i++) {
        if (rows->row[i].coll != coll)
            continue;
        int seen = 0;
        for (size_t k = 0; k < n && !seen; k++)
            seen = out[k] == rows->row[i].bytes;
        if (!seen)
            out[n++] = rows->row[i].bytes;
    }
    return n;
}

/*
 * What one neighbour step costs beside an allreduce: the most any rank sends
 * per step, in buffers (busbw is then simply algbw: no factor).
 */
static void print_neighbor_bytes(const struct bench_opts *o, int n)
{
    collie_schedule *s;
    if (collie_schedule_from_name(o->topology, n, &s) != COLLIE_OK)
        return;
    int most = 0, steps = collie_schedule_period(s);
    double sum = 0;
    for (int t = 0; t < steps; t++) {
        int step_most = 0;
        for (int r = 0; r < n; r++) {
            int d = collie_topology_out(collie_schedule_step(s, t), r, NULL, NULL, 0);
            step_most = d > step_most ? d : step_most;
        }
        most = step_most > most ? step_most : most;
        sum += step_most;
    }
    printf("# topology %s (%d step%s): each rank sends at most %d x the buffer per step (%.2f on "
           "average), where allreduce's ring sends 2(n-1)/n = %.2f x; busbw = algbw\n",
           o->topology, steps, steps > 1 ? "s" : "", most, sum / steps,
           2.0 * (n - 1) / (n ? n : 1));
    collie_schedule_free(s);
}

/* The fastest and slowest CPU-to-CPU handoff probed among coll's rows; 0 if none was. */
static double handoff_range(const struct bench_rows *rows, int coll, double *worst)
{
    double best = 0;
    *worst = 0;
    for (size_t i = 0; i < rows->n; i++) {
        double h = rows->row[i].handoff_ns;
        if (rows->row[i].coll != coll || h <= 0)
            continue;
        best = best == 0 || h < best ? h : best;
        *worst = h > *worst ? h : *worst;
    }
    return best;
}

/* A baseline's column header: NAME_what, cut to fit. */
static void print_head(const char *name, const char *what, int width)
{
    char h[32];
    snprintf(h, sizeof h, "%s_%s", name, what);
    printf(" %*s", width, h);
}

void bench_print_table(const struct bench_opts *o, const struct bench_rows *rows,
                       const struct bench_stream *stream)
{
    size_t *sizes = malloc((rows->n + 1) * sizeof *sizes);
    const int nb = o->nbaselines;
    for (int k = 0; k < o->ncolls; k++) {
        int c = o->colls[k];
        size_t ns = sizes_of(rows, c, sizes);
        if (!ns)
            continue;
        if (c == BENCH_OVERLAP || c == BENCH_FUSION) {
            (c == BENCH_OVERLAP ? bench_print_overlap : bench_print_fusion)(o, rows, sizes, ns);
            continue;
        }
        struct bench_row a, b[BENCH_MAX_BASELINES];
        int have[BENCH_MAX_BASELINES];
        bench_merged(rows, "collie", c, sizes[0], &a);
        char per_size[64] = "";
        if (o->min_time > 0)
            snprintf(per_size, sizeof per_size, " (or more, to time about %g ms)",
                     o->min_time * 1e3);
        printf("#\n# collie bench %s: %d ranks (%d per host), %s %s, %s, %d iterations%s after "
               "%d warm-up%s\n",
               bench_coll_name(c), a.ranks, a.local_size, bench_dtype_name(o->dtype),
               bench_op_name(o->op), o->inplace ? "in place" : "out of place", o->iters, per_size,
               o->warmup, o->rounds > 1 ? ", median of the rounds" : "");
        printf("# time: mean per operation of the slowest rank; busbw from it, as nccl-tests\n");
        if (nb)
            printf("# ratio: the baseline's time over collie's (above 1: collie is faster)\n");
        if (c == BENCH_NEIGHBOR || c == BENCH_NEIGHBOR_ALLGATHER)
            print_neighbor_bytes(o, a.ranks);
        if (c == BENCH_HIER_NEIGHBOR)
            printf("# topology %s over the hosts; each host's ranks share its messages\n",
                   o->topology);
        double worst, best = handoff_range(rows, c, &worst);
        if (best > 0)
            printf("# machine: a cache line moved between two CPUs in %.0f-%.0f ns during the run "
                   "(cpu2cpu: the slowest probe around each size)\n",
                   best, worst);
        int spread = o->rounds > 1; /* the rounds' min and max beside their median */
        int by_state = spread && best > 0;
        if (by_state)
            printf("# rounds: each median is over the rounds measured in the machine's fast state "
                   "(cpu2cpu within %.0fx of the best) when %s one, else over all; `rounds`: "
                   "those used of all%s\n",
                   SPREAD_WARN, nb ? "every library has" : "there is",
                   nb ? " (the baselines' after the commas)" : "");
        printf("#\n");
        printf("# %12s %12s %9s %6s %11s %11s", "size(B)", "count", "type", "redop", "time(us)",
               "median(us)");
        if (spread)
            printf(" %10s %10s", "min(us)", "max(us)");
        printf(" %12s", "busbw(GB/s)");
        for (int i = 0; i < nb; i++) {
            print_head(o->baselines[i], "time", 11);
            print_head(o->baselines[i], "median", 11);
            print_head(o->baselines[i], "busbw", 12);
            if (nb == 1)
                printf(" %6s", "ratio");
            else
                print_head(o->baselines[i], "ratio", 10);
            if (spread) {
                print_head(o->baselines[i], "min", 10);
                print_head(o->baselines[i], "max", 10);
            }
        }
        if (stream)
            printf(" %7s", "floor%");
        if (best > 0)
            printf(" %11s", "cpu2cpu(ns)");
        if (by_state)
            printf(" %7s", "rounds");
        printf(" %7s  %s\n", "#wrong", "algo");
        double sum_bus = 0, sum_base[BENCH_MAX_BASELINES] = {0};
        int n_bus = 0, n_unsteady = 0, n_machine = 0, n_left_out = 0;
        for (size_t s = 0; s < ns; s++) {
            if (!merged_size(rows, o, c, sizes[s], best, &a, b, have))
                continue;
            printf("%14zu %12zu %9s %6s %11.2f %11.2f", a.bytes, a.count, bench_dtype_name(a.dtype),
                   bench_op_name(a.op), a.mean_us, a.median_us);
            if (spread)
                printf(" %10.2f %10.2f", a.min_us, a.max_us);
            printf(" %12.3f", busbw(&a, a.mean_us));
            double handoff = a.handoff_ns;
            int unsteady = a.rounds > 1 && a.max_us > SPREAD_WARN * a.min_us;
            int left_out = a.rounds < a.rounds_total;
            for (int i = 0; i < nb; i++) {
                int rw = nb == 1 ? 6 : 10;
                if (have[i])
                    printf(" %11.2f %11.2f %12.3f %*.2f", b[i].mean_us, b[i].median_us,
                           busbw(&b[i], b[i].mean_us), rw, b[i].mean_us / a.mean_us);
                else
                    printf(" %11s %11s %12s %*s", "-", "-", "-", rw, "-");
                if (spread && have[i])
                    printf(" %10.2f %10.2f", b[i].min_us, b[i].max_us);
                else if (spread)
                    printf(" %10s %10s", "-", "-");
                if (!have[i])
                    continue;
                handoff = b[i].handoff_ns > handoff ? b[i].handoff_ns : handoff;
                unsteady |= b[i].rounds > 1 && b[i].max_us > SPREAD_WARN * b[i].min_us;
                left_out |= b[i].rounds < b[i].rounds_total;
                sum_base[i] += busbw(&b[i], b[i].mean_us);
            }
            if (stream) {
                double floor_us = bench_floor_us(stream, &a);
                if (floor_us > 0)
                    printf(" %6.0f%%", 100 * floor_us / a.mean_us);
                else
                    printf(" %7s", "");
            }
            int machine = best > 0 && handoff > SPREAD_WARN * best;
            if (best > 0 && handoff > 0) /* the mark in the column: a row's end is its algorithm */
                printf(" %10.0f%c", handoff, machine ? '*' : ' ');
            else if (best > 0)
                printf(" %10s ", "-");
            char cell[64];
            if (by_state) {
                int w = snprintf(cell, sizeof cell, "%d/%d", a.rounds, a.rounds_total);
                for (int i = 0; i < nb && w < (int)sizeof cell; i++)
                    w += have[i] ? snprintf(cell + w, sizeof cell - (size_t)w, ",%d", b[i].rounds)
                                 : snprintf(cell + w, sizeof cell - (size_t)w, ",-");
                printf(" %7s", cell);
            }
            int w = snprintf(cell, sizeof cell, "%lld", a.wrong);
            for (int i = 0; i < nb && w < (int)sizeof cell; i++)
                w += have[i] ? snprintf(cell + w, sizeof cell - (size_t)w, "/%lld", b[i].wrong)
                             : snprintf(cell + w, sizeof cell - (size_t)w, "/-");
            printf(" %7s", cell);
            printf("  %s%s\n", a.algo, unsteady ? "  <- rounds differ > 2x" : "");
            n_unsteady += unsteady;
            n_machine += machine;
            n_left_out += left_out;
            sum_bus += busbw(&a, a.mean_us);
            n_bus++;
        }
        if (n_unsteady) {
            printf("# warning: at %d size(s) the slowest round took over %.0fx the fastest: the "
                   "machine was not steady (or the waiting is bimodal); do not publish these "
                   "medians alone\n",
                   n_unsteady, SPREAD_WARN);
            fflush(stdout);
            fprintf(stderr,
                    "collie bench: warning: %s: rounds differ by more than %.0fx at %d size(s) "
                    "(marked in the table)\n",
                    bench_coll_name(c), SPREAD_WARN, n_unsteady);
        }
        if (n_left_out)
            printf("# note: at %d size(s), rounds measured in the machine's slow state were left "
                   "out (column rounds)\n",
                   n_left_out);
        if (n_machine) {
            printf("# warning: at %d size(s) a cache line took over %.0fx as long to move between "
                   "CPUs as at the best (%.0f against %.0f ns)%s: the host moved the CPUs under "
                   "the job, and those figures show the machine's slow state, not the library's "
                   "(marked * in cpu2cpu)\n",
                   n_machine, SPREAD_WARN, worst, best, by_state ? " in every round used" : "");
            fflush(stdout);
            fprintf(stderr,
                    "collie bench: warning: %s: the machine slowed down at %d size(s): CPU-to-CPU "
                    "handoff %.0f ns against %.0f (marked * in the table)\n",
                    bench_coll_name(c), n_machine, worst, best);
        }
        if (n_bus) {
            printf("# Avg bus bandwidth    : %g\n", sum_bus / n_bus);
            for (int i = 0; i < nb; i++)
                printf("# Avg bus bandwidth, %s: %g\n", o->baselines[i], sum_base[i] / n_bus);
        }
    }
    free(sizes);
}

void bench_machine(struct bench_machine *m)
{
    snprintf(m->cpu, sizeof m->cpu, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(m->cpu, sizeof m->cpu, "%s", strchr(line, ':') + 2);
            m->cpu[strcspn(m->cpu, "\n")] = 0;
            break;
        }
    if (f)
        fclose(f);
    m->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(m->version, sizeof m->version, "%s", collie_version());
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    fputc('"', f);
}

int bench_write_csv(const char *path, const struct bench_rows *rows, const struct bench_machine *m,
                    const struct bench_stream *stream)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "backend,collective,round,ranks,ranks_per_host,bytes,count,dtype,op,inplace,"
               "time_us,median_us,algbw_GBps,busbw_GBps,wrong,algo,cpu,cores,collie_version,"
               "handoff_ns,floor_us\n");
    for (size_t i = 0; i < rows->n; i++) {
        const struct bench_row *r = &rows->row[i];
        fprintf(
            f,
            "%s,%s,%d,%d,%d,%zu,%zu,%s,%s,%d,%.3f,%.3f,%.4f,%.4f,%lld,%s,\"%s\",%d,%s,%.1f,%.1f\n",
            r->backend, bench_coll_name(r->coll), r->round, r->ranks, r->local_size, r->bytes,
            r->count, bench_dtype_name(r->dtype), bench_op_name(r->op), r->inplace, r->mean_us,
            r->median_us, algbw(r, r->mean_us), busbw(r, r->mean_us), r->wrong, r->algo, m->cpu,
            m->cores, m->version, r->handoff_ns, stream ? bench_floor_us(stream, r) : 0.0);
    }
    return fclose(f) ? -1 : 0;
}

int bench_write_json(const char *path, const struct bench_rows *rows, const struct bench_machine *m,
                     const struct bench_stream *stream)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\n  \"machine\": {\"cpu\": ");
    json_string(f, m->cpu);
    fprintf(f, ", \"cores\": %d, \"ranks_per_host\": %d, \"collie_version\": \"%s\"", m->cores,
            rows->n ? rows->row[0].local_size : 0, m->version);
    if (stream)
        fprintf(f,
                ",\n    \"stream_GBps\": {\"copy_1\": %.2f, \"triad_1\": %.2f, \"copy_all\": "
                "%.2f, \"triad_all\": %.2f}",
                stream->copy1, stream->triad1, stream->copy_all, stream->triad_all);
    fprintf(f, "},\n  \"rows\": [");
    for (size_t i = 0; i < rows->n; i++) {
        const struct bench_row *r = &rows->row[i];
        fprintf(f,
                "%s\n    {\"backend\": \"%s\", \"collective\": \"%s\", \"round\": %d, "
                "\"ranks\": %d, \"ranks_per_host\": %d, \"bytes\": %zu, \"count\": %zu, "
                "\"dtype\": \"%s\", \"op\": \"%s\", \"inplace\": %s, \"time_us\": %.3f, "
                "\"median_us\": %.3f, \"algbw_GBps\": %.4f, \"busbw_GBps\": %.4f, "
                "\"wrong\": %lld, \"algo\": \"%s\", \"handoff_ns\": %.1f}",
                i ? "," : "", r->backend, bench_coll_name(r->coll), r->round, r->ranks,
                r->local_size, r->bytes, r->count, bench_dtype_name(r->dtype), bench_op_name(r->op),
                r->inplace ? "true" : "false", r->mean_us, r->median_us, algbw(r, r->mean_us),
                busbw(r, r->mean_us), r->wrong, r->algo, r->handoff_ns);
    }
    fprintf(f, "\n  ]\n}\n");
    return fclose(f) ? -1 : 0;
}

/* One data block per (backend, collective): size, busbw, time (medians of rounds). */
int bench_plot(const char *png, const struct bench_opts *o, const struct bench_rows *rows)
{
    struct tools_plot p;
    if (tools_plot_open(&p, png))
        return -1;
    FILE *d = p.d, *g = p.g;
    const char *dat = p.dat;
    size_t *sizes = malloc((rows->n + 1) * sizeof *sizes);
    const char *backends[1 + BENCH_MAX_BASELINES] = {"collie"};
    for (int i = 0; i < o->nbaselines; i++)
        backends[1 + i] = o->baselines[i];
    int block = 0;
    char titles[32][64];
    for (int k = 0; k < o->ncolls; k++)
        for (int bi = 0; bi <= o->nbaselines; bi++) {
            size_t ns = sizes_of(rows, o->colls[k], sizes);
            double worst, best = o->rounds > 1 ? handoff_range(rows, o->colls[k], &worst) : 0;
            struct bench_row a, b[BENCH_MAX_BASELINES];
            int have[BENCH_MAX_BASELINES], any = 0;
            const struct bench_row *r = bi ? &b[bi - 1] : &a;
            for (size_t s = 0; s < ns; s++)
                if (merged_size(rows, o, o->colls[k], sizes[s], best, &a, b, have) &&
                    (bi == 0 || have[bi - 1])) {
                    if (!any)
                        fprintf(d, "# %s %s\n", backends[bi], bench_coll_name(o->colls[k]));
                    fprintf(d, "%zu %.6f %.3f\n", r->bytes, busbw(r, r->mean_us), r->mean_us);
                    any = 1;
                }
            if (any && block < 32) {
                snprintf(titles[block++], sizeof titles[0], "%s %s", backends[bi],
                         bench_coll_name(o->colls[k]));
                fprintf(d, "\n\n");
            }
        }
    free(sizes);
    int ranks = rows->n ? rows->row[0].ranks : 0;
    fprintf(g,
            "set terminal pngcairo size 1400,560 noenhanced font ',10'\n"
            "set output '%s'\nset multiplot layout 1,2 title 'collie bench: %d ranks, %s %s'\n"
            "set logscale x 2\nset format x '%%.0b%%B'\nset xlabel 'size'\nset grid\n"
            "set key top left\nset ylabel 'busbw (GB/s)'\nset title 'bus bandwidth'\n"
            "plot ",
            png, ranks, bench_dtype_name(o->dtype), bench_op_name(o->op));
    for (int i = 0; i < block; i++)
        fprintf(g, "%s'%s' index %d using 1:2 with linespoints title '%s'", i ? ", " : "", dat, i,
                titles[i]);
    fprintf(g, "\nset logscale y 10\nset ylabel 'time per operation (us)'\nset title 'time'\n"
               "set key top left\nplot ");
    for (int i = 0; i < block; i++)
        fprintf(g, "%s'%s' index %d using 1:3 with linespoints title '%s'", i ? ", " : "", dat, i,
                titles[i]);
    fprintf(g, "\nunset multiplot\n");
    return tools_plot_draw(&p, png, "collie bench");
}
