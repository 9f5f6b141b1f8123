/* SPDX-License-Identifier: BSD-3-Clause */
/* options.c - the command line of collie bench (shared with collie-bench-mpi), names, sizes. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bench.h"

static const char *const coll_names[] = {[BENCH_ALLREDUCE] = "allreduce",
                                         [BENCH_BROADCAST] = "broadcast",
                                         [BENCH_REDUCE] = "reduce",
                                         [BENCH_ALLGATHER] = "allgather",
                                         [BENCH_REDUCE_SCATTER] = "reduce_scatter",
                                         [BENCH_ALLTOALL] = "alltoall",
                                         [BENCH_PINGPONG] = "pingpong",
                                         [BENCH_OVERLAP] = "overlap",
                                         [BENCH_FUSION] = "fusion",
                                         [BENCH_NEIGHBOR] = "neighbor_allreduce",
                                         [BENCH_HIER_NEIGHBOR] = "hierarchical_neighbor_allreduce",
                                         [BENCH_NEIGHBOR_ALLGATHER] = "neighbor_allgather"};
_Static_assert(sizeof coll_names / sizeof *coll_names == BENCH_NCOLLS, "a name per collective");
static const char *const dtype_names[] = {"float32", "float64", "float16", "bfloat16",
                                          "int8",    "uint8",   "int32",   "int64"};
static const size_t dtype_sizes[] = {4, 8, 2, 2, 1, 1, 4, 8};
static const char *const op_names[] = {"sum", "prod", "min", "max", "avg"};

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *bench_coll_name(int c) { return c >= 0 && c < BENCH_NCOLLS ? coll_names[c] : "?"; }
size_t bench_dtype_size(collie_dtype t) { return dtype_sizes[t]; }
const char *bench_dtype_name(collie_dtype t) { return dtype_names[t]; }
const char *bench_op_name(collie_op op) { return op_names[op]; }

double bench_busbw_factor(int c, int n)
{
    switch (c) {
    case BENCH_ALLREDUCE: return 2.0 * (n - 1) / n;
    case BENCH_ALLGATHER:
    case BENCH_REDUCE_SCATTER:
    case BENCH_ALLTOALL: return (double)(n - 1) / n;
    default: return 1.0; /* broadcast, reduce; pingpong: bytes over one-way time */
    }
}

