/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim.c - `collie sim COLL`: the table `collie bench` would print, predicted
 * by the library's own cost model (src/coll/cost.c) for any machine, at any
 * scale.  The model is analytical, one formula per algorithm, so 65,536
 * ranks cost what 2 do; the algorithm column is the one the library would
 * choose on that machine (or --algo's).
 */
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "sim.h"
#include "tools.h"

const char sim_machine_usage[] =
    "machine (a description file first, then the options over it):\n"
    "  --machine FILE        a description, as `collie bench --tune FILE` writes it\n"
    "  -n, --ranks N         ranks\n"
    "  --hosts H             hosts (default 1); ranks are placed in blocks\n"
    "  --ranks-per-host L    the most on one host (default: ranks / hosts)\n"
    "  --cores C             CPUs per host for the ranks (default: as many as ranks)\n"
    "  --link RATE,LATENCY   between hosts, each way: e.g. 25gbit,5us  10GB/s,2us\n"
    "  --links K             links per host used at once (default 1)\n"
    "  --host RATE,LATENCY   within a host: a core's copy rate, one sync: e.g. 8GB/s,0.5us\n"
    "  --set KEY=VALUE       any key of the description (host_switch_us, slot_bytes, ...)\n"
    "Without them the rates are the library's: its defaults, or COLLIE_MACHINE's file.\n";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: collie sim COLL[,COLL...]|all [options]   predicted collective times\n"
            "       collie sim train [options]                predicted training scaling\n"
            "                                                 (collie sim train -h)\n"
            "\n"
            "COLL: allreduce broadcast reduce allgather reduce_scatter alltoall\n"
            "      neighbor_allreduce neighbor_allgather hierarchical_neighbor_allreduce\n"
            "\n"
            "  -b, -e, -f SIZE       sizes from -b to -e by factor -f (default 4, 64M, 4),\n"
            "                        total bytes as `collie bench` counts them\n"
            "  --sizes mlbench       MLBench's 80 element counts\n"
            "  -d, --dtype T         element type (default float32)\n"
            "  --algo NAME           predict this algorithm, not the library's choice\n"
            "  --degree D            peers of each rank in the neighbour operations (default 1)\n"
            "  --csv FILE            the rows as CSV too\n"
            "\n%s",
            sim_machine_usage);
}

struct sim_opts {
    int colls[BENCH_NCOLLS], ncolls, degree;
    const char *algo, *csv;
    struct bench_opts sizes; /* min_bytes, max_bytes, factor, mlbench, dtype */
};

static int parse_colls(const char *list, struct sim_opts *o)
{
    static const int all[] = {BENCH_ALLREDUCE, BENCH_BROADCAST,      BENCH_REDUCE,
                              BENCH_ALLGATHER, BENCH_REDUCE_SCATTER, BENCH_ALLTOALL};
    if (!strcmp(list, "all")) {
        memcpy(o->colls, all, sizeof all);
        o->ncolls = (int)(sizeof all / sizeof all[0]);
        return 0;
    }
    char name[64];
    for (const char *p = list; *p && o->ncolls < BENCH_NCOLLS;) {
        size_t len = strcspn(p, ",");
        int c = -1;
        if (len < sizeof name) {
            memcpy(name, p, len);
            name[len] = '\0';
            c = bench_coll_by_name(name);
        }
        if (c < 0 || c == BENCH_PINGPONG || c == BENCH_OVERLAP || c == BENCH_FUSION) {
            fprintf(stderr, "collie sim: '%.*s' is no collective the simulator knows\n", (int)len,
                    p);
            return -1;
        }
        o->colls[o->ncolls++] = c;
        p += len + (p[len] == ',');
    }
    return o->ncolls ? 0 : -1;
}

static int parse(int argc, char **argv, const int *used, struct sim_opts *o)
{
    o->sizes.min_bytes = 4;
    o->sizes.max_bytes = 64u << 20;
    o->sizes.factor = 4;
    o->sizes.dtype = COLLIE_FLOAT32;
    o->degree = 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (used[i])
            continue;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (a[0] != '-') {
            if (o->ncolls || parse_colls(a, o))
                return -1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "collie sim: unknown option or missing value: %s\n", a);
            return -1;
        }
        i++;
        int bad = 0;
        if (!strcmp(a, "-b"))
            bad = bench_parse_bytes(v, &o->sizes.min_bytes);
        else if (!strcmp(a, "-e"))
            bad = bench_parse_bytes(v, &o->sizes.max_bytes);
        else if (!strcmp(a, "-f"))
            bad = sim_positive(v, &o->sizes.factor) || !(o->sizes.factor > 1);
        else if (!strcmp(a, "--sizes"))
            bad = !(o->sizes.mlbench = !strcmp(v, "mlbench"));
        else if (!strcmp(a, "-d") || !strcmp(a, "--dtype")) {
            int t = bench_dtype_by_name(v);
            bad = t < 0;
            o->sizes.dtype = (collie_dtype)(t < 0 ? 0 : t);
        } else if (!strcmp(a, "--algo"))
            o->algo = v;
        else if (!strcmp(a, "--degree"))
            bad = sim_whole(v, &o->degree);
        else if (!strcmp(a, "--csv"))
            o->csv = v;
        else {
            fprintf(stderr, "collie sim: unknown option %s (collie sim -h)\n", a);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "collie sim: %s '%s': not a valid value\n", a, v);
            return -1;
        }
    }
    if (!o->ncolls) {
        usage(stderr);
        return -1;
    }
    if (o->sizes.min_bytes > o->sizes.max_bytes) {
        fprintf(stderr, "collie sim: -b is above -e\n");
        return -1;
    }
    return bench_check_sweep(&o->sizes, "collie sim");
}

