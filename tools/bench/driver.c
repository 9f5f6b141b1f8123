/*
 * driver.c - `collie bench`.  Inside a job (collie run, torchrun, mpirun,
 * srun) it is one rank of the measurement.  Outside one, with -n N, it is the
 * driver: it launches the measuring jobs itself (collie's, and MPI's with
 * --baseline mpi, alternating A B A B for --rounds), merges their rows and
 * reports.  Each job measures with the same loop (sweep.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../launch.h"
#include "../tools.h"
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
    if (o->csv && bench_write_csv(o->csv, rows, &m))
        fprintf(stderr, "collie bench: cannot write %s: %s\n", o->csv, strerror(errno));
    if (o->json && bench_write_json(o->json, rows, &m, stream))
        fprintf(stderr, "collie bench: cannot write %s: %s\n", o->json, strerror(errno));
    if (o->plot && bench_plot(o->plot, o, rows) < 0)
        fprintf(stderr, "collie bench: drawing %s failed\n", o->plot);
}

/* One rank of a measurement job. */
static int rank_main(const struct bench_opts *o)
{
    if (o->baseline) {
        fprintf(stderr,
                "collie bench: --baseline launches both jobs itself: run `collie bench -n N "
                "--baseline mpi` outside a job\n");
        return 2;
    }
    struct bench_backend b;
    if (bench_backend_collie(&b, o))
        return 1;
    struct bench_rows rows = {0};
    struct bench_stream stream, *sp = NULL;
    if (o->stream && !o->raw && b.rank == 0) { /* measured by rank 0 while the others wait */
        bench_stream_measure(&stream);
        sp = &stream;
    }
    int rc = bench_sweep(&b, o, o->round, &rows) ? 1 : 0;
    if (rc == 0 && b.rank == 0) {
        if (o->raw)
            rc = bench_rows_write_raw(&rows, o->raw) ? 1 : 0;
        else
            report(o, &rows, sp);
    }
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
    if (o->mlbench) {
        ADD("--sizes");
        ADD("mlbench");
    } else {
        ADD("-b");
        ADD("%zu", o->min_bytes);
        ADD("-e");
        ADD("%zu", o->max_bytes);
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
    ADD("--raw");
    ADD("%s", raw);
    ADD("--round");
    ADD("%d", round);
#undef ADD
    argv[n] = NULL;
    return n;
}

static int driver_main(const struct bench_opts *o)
{
    char self[PATH_MAX], dir[PATH_MAX], mpi_prog[PATH_MAX + 32], nranks[16];
    if (tools_self_path(self, sizeof self))
        return 1;
    snprintf(dir, sizeof dir, "%s", self);
    snprintf(mpi_prog, sizeof mpi_prog, "%s/collie-bench-mpi", dirname(dir));
    snprintf(nranks, sizeof nranks, "%d", o->nranks);
    if (o->baseline && access(mpi_prog, X_OK) != 0) {
        fprintf(stderr,
                "collie bench: the MPI baseline program %s was not built: install Open MPI "
                "(apt-get install libopenmpi-dev openmpi-bin) and rebuild; cmake finds it\n",
                mpi_prog);
        return 1;
    }
    char raw[] = "/tmp/collie-bench-XXXXXX";
    int fd = mkstemp(raw);
    if (fd < 0)
        return 1;
    close(fd);
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
        char buf[4096], *argv[96], mca_rsh[PATH_MAX + 64], preload[PATH_MAX + 16];
        char *collie_argv[128] = {self, "run"}, *mpi_argv[128] = {"mpirun", "--oversubscribe"};
        int nc = 2, nm = 2;
        if (o->nranks || (!o->hosts && !o->hostfile)) {
            collie_argv[nc++] = "-n", collie_argv[nc++] = nranks;
            mpi_argv[nm++] = "-n", mpi_argv[nm++] = nranks;
        }
        if (o->hosts || o->hostfile) { /* one slot per node is not oversubscribed to Open MPI,
                                          but the hosts may share cores: do not busy-poll */
            mpi_argv[nm++] = "--mca", mpi_argv[nm++] = "mpi_yield_when_idle", mpi_argv[nm++] = "1";
        }
        if (o->hosts) {
            collie_argv[nc++] = "-H", collie_argv[nc++] = (char *)o->hosts;
            mpi_argv[nm++] = "--host", mpi_argv[nm++] = (char *)o->hosts;
        }
        if (o->hostfile) {
            collie_argv[nc++] = "--hostfile", collie_argv[nc++] = (char *)o->hostfile;
            mpi_argv[nm++] = "--hostfile", mpi_argv[nm++] = (char *)o->hostfile;
        }
        if (o->rsh) {
            collie_argv[nc++] = "--rsh", collie_argv[nc++] = (char *)o->rsh;
            snprintf(mca_rsh, sizeof mca_rsh, "%s", o->rsh);
            mpi_argv[nm++] = "--mca", mpi_argv[nm++] = "plm_rsh_agent", mpi_argv[nm++] = mca_rsh;
        }
        if (o->mpi_preload) {
            snprintf(preload, sizeof preload, "LD_PRELOAD=%s", o->mpi_preload);
            mpi_argv[nm++] = "-x", mpi_argv[nm++] = preload;
        }
        collie_argv[nc++] = self, collie_argv[nc++] = "bench";
        mpi_argv[nm++] = mpi_prog;
        int n = job_args(o, argv, 96, buf, sizeof buf, raw, round);
        for (int i = 0; i <= n; i++)
            collie_argv[nc + i] = argv[i];
        rc = tools_run_job(collie_argv);
        if (rc == 0 && o->baseline) {
            for (int i = 0; i <= n; i++)
                mpi_argv[nm + i] = argv[i];
            rc = tools_run_job(mpi_argv);
            if (rc)
                fprintf(stderr, "collie bench: the MPI baseline job failed\n");
        }
    }
    struct bench_rows rows = {0};
    if (rc == 0 && bench_rows_read_raw(&rows, raw) == 0)
        report(o, &rows, sp);
    unlink(raw);
    free(rows.row);
    return rc ? 1 : 0;
}

int collie_tool_bench(int argc, char **argv)
{
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, "collie bench"))
        return 2;
    if (o.algo)
        setenv("COLLIE_ALGO", o.algo, 1);
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
