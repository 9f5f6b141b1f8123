/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver.c - `collie bench`.  Inside a job (collie run, torchrun, mpirun,
 * srun) it is one rank of the measurement.  Outside one, with -n N, it is the
 * driver: it launches the measuring jobs itself (collie's, then each
 * baseline's: MPI's under mpirun, Gloo's and torch.distributed's under
 * collie run; alternating A B A B for --rounds), merges their rows and
 * reports.  Each job measures with the same loop (sweep.c, mirrored in
 * backend_torch.py).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/launch.h"
#include "bench.h"
#include "report.h"

int bench_backend_collie(struct bench_backend *b, const struct bench_opts *o);
void bench_backend_collie_close(struct bench_backend *b);

static void report(const struct bench_opts *o, const struct bench_rows *rows,
                   const struct bench_stream *stream)
{
    struct bench_machine m;
    bench_machine(&m);
    bench_print_table(o, rows, stream);
    if (o->csv && bench_write_csv(o->csv, rows, &m, stream))
        fprintf(stderr, "collie bench: cannot write %s: %s\n", o->csv, strerror(errno));
    if (o->json && bench_write_json(o->json, rows, &m, stream))
        fprintf(stderr, "collie bench: cannot write %s: %s\n", o->json, strerror(errno));
    if (o->plot && bench_plot(o->plot, o, rows) < 0)
        fprintf(stderr, "collie bench: drawing %s failed\n", o->plot);
}

/* One rank of a measurement job. */
static int rank_main(const struct bench_opts *o)
{
    if (o->nbaselines) {
        fprintf(stderr,
                "collie bench: --baseline launches every job itself: run `collie bench -n N "
                "--baseline %s` outside a job\n",
                o->baselines[0]);
        return 2;
    }
    if (o->tune)
        return bench_tune(o->tune, o->tune_wait) ? 1 : 0;
    struct bench_backend b;
    if (bench_backend_collie(&b, o))
        return 1;
    struct bench_rows rows = {.raw = b.rank == 0 ? o->raw : NULL};
    struct bench_stream stream, *sp = NULL;
    if (o->stream && !o->raw && b.rank == 0) { /* measured by rank 0 while the others wait */
        bench_stream_measure(&stream);
        sp = &stream;
    }
    int rc = bench_sweep(&b, o, o->round, &rows) || rows.raw_failed ? 1 : 0;
    if (rc == 0 && b.rank == 0 && !o->raw)
        report(o, &rows, sp);
    bench_backend_collie_close(&b);
    free(rows.row);
    return rc;
}

/* The measuring job's command line, rebuilt from the parsed options. */
static int job_args(const struct bench_opts *o, char **argv, int max, char *buf, size_t len,
                    const char *raw, int round)
{
    int n = 0;
    size_t used = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        int w_ = snprintf(buf + used, len - used, __VA_ARGS__);                                    \
        if (n >= max - 1 || w_ < 0 || used + (size_t)w_ + 1 > len)                                 \
            return -1;                                                                             \
        argv[n++] = buf + used;                                                                    \
        used += (size_t)w_ + 1;                                                                    \
    } while (0)
    for (int k = 0; k < o->ncolls; k++)
        ADD("%s", bench_coll_name(o->colls[k]));
    if (!o->mlbench || o->min_bytes > 0) { /* an mlbench sweep passes only the bounds given */
        ADD("-b");
        ADD("%zu", o->min_bytes);
    }
    if (!o->mlbench || o->max_bytes < SIZE_MAX) {
        ADD("-e");
        ADD("%zu", o->max_bytes);
    }
    if (o->mlbench) {
        ADD("--sizes");
        ADD("mlbench");
    } else {
        ADD("-f");
        ADD("%.17g", o->factor);
    }
    ADD("--dtype");
    ADD("%s", bench_dtype_name(o->dtype));
    ADD("--op");
    ADD("%s", bench_op_name(o->op));
    ADD("--iters");
    ADD("%d", o->iters);
    ADD("--warmup");
    ADD("%d", o->warmup);
    ADD("--min-time");
    ADD("%.17g", o->min_time);
    ADD("--root");
    ADD("%d", o->root);
    if (o->inplace)
        ADD("--inplace");
    if (o->offset[0] >= 0) {
        ADD("--offset");
        ADD("%d,%d", o->offset[0], o->offset[1]);
    }
    if (o->hugepages)
        ADD("--hugepages");
    if (o->libmem)
        ADD("--libmem");
    if (o->noise) {
        ADD("--noise");
        ADD("%d", o->noise);
    }
    if (o->fusion) {
        ADD("--fusion");
        ADD("%d", o->fusion);
    }
    ADD("--topology");
    ADD("%s", o->topology);
    if (!o->check)
        ADD("--no-check");
    if (o->corrupt)
        ADD("--corrupt");
    if (o->tune) {
        ADD("--tune");
        ADD("%s", o->tune);
        ADD("--tune-wait");
        ADD("%g", o->tune_wait);
    }
    ADD("--raw");
    ADD("%s", raw);
    ADD("--round");
    ADD("%d", round);