/* The call's bytes as the API takes them: one rank's block for the per-rank collectives. */
static size_t call_bytes(int c, size_t bytes, int n)
{
    return c == BENCH_ALLGATHER || c == BENCH_REDUCE_SCATTER || c == BENCH_ALLTOALL
               ? bytes / (size_t)n
               : bytes;
}

static int table(const struct collie__machine *m, const struct sim_opts *o, int c, FILE *csv)
{
    int n = (int)collie__tools_machine_get(m, "ranks");
    size_t es = bench_dtype_size(o->sizes.dtype), *sizes,
           count = bench_sizes(&o->sizes, c, n, &sizes);
    printf("#\n# collie sim %s: %d ranks, %s, %s\n", bench_coll_name(c), n,
           bench_dtype_name(o->sizes.dtype),
           o->algo ? "the algorithm --algo names" : "the algorithm the library would choose");
    printf("#%13s %12s %9s %11s %12s %12s  %s\n", "size(B)", "count", "type", "time(us)",
           "algbw(GB/s)", "busbw(GB/s)", "algo");
    int rc = 0;
    for (size_t k = 0; k < count && rc == 0; k++) {
        size_t bytes = call_bytes(c, sizes[k], n);
        if (!bytes)
            continue; /* less than an element per rank */
        double t;
        const char *algo;
        if (collie__tools_predict(m, bench_coll_name(c), o->algo, bytes, o->degree, &t, &algo)) {
            rc = -1; /* checked before the first table */
            break;
        }
        double algbw = (double)sizes[k] / t / 1e9, busbw = algbw * bench_busbw_factor(c, n);
        printf("%14zu %12zu %9s %11.2f %12.3f %12.3f  %s\n", sizes[k], bytes / es,
               bench_dtype_name(o->sizes.dtype), t * 1e6, algbw, busbw, algo);
        if (csv)
            fprintf(csv, "%s,%d,%zu,%zu,%s,%.6g,%.6g,%.6g,%s\n", bench_coll_name(c), n, sizes[k],
                    bytes / es, bench_dtype_name(o->sizes.dtype), t * 1e6, algbw, busbw, algo);
    }
    free(sizes);
    return rc;
}

int collie_tool_sim(int argc, char **argv)
{
    argc--, argv++; /* past "sim" */
    if (argc < 1) {
        usage(stderr);
        return 2;
    }
    char err[512] = "";
    struct collie__machine *m = collie__tools_machine_new(err, sizeof err);
    int *used = calloc((size_t)argc + 1, sizeof *used);
    if (!m || !used) {
        fprintf(stderr, "collie sim: out of memory\n");
        return 1;
    }
    if (err[0])
        fprintf(stderr, "collie sim: %s; the defaults stand\n", err);
    int rc = 2;
    struct sim_opts o = {0};
    if (sim_machine_options(m, argc, argv, used))
        goto out;
    if (!strcmp(argv[0], "train")) {
        rc = sim_train(argc, argv, used, m);
        goto out;
    }
    if (parse(argc, argv, used, &o) || sim_machine_ready(m))
        goto out;
    for (int k = 0; k < o.ncolls && o.algo; k++) {
        double t;
        const char *name;
        if (collie__tools_predict(m, bench_coll_name(o.colls[k]), o.algo, 4, 1, &t, &name)) {
            fprintf(stderr, "collie sim: %s has no algorithm '%s' (collie info lists them)\n",
                    bench_coll_name(o.colls[k]), o.algo);
            goto out;
        }
    }
    FILE *csv = NULL;
    if (o.csv && !(csv = fopen(o.csv, "w"))) {
        perror(o.csv);
        goto out;
    }
    if (csv)
        fprintf(csv, "coll,ranks,size,count,type,time_us,algbw_gbs,busbw_gbs,algo\n");
    sim_machine_header(m, stdout);
    rc = 0;
    for (int k = 0; k < o.ncolls && rc == 0; k++)
        rc = table(m, &o, o.colls[k], csv) ? 1 : 0;
    if (csv && fclose(csv)) {
        perror(o.csv);
        rc = 1;
    }
out:
    free(used);
    collie__tools_machine_free(m);
    return rc;
}