void bench_usage(FILE *out, const char *prog)
{
    fprintf(
        out,
        "usage: %s [COLLECTIVE|all] [-n RANKS] [options]\n"
        "  COLLECTIVE      allreduce (default), broadcast, reduce, allgather, reduce_scatter,\n"
        "                  alltoall, or all of these; or pingpong: send/recv between rank\n"
        "                  pairs (0-1, 2-3, ...), time one way (half the round trip); or\n"
        "                  overlap: an allreduce issued, a computation as long, then the wait\n"
        "                  (overlap = (T_comm + T_comp - T_both) / min(T_comm, T_comp)); or\n"
        "                  fusion: ResNet-18's 62 gradient allreduces, one call each vs fused;\n"
        "                  or neighbor_allreduce: one step of decentralized averaging over\n"
        "                  --topology (collie's; name allreduce too to see both side by side);\n"
        "                  neighbor_allgather: the in-neighbours' buffers, one block each\n"
        "  --topology T    exp2 (default), exp3, ..., sym-exp2, ring, ring1 (one way), mesh,\n"
        "                  star, full; or a schedule, one step per call: onepeer-exp2,\n"
        "                  onepeer-exact, inner-outer-ring, inner-outer-exp2 (over the hosts)\n"
        "  --dynamic       the one-peer schedule of exp2 (--topology onepeer-exp2)\n"
        "  --overlap       the same as naming overlap\n"
        "  --fusion K      fusion with K tensors of -b bytes each instead of ResNet-18's\n"
        "  -n RANKS        launch RANKS ranks on this host (else: run as a rank of the job)\n"
        "  -b, -e, -f      smallest and largest size in bytes (K/M/G suffixes) and the factor\n"
        "                  between sizes, as nccl-tests (default -b 8 -e 64M -f 2)\n"
        "  --sizes mlbench element counts round(logspace(0, 8, 80)), duplicates dropped\n"
        "  --dtype T       float32 (default), float64, float16, bfloat16, int8, uint8, int32, "
        "int64\n"
        "  --op OP         sum (default), prod, min, max, avg\n"
        "  --iters N       timed iterations per size (default 100, as MLBench)\n"
        "  --warmup N      untimed iterations first (default 5)\n"
        "  --min-time S    time each size for at least S seconds, running more than --iters\n"
        "                  where they take less (default 0.01; 0: exactly --iters)\n"
        "  --inplace       sendbuf == recvbuf\n"
        "  --offset S[,R]  start the send buffer S bytes and the receive buffer R bytes\n"
        "                  (default S) past a page, 0-4095 (default: where malloc puts them,\n"
        "                  16 bytes in with glibc), in collie's ranks and the baselines' alike\n"
        "  --hugepages     both buffers on 2 MiB pages (madvise MADV_HUGEPAGE; the kernel's\n"
        "                  transparent huge pages must not be \"never\"), in every library's\n"
        "                  ranks alike: single copies between ranks pin the peer's pages\n"
        "  --libmem        both buffers from each library's own allocator: collie_mem_alloc\n"
        "                  (memory the host's ranks map from each other), MPI_Alloc_mem\n"
        "  --root R        root of broadcast and reduce (default 0)\n"
        "  --algo NAME     force a collie algorithm (sets COLLIE_ALGO)\n"
        "  --no-check      skip checking every element of the results\n"
        "  --baseline LIST run the identical sweep with other libraries too, side by side:\n"
        "                  mpi (Open MPI, mpirun), gloo (Gloo's C++ collectives over TCP,\n"
        "                  as PyTorch uses them), torch (torch.distributed on Gloo), impi\n"
        "                  (Intel MPI), mpich, ompi5 (Open MPI 5), oneccl (oneCCL's C++ API;\n"
        "                  these four as the package index installs them:\n"
        "                  scripts/peers_env.sh), or several, comma-separated (mpi,gloo,impi)\n"
        "  --mpi-preload LIB   run the MPI baseline with LIB preloaded (LD_PRELOAD), e.g.\n"
        "                  libcollie-mpi.so: the same MPI program on collie's collectives;\n"
        "                  or NAME=LIB,... for each MPI baseline NAME (mpi, impi, mpich,\n"
        "                  ompi5), e.g. impi=build/libcollie-mpi-impi.so\n"
        "  --rounds R      repeat every job R times, alternating collie and the baselines\n"
        "                  (A B A B ...); tables show the median of the rounds\n"
        "  --noise N       keep N busy threads in every rank, computing as an OpenMP or BLAS\n"
        "                  pool does beside a training job (default 0: nothing but the ranks)\n"
        "  --stream        measure memory bandwidth; show the large allreduces' share of\n"
        "                  the memory-traffic floor\n"
        "  --csv FILE, --json FILE, --plot FILE.png   write the rows, and draw them\n"
        "  --tune FILE     measure the cost model's rates on this job's machine instead, and\n"
        "                  write its description to FILE (COLLIE_MACHINE=FILE, collie sim\n"
        "                  --machine FILE); across hosts, run from the first host\n"
        "  --tune-wait S   wait up to S seconds in all (default 20) for CPUs that share a\n"
        "                  cache, whose rates the model holds, before --tune's steps\n"
        "  --dry-run       list the sizes each collective would be measured at\n"
        "  -H LIST, --hostfile FILE, --rsh CMD   across hosts, as collie run (-n: default\n"
        "                  every slot); the MPI baseline gets the same hosts (run the\n"
        "                  driver on the first host: rank 0 writes the results there)\n",
        prog);
}

int bench_has_baseline(const struct bench_opts *o, const char *name)
{
    for (int i = 0; i < o->nbaselines; i++)
        if (!strcmp(o->baselines[i], name))
            return 1;
    return 0;
}