#undef ADD
    argv[n] = NULL;
    return n;
}

/* How a job is started: the launcher's arguments before the program's. */
struct launch {
    char *argv[160];
    int n;
    char nranks[16], mca_rsh[PATH_MAX + 64], preload[PATH_MAX + 16], lib[PATH_MAX];
};

static void add(struct launch *l, const char *arg) { l->argv[l->n++] = (char *)arg; }

/* -n RANKS, for both launchers: when -n was given, or no hosts (one host, default 1). */
static void add_ranks(struct launch *l, const struct bench_opts *o)
{
    snprintf(l->nranks, sizeof l->nranks, "%d", o->nranks);
    if (o->nranks || (!o->hosts && !o->hostfile))
        add(l, "-n"), add(l, l->nranks);
}

/* collie run with the job's placement: collie's own jobs, Gloo's and torch's. */
static void collie_run(struct launch *l, const struct bench_opts *o, const char *self)
{
    l->n = 0;
    add(l, self);
    add(l, "run");
    add_ranks(l, o);
    if (o->hosts)
        add(l, "-H"), add(l, o->hosts);
    if (o->hostfile)
        add(l, "--hostfile"), add(l, o->hostfile);
    if (o->rsh)
        add(l, "--rsh"), add(l, o->rsh);
}

/* --mpi-preload's library for baseline `name`, into its ranks alone, not the launcher: Open
 * MPI's -x, Hydra's -genv (MPICH's and Intel MPI's mpiexec). */
static void add_preload(struct launch *l, const struct bench_opts *o, const char *name, int hydra)
{
    if (!bench_preload_for(o, name, l->lib, sizeof l->lib))
        return;
    if (hydra) {
        add(l, "-genv"), add(l, "LD_PRELOAD"), add(l, l->lib);
    } else {
        snprintf(l->preload, sizeof l->preload, "LD_PRELOAD=%s", l->lib);
        add(l, "-x"), add(l, l->preload);
    }
}