/* One NAME=LIB item of --mpi-preload: where it starts, its length, its name's (up to '='). */
struct preload_item {
    const char *at;
    size_t len, name_len;
};

/* The item at *p, moving *p past it and its comma; 0 at the list's end. */
static int next_preload_item(const char **p, struct preload_item *it)
{
    if (!**p)
        return 0;
    const char *comma = strchr(*p, ','), *eq;
    it->at = *p;
    it->len = comma ? (size_t)(comma - *p) : strlen(*p);
    eq = memchr(*p, '=', it->len);
    it->name_len = eq ? (size_t)(eq - *p) : it->len;
    *p += it->len + (comma != NULL);
    return 1;
}

const char *bench_preload_for(const struct bench_opts *o, const char *name, char *buf, size_t len)
{
    const char *p = o->mpi_preload;
    if (!p)
        return NULL;
    if (!strchr(p, '=')) /* one library: the mpi baseline's */
        return strcmp(name, "mpi") ? NULL : p;
    struct preload_item it;
    while (next_preload_item(&p, &it)) {
        size_t lib_len = it.len - it.name_len - 1; /* check_preload: at least one byte */
        if (it.name_len == strlen(name) && !strncmp(it.at, name, it.name_len) && lib_len < len) {
            memcpy(buf, it.at + it.name_len + 1, lib_len);
            buf[lib_len] = 0;
            return buf;
        }
    }
    return NULL;
}

/* Each NAME=LIB of --mpi-preload names an MPI baseline of the run and a path that fits; 0, or
 * -1 having said which did not. */
static int check_preload(const struct bench_opts *o, const char *prog)
{
    const char *p = o->mpi_preload;
    if (!strchr(p, '=')) {
        if (bench_has_baseline(o, "mpi"))
            return 0;
        fprintf(stderr,
                "%s: --mpi-preload LIB needs --baseline mpi (or NAME=LIB for another "
                "MPI baseline)\n",
                prog);
        return -1;
    }
    struct preload_item it;
    while (next_preload_item(&p, &it)) {
        char name[16];
        snprintf(name, sizeof name, "%.*s",
                 (int)(it.name_len < sizeof name ? it.name_len : sizeof name - 1), it.at);
        if (it.name_len + 1 >= it.len || it.name_len >= sizeof name || !bench_is_mpi(name) ||
            !strcmp(name, "oneccl") || !bench_has_baseline(o, name)) {
            fprintf(stderr,
                    "%s: --mpi-preload '%.*s': each item is NAME=LIB, NAME one of the run's "
                    "MPI baselines (mpi, impi, mpich, ompi5)\n",
                    prog, (int)it.len, it.at);
            return -1;
        }
        if (it.len - it.name_len - 1 >= PATH_MAX) {
            fprintf(stderr,
                    "%s: --mpi-preload '%.*s': the library's path is longer than %d bytes\n", prog,
                    (int)it.len, it.at, PATH_MAX - 1);
            return -1;
        }
    }
    return 0;
}

/* The libraries --baseline names: the name (also the rows' backend), the title, MPI or not. */
static const struct {
    const char *name, *title;
    int mpi;
} baselines[] = {
    {"mpi", "MPI", 1},        {"gloo", "Gloo", 0},   {"torch", "torch.distributed", 0},
    {"impi", "Intel MPI", 1}, {"mpich", "MPICH", 1}, {"ompi5", "Open MPI 5", 1},
    {"oneccl", "oneCCL", 1}, /* under the mpiexec of the Intel MPI installed beside it */
};
#define NBASELINES (sizeof baselines / sizeof *baselines)
#define BASELINE_NAMES "mpi, gloo, torch, impi, mpich, ompi5 or oneccl"

int bench_is_mpi(const char *name)
{
    for (size_t k = 0; k < NBASELINES; k++)
        if (!strcmp(baselines[k].name, name))
            return baselines[k].mpi;
    return 0;
}

const char *bench_baseline_title(const char *name)
{
    for (size_t k = 0; k < NBASELINES; k++)
        if (!strcmp(baselines[k].name, name))
            return baselines[k].title;
    return name;
}

int bench_peer_prefix(const char *name, char *buf, size_t len)
{
    const char *dir = getenv("COLLIE_BENCH_PEERS"), *cache = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    int n = dir && *dir ? snprintf(buf, len, "%s/%s", dir, name)
            : cache && *cache
                ? snprintf(buf, len, "%s/collie/peers/%s", cache, name)
                : snprintf(buf, len, "%s/.cache/collie/peers/%s", home ? home : "", name);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* --offset S[,R]: page offsets 0-4095, R = S when not given; nonzero when malformed. */
static int parse_offsets(const char *v, int offset[2])
{
    char *end;
    long send = strtol(v, &end, 10), recv = send;
    if (end == v)
        return -1;
    if (*end == ',') {
        const char *r = end + 1;
        recv = strtol(r, &end, 10);
        if (end == r)
            return -1;
    }
    if (*end || send < 0 || send > 4095 || recv < 0 || recv > 4095)
        return -1;
    offset[0] = (int)send;
    offset[1] = (int)recv;
    return 0;
}

/* --baseline LIST: names of baselines[], comma-separated, each once. */
static int parse_baselines(const char *list, struct bench_opts *o, const char *prog)
{
    o->nbaselines = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        const char *name = NULL;
        for (size_t k = 0; k < NBASELINES; k++)
            if (strlen(baselines[k].name) == n && !strncmp(p, baselines[k].name, n))
                name = baselines[k].name;
        if (!name || bench_has_baseline(o, name) || o->nbaselines == BENCH_MAX_BASELINES) {
            fprintf(stderr, "%s: --baseline '%s': name %s, each once, separated by commas\n", prog,
                    list, BASELINE_NAMES);
            return -1;
        }
        o->baselines[o->nbaselines++] = name;
        p += n + (p[n] == ',');
    }
    if (!o->nbaselines) {
        fprintf(stderr, "%s: --baseline needs a library: %s\n", prog, BASELINE_NAMES);
        return -1;
    }
    return 0;
}

/* Seconds from 0 to `max` in *out; 0, or -1 (and *out as it was). */
static int parse_seconds(const char *s, double max, double *out)
{
    char *end;
    double t = strtod(s, &end);
    if (*end || !(t >= 0) || t > max)
        return -1;
    *out = t;
    return 0;
}

int bench_parse_bytes(const char *s, size_t *out)
{
    char *end;
    double v = strtod(s, &end);
    double unit = 1;
    switch (*end) {
    case 'k':
    case 'K':
        unit = 1024;
        end++;
        break;
    case 'm':
    case 'M':
        unit = 1024 * 1024;
        end++;
        break;
    case 'g':
    case 'G':
        unit = 1024.0 * 1024 * 1024;
        end++;
        break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (end == s || *end || !(v >= 0) || v * unit > 1e13)
        return -1;
    *out = (size_t)(v * unit);
    return 0;
}

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(s, names[i]))
            return i;
    return -1;
}

int bench_coll_by_name(const char *name) { return lookup(name, coll_names, BENCH_NCOLLS); }
int bench_dtype_by_name(const char *name) { return lookup(name, dtype_names, 8); }

/* An option without a value that sets a field (--check and --no-check the same one): 1 if `a` is one. */
static int set_switch(const char *a, struct bench_opts *o)
{
    const struct {
        const char *name;
        int *field, value;
    } switches[] = {
        {"--inplace", &o->inplace, 1},
        {"--hugepages", &o->hugepages, 1},
        {"--libmem", &o->libmem, 1},
        {"--check", &o->check, 1},
        {"--no-check", &o->check, 0},
        {"--stream", &o->stream, 1},
        {"--dry-run", &o->dry_run, 1},
        {"--corrupt", &o->corrupt, 1}, /* corrupt: the tests of #wrong */
    };
    for (size_t k = 0; k < sizeof switches / sizeof switches[0]; k++)
        if (!strcmp(a, switches[k].name)) {
            *switches[k].field = switches[k].value;
            return 1;
        }
    return 0;
}