/* mpirun with the same placement, for the MPI baseline. */
static void mpirun(struct launch *l, const struct bench_opts *o)
{
    l->n = 0;
    add(l, "mpirun");
    add(l, "--oversubscribe");
    add_ranks(l, o);
    if (o->hosts || o->hostfile) /* one slot per node is not oversubscribed to Open MPI,
                                    but the hosts may share cores: do not busy-poll */
        add(l, "--mca"), add(l, "mpi_yield_when_idle"), add(l, "1");
    if (o->hosts)
        add(l, "--host"), add(l, o->hosts);
    if (o->hostfile)
        add(l, "--hostfile"), add(l, o->hostfile);
    if (o->rsh) {
        snprintf(l->mca_rsh, sizeof l->mca_rsh, "%s", o->rsh);
        add(l, "--mca"), add(l, "plm_rsh_agent"), add(l, l->mca_rsh);
    }
    add_preload(l, o, "mpi", 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes dir and everything in it (the Gloo store's files). */
static void remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/*
 * The torch baseline: its script, backend_torch.py (installed in the
 * collie command's share/collie/, else in this source tree's tools/bench/),
 * and the interpreter: COLLIE_PYTHON, else Debian's /usr/bin/python3 (where
 * python3-torch lives; another python3 may come first in PATH), else
 * python3 -- checked to import torch.distributed.  0, or -1 having said
 * what is missing.
 */
static int find_torch(char *python, size_t plen, char *script, size_t slen)
{
    const char *given = getenv("COLLIE_PYTHON");
    snprintf(python, plen, "%s",
             given && *given                         ? given
             : access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
                                                     : "python3");
    if (tools_sibling_path("../share/collie/backend_torch.py", script, slen) ||
        access(script, R_OK) != 0)
        snprintf(script, slen, "%s", COLLIE_BENCH_TORCH);
    if (access(script, R_OK) != 0) {
        fprintf(stderr, "collie bench: the torch baseline's script is not installed: %s\n", script);
        return -1;
    }
    char *check[] = {python, "-c", "import torch.distributed", NULL};
    if (tools_run_job(check) == 0)
        return 0;
    fprintf(stderr,
            "collie bench: --baseline torch needs PyTorch in %s (apt-get install python3-torch; "
            "COLLIE_PYTHON names another interpreter)\n",
            python);
    return -1;
}

/* The programs of the baselines, checked before anything runs. */
struct programs {
    char self[PATH_MAX], mpi[PATH_MAX], gloo[PATH_MAX], python[PATH_MAX], torch[PATH_MAX];
    char peer[BENCH_MAX_BASELINES][PATH_MAX];     /* collie-bench-NAME of each peer MPI */
    char launcher[BENCH_MAX_BASELINES][PATH_MAX]; /* and that MPI's mpiexec */
};

/* A peer's program (collie-bench-NAME beside collie, built by CMake against that peer)
 * and the mpiexec installed with it; 0, or -1 having said what to install. */
static int find_peer(const char *name, char *prog, char *launcher)
{
    char file[64], prefix[PATH_MAX];
    snprintf(file, sizeof file, "collie-bench-%s", name);
    if (tools_sibling_path(file, prog, PATH_MAX) ||
        bench_peer_prefix(name, prefix, sizeof prefix) ||
        snprintf(launcher, PATH_MAX, "%s/bin/mpiexec", prefix) >= PATH_MAX)
        return -1;
    if (access(launcher, X_OK) != 0 || access(prog, X_OK) != 0) {
        fprintf(stderr,
                "collie bench: --baseline %s needs %s installed in %s (bash scripts/peers_env.sh "
                "%s; COLLIE_BENCH_PEERS names another folder) and collie rebuilt, which builds "
                "%s against it; missing: %s\n",
                name, bench_baseline_title(name), prefix, name, file,
                access(launcher, X_OK) != 0 ? launcher : prog);
        return -1;
    }
    return 0;
}

static int find_programs(const struct bench_opts *o, struct programs *p)
{
    if (tools_self_path(p->self, sizeof p->self) ||
        tools_sibling_path("collie-bench-mpi", p->mpi, sizeof p->mpi) ||
        tools_sibling_path("collie-bench-gloo", p->gloo, sizeof p->gloo))
        return -1;
    if (bench_has_baseline(o, "mpi") && access(p->mpi, X_OK) != 0) {
        fprintf(stderr,
                "collie bench: the MPI baseline program %s was not built: install Open MPI "
                "(apt-get install libopenmpi-dev openmpi-bin) and rebuild; cmake finds it\n",
                p->mpi);
        return -1;
    }
    if (bench_has_baseline(o, "gloo") && access(p->gloo, X_OK) != 0) {
        fprintf(stderr,
                "collie bench: the Gloo baseline program %s was not built: install Gloo "
                "(apt-get install libgloo-dev g++) and rebuild; cmake finds it\n",
                p->gloo);
        return -1;
    }
    if (bench_has_baseline(o, "torch") &&
        find_torch(p->python, sizeof p->python, p->torch, sizeof p->torch))
        return -1;
    for (int k = 0; k < o->nbaselines; k++)
        if (bench_is_mpi(o->baselines[k]) && strcmp(o->baselines[k], "mpi") &&
            find_peer(o->baselines[k], p->peer[k], p->launcher[k]))
            return -1;
    return 0;
}

/* A peer MPI's own mpiexec with the job's rank count, each library's defaults otherwise
 * (Open MPI 5 runs more ranks than cores only when told). */
static void mpiexec(struct launch *l, const struct bench_opts *o, const char *name,
                    const char *launcher)
{
    l->n = 0;
    add(l, launcher);
    int ompi = !strcmp(name, "ompi5");
    if (ompi)
        add(l, "--oversubscribe");
    add_ranks(l, o);
    add_preload(l, o, name, !ompi);
}

/* Runs one baseline's measuring job with the job's arguments; 0 on success. */
static int run_baseline(int k, const struct bench_opts *o, const struct programs *p, char **args)
{
    const char *name = o->baselines[k];
    struct launch l;
    if (!strcmp(name, "mpi")) {
        mpirun(&l, o);
        add(&l, p->mpi);
    } else if (bench_is_mpi(name)) {
        mpiexec(&l, o, name, p->launcher[k]);
        add(&l, p->peer[k]);
    } else {
        collie_run(&l, o, p->self);
        if (!strcmp(name, "gloo")) {
            add(&l, p->gloo);
        } else {
            add(&l, p->python);
            add(&l, p->torch);
        }
    }
    for (int i = 0; args[i]; i++)
        add(&l, args[i]);
    add(&l, NULL);
    if (tools_run_job(l.argv) == 0)
        return 0;
    fprintf(stderr, "collie bench: the %s baseline job failed\n", name);
    return -1;
}

static int driver_main(const struct bench_opts *o)
{
    struct programs prog;
    if (find_programs(o, &prog))
        return 1;
    char raw[] = "/tmp/collie-bench-XXXXXX", store[] = "/tmp/collie-bench-gloo-XXXXXX";
    int fd = mkstemp(raw);
    if (fd < 0)
        return 1;
    close(fd);
    /* Gloo's rendezvous: a file store every rank sees, a prefix per round */
    int has_store = bench_has_baseline(o, "gloo");
    if (has_store) {
        if (!mkdtemp(store)) {
            fprintf(stderr, "collie bench: cannot make %s: %s\n", store, strerror(errno));
            unlink(raw);
            return 1;
        }
        setenv("COLLIE_BENCH_GLOO_STORE", store, 1);
    }
    struct bench_stream stream, *sp = NULL;
    if (o->stream) { /* before the jobs, on an otherwise idle host */
        bench_stream_measure(&stream);
        sp = &stream;
        fprintf(stderr,
                "memory bandwidth (GB/s): copy %.1f (1 thread) %.1f (all cores), triad "
                "%.1f / %.1f\n",
                stream.copy1, stream.copy_all, stream.triad1, stream.triad_all);
    }
    /* Open MPI refuses root without these; harmless otherwise. */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    int rc = 0;
    for (int round = 0; round < o->rounds && rc == 0; round++) {
        char buf[4096], *args[96];
        if (job_args(o, args, 96, buf, sizeof buf, raw, round) < 0) {
            fprintf(stderr, "collie bench: the measuring job's command line is too long\n");
            rc = -1;
            break;
        }
        struct launch l;
        collie_run(&l, o, prog.self);
        add(&l, prog.self);
        add(&l, "bench");
        for (int i = 0; args[i]; i++)
            add(&l, args[i]);
        add(&l, NULL);
        rc = tools_run_job(l.argv);
        for (int k = 0; k < o->nbaselines && rc == 0; k++)
            rc = run_baseline(k, o, &prog, args);
    }
    /* What was measured, also where a job failed or a signal stopped the sweep. */
    struct bench_rows rows = {0};
    if (!o->tune && bench_rows_read_raw(&rows, raw) == 0 && (rc == 0 || rows.n)) {
        if (rc)
            fprintf(stderr,
                    "collie bench: %s; the table holds the %zu row(s) measured before that\n",
                    tools_interrupted() ? "stopped by a signal" : "a job failed", rows.n);
        report(o, &rows, sp);
    }
    unlink(raw);
    if (has_store)
        remove_tree(store);
    free(rows.row);
    return tools_interrupted() ? 128 + tools_interrupted() : rc ? 1 : 0;
}

int collie_tool_bench(int argc, char **argv)
{
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, "collie bench"))
        return 2;
    if (o.algo)
        setenv("COLLIE_ALGO", o.algo, 1);
    char tune_path[PATH_MAX];
    if (o.tune && o.tune[0] != '/' && !tools_in_a_job()) { /* rank 0 may start elsewhere (ssh) */
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) {
            fprintf(stderr, "collie bench: --tune %s: the working directory: %s\n", o.tune,
                    strerror(errno));
            return 2;
        }
        if (snprintf(tune_path, sizeof tune_path, "%s/%s", cwd, o.tune) >= (int)sizeof tune_path) {
            fprintf(stderr, "collie bench: --tune %s: the path is too long\n", o.tune);
            return 2;
        }
        o.tune = tune_path;
    }
    collie_schedule *probe; /* a name is known at any size: try one, before launching */
    if (collie_schedule_from_name(o.topology, 1, &probe) != COLLIE_OK) {
        fprintf(stderr, "collie bench: --topology: %s\n", collie_last_error(NULL));
        return 2;
    }
    collie_schedule_free(probe);
    if (o.dry_run) {
        int n = o.nranks ? o.nranks : 1;
        for (int k = 0; k < o.ncolls; k++) {
            size_t *sizes, ns = bench_sizes(&o, o.colls[k], n, &sizes);
            for (size_t i = 0; i < ns; i++)
                printf("%s %zu\n", bench_coll_name(o.colls[k]), sizes[i]);
            free(sizes);
        }
        return 0;
    }
    if (tools_in_a_job()) {
        if (o.nranks) {
            fprintf(stderr, "collie bench: -n launches a job, but this already is one; drop -n\n");
            return 2;
        }
        return rank_main(&o);
    }
    if (!o.nranks && !o.hosts && !o.hostfile)
        o.nranks = 1; /* alone: a one-rank job, launched like any other */
    return driver_main(&o);
}