int bench_parse(int argc, char **argv, struct bench_opts *o, const char *prog)
{
    *o = (struct bench_opts){.min_bytes = 8,
                             .max_bytes = 64u << 20,
                             .factor = 2,
                             .dtype = COLLIE_FLOAT32,
                             .op = COLLIE_SUM,
                             .iters = 100,
                             .warmup = 5,
                             .min_time = 0.01,
                             .tune_wait = 20,
                             .check = 1,
                             .offset = {-1, -1},
                             .rounds = 1};
    int bounded_below = 0, bounded_above = 0; /* -b, -e given: they bound --sizes mlbench */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int c = lookup(a, coll_names, BENCH_NCOLLS);
        if (c >= 0) {
            o->colls[o->ncolls++ % BENCH_NCOLLS] = c;
            continue;
        }
        if (!strcmp(a, "all")) { /* the collectives */
            for (c = 0; c < BENCH_PINGPONG; c++)
                o->colls[c] = c;
            o->ncolls = BENCH_PINGPONG;
            continue;
        }
        if (set_switch(a, o))
            continue;
        if (!strcmp(a, "--overlap")) {
            o->colls[o->ncolls++ % BENCH_NCOLLS] = BENCH_OVERLAP;
            continue;
        }
        if (!strcmp(a, "--dynamic")) {
            o->topology = "onepeer-exp2";
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            bench_usage(stdout, prog);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "%s: unknown argument '%s' (or it needs a value; try --help)\n", prog,
                    a);
            return -1;
        }
        i++;
        char *end = NULL;
        errno = 0;
        long n = strtol(v, &end, 10);
        int is_int = *v && !*end && !errno && n >= INT_MIN && n <= INT_MAX; /* all of v, an int */
        if (!strcmp(a, "-n") || !strcmp(a, "--np")) {
            if (!is_int || n < 1 || n > 4096)
                goto bad;
            o->nranks = (int)n;
        } else if (!strcmp(a, "-b") || !strcmp(a, "--minbytes")) {
            if (bench_parse_bytes(v, &o->min_bytes))
                goto bad;
            bounded_below = 1;
        } else if (!strcmp(a, "-e") || !strcmp(a, "--maxbytes")) {
            if (bench_parse_bytes(v, &o->max_bytes))
                goto bad;
            bounded_above = 1;
        } else if (!strcmp(a, "-f") || !strcmp(a, "--stepfactor")) {
            o->factor = strtod(v, &end);
            if (*end || !(o->factor > 1))
                goto bad;
        } else if (!strcmp(a, "--sizes")) {
            if (strcmp(v, "mlbench"))
                goto bad;
            o->mlbench = 1;
        } else if (!strcmp(a, "--dtype") || !strcmp(a, "-d")) {
            int t = lookup(v, dtype_names, 8);
            if (t < 0)
                goto bad;
            o->dtype = (collie_dtype)t;
        } else if (!strcmp(a, "--op") || !strcmp(a, "-o")) {
            int op = lookup(v, op_names, 5);
            if (op < 0)
                goto bad;
            o->op = (collie_op)op;
        } else if (!strcmp(a, "--iters")) {
            if (!is_int || n < 1)
                goto bad;
            o->iters = (int)n;
        } else if (!strcmp(a, "--warmup")) {
            if (!is_int || n < 0)
                goto bad;
            o->warmup = (int)n;
        } else if (!strcmp(a, "--offset")) {
            if (parse_offsets(v, o->offset))
                goto bad;
        } else if (!strcmp(a, "--root")) {
            if (!is_int || n < 0)
                goto bad;
            o->root = (int)n;
        } else if (!strcmp(a, "--min-time")) {
            if (parse_seconds(v, 60, &o->min_time))
                goto bad;
        } else if (!strcmp(a, "--fusion")) {
            if (!is_int || n < 1 || n > 100000)
                goto bad;
            o->fusion = (int)n;
            o->colls[o->ncolls++ % BENCH_NCOLLS] = BENCH_FUSION;
        } else if (!strcmp(a, "--noise")) {
            if (!is_int || n < 0 || n > 64)
                goto bad;
            o->noise = (int)n;
        } else if (!strcmp(a, "--rounds")) {
            if (!is_int || n < 1 || n > 100)
                goto bad;
            o->rounds = (int)n;
        } else if (!strcmp(a, "-H") || !strcmp(a, "--hosts")) {
            o->hosts = v;
        } else if (!strcmp(a, "--hostfile")) {
            o->hostfile = v;
        } else if (!strcmp(a, "--rsh")) {
            o->rsh = v;
        } else if (!strcmp(a, "--topology")) {
            o->topology = v;
        } else if (!strcmp(a, "--algo")) {
            o->algo = v;
        } else if (!strcmp(a, "--baseline")) {
            if (parse_baselines(v, o, prog))
                return -1;
        } else if (!strcmp(a, "--mpi-preload")) {
            o->mpi_preload = v;
        } else if (!strcmp(a, "--csv")) {
            o->csv = v;
        } else if (!strcmp(a, "--tune")) {
            o->tune = v;
        } else if (!strcmp(a, "--tune-wait")) {
            if (parse_seconds(v, 3600, &o->tune_wait))
                goto bad;
        } else if (!strcmp(a, "--json")) {
            o->json = v;
        } else if (!strcmp(a, "--plot")) {
            o->plot = v;
        } else if (!strcmp(a, "--raw")) {
            o->raw = v; /* internal: driver <-> job */
        } else if (!strcmp(a, "--round")) {
            if (!is_int || n < 0)
                goto bad;
            o->round = (int)n;
        } else {
            fprintf(stderr, "%s: unknown option '%s' (try --help)\n", prog, a);
            return -1;
        }
        continue;
    bad:
        fprintf(stderr, "%s: bad value '%s' for %s (try --help)\n", prog, v, a);
        return -1;
    }
    if (o->ncolls > BENCH_NCOLLS) {
        fprintf(stderr, "%s: name each collective once, or use 'all'\n", prog);
        return -1;
    }
    if (!o->ncolls)
        o->colls[o->ncolls++] = BENCH_ALLREDUCE;
    if (o->tune && (o->nbaselines || o->rounds > 1)) {
        fprintf(stderr, "%s: --tune measures collie alone, once: drop --baseline and --rounds\n",
                prog);
        return -1;
    }
    for (int k = 0; k < o->ncolls && o->nbaselines; k++)
        if (o->colls[k] == BENCH_NEIGHBOR || o->colls[k] == BENCH_HIER_NEIGHBOR ||
            o->colls[k] == BENCH_NEIGHBOR_ALLGATHER) {
            fprintf(stderr,
                    "%s: %s has no neighbour averaging to compare with: drop --baseline, and "
                    "name allreduce beside neighbor_allreduce to see collie's allreduce\n",
                    prog, bench_baseline_title(o->baselines[0]));
            return -1;
        } else if ((o->colls[k] == BENCH_OVERLAP || o->colls[k] == BENCH_FUSION) &&
                   (o->nbaselines > 1 || !bench_has_baseline(o, "mpi"))) {
            fprintf(stderr, "%s: %s is measured beside MPI only: use --baseline mpi\n", prog,
                    bench_coll_name(o->colls[k]));
            return -1;
        }
    if ((o->offset[0] >= 0 || o->hugepages) && o->libmem) {
        fprintf(stderr, "%s: --libmem: the libraries place their buffers themselves; drop %s\n",
                prog, o->hugepages ? "--hugepages" : "--offset");
        return -1;
    }
    if (o->libmem && (bench_has_baseline(o, "gloo") || bench_has_baseline(o, "torch"))) {
        fprintf(stderr,
                "%s: --libmem: Gloo and torch.distributed have no allocator of their own; "
                "measure them apart\n",
                prog);
        return -1;
    }
    if ((o->offset[0] >= 0 || o->hugepages) && bench_has_baseline(o, "torch")) {
        fprintf(stderr, "%s: %s: torch.distributed allocates its own tensors; drop one\n", prog,
                o->hugepages ? "--hugepages" : "--offset");
        return -1;
    }
    if (o->noise && bench_has_baseline(o, "torch")) {
        fprintf(stderr, "%s: --noise: the torch baseline has no noise threads; drop one\n", prog);
        return -1;
    }
    if (o->dtype == COLLIE_BFLOAT16 &&
        (bench_has_baseline(o, "gloo") || bench_has_baseline(o, "torch"))) {
        fprintf(stderr, "%s: Gloo has no bfloat16: use --baseline mpi, or another --dtype\n", prog);
        return -1;
    }
    for (int k = 0; k < o->ncolls && o->inplace; k++)
        if (o->colls[k] == BENCH_NEIGHBOR_ALLGATHER) {
            fprintf(stderr, "%s: neighbor_allgather has no in-place form: drop --inplace\n", prog);
            return -1;
        }
    if (!o->topology)
        o->topology = "exp2";
    if (o->mlbench) { /* the whole sweep, unless -b or -e cut it */
        o->min_bytes = bounded_below ? o->min_bytes : 0;
        o->max_bytes = bounded_above ? o->max_bytes : SIZE_MAX;
    }
    for (int k = 0; k < o->nbaselines; k++)
        if ((o->hosts || o->hostfile) && bench_is_mpi(o->baselines[k]) &&
            strcmp(o->baselines[k], "mpi")) {
            fprintf(stderr,
                    "%s: --baseline %s runs on one host (its mpiexec is not told the "
                    "hosts): drop -H, or use --baseline mpi\n",
                    prog, o->baselines[k]);
            return -1;
        }
    if (o->mpi_preload && check_preload(o, prog))
        return -1;
    if (o->min_bytes > o->max_bytes) {
        fprintf(stderr, "%s: -b %zu is larger than -e %zu\n", prog, o->min_bytes, o->max_bytes);
        return -1;
    }
    return bench_check_sweep(o, prog);
}

int bench_check_sweep(const struct bench_opts *o, const char *prog)
{
    double steps =
        log((double)o->max_bytes / (double)(o->min_bytes ? o->min_bytes : 1)) / log(o->factor);
    if (!o->mlbench && steps + 2 > BENCH_MAX_SIZES) {
        fprintf(stderr, "%s: -b %zu -e %zu -f %.9g make %.0f sizes; at most %d (a larger -f)\n",
                prog, o->min_bytes, o->max_bytes, o->factor, steps + 2, BENCH_MAX_SIZES);
        return -1;
    }
    return 0;
}

/*
 * Sizes are the bytes of the operation's largest buffer, as nccl-tests counts
 * them (allgather: the output; reduce_scatter, alltoall: the input), rounded
 * down to whole elements per rank.  mlbench sizes are element counts of that
 * buffer, those from -b to -e kept.
 */
size_t bench_sizes(const struct bench_opts *o, int c, int nranks, size_t **out)
{
    size_t es = bench_dtype_size(o->dtype), n = 0, cap = 128;
    size_t unit = es * (c == BENCH_ALLGATHER || c == BENCH_REDUCE_SCATTER || c == BENCH_ALLTOALL
                            ? (size_t)nranks
                            : 1);
    size_t *s = malloc(cap * sizeof *s);
    if (o->mlbench) {
        for (int i = 0; i < 80; i++) {
            size_t count = (size_t)llround(pow(10.0, 8.0 * i / 79.0));
            size_t bytes = count * es / unit * unit;
            if (bytes && (!n || bytes != s[n - 1]) && bytes >= o->min_bytes &&
                bytes <= o->max_bytes)
                s[n++] = bytes;
        }
    } else {
        /* -b 0: a zero-byte call, then 1 byte onwards. */
        for (double b = (double)o->min_bytes; b <= (double)o->max_bytes * 1.000001;
             b = b ? b * o->factor : 1) {
            size_t bytes = (size_t)b / unit * unit;
            if (n == cap)
                s = realloc(s, (cap *= 2) * sizeof *s);
            if (!n || bytes != s[n - 1])
                s[n++] = bytes;
        }
    }
    *out = s;
    return n;
}
