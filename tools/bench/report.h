/* SPDX-License-Identifier: BSD-3-Clause */
/* report.h - printing and writing bench results; the memory-bandwidth floor. */
#ifndef COLLIE_BENCH_REPORT_H
#define COLLIE_BENCH_REPORT_H

#include "bench.h"

struct bench_machine {
    char cpu[128];
    int cores;
    char version[32];
};

/* STREAM-style memory bandwidth of this host, GB/s. */
struct bench_stream {
    double copy1, triad1;       /* one thread */
    double copy_all, triad_all; /* one thread per core */
};

void bench_print_table(const struct bench_opts *o, const struct bench_rows *rows,
                       const struct bench_stream *stream);

/*
 * The median over rounds of one backend's row for (coll, bytes) (times, and
 * overlap's comm and comp), with the rounds' min and max mean; 0 if none.
 */
int bench_merged(const struct bench_rows *rows, const char *backend, int coll, size_t bytes,
                 struct bench_row *out);

/* The tables of `bench overlap` and `bench fusion` (report_async.c), at the ns sizes given. */
void bench_print_overlap(const struct bench_opts *o, const struct bench_rows *rows,
                         const size_t *sizes, size_t ns);
void bench_print_fusion(const struct bench_opts *o, const struct bench_rows *rows,
                        const size_t *sizes, size_t ns);
void bench_machine(struct bench_machine *m);
/* The rows as CSV; with a stream measurement (else NULL), each row's floor_us (bench_floor_us). */
int bench_write_csv(const char *path, const struct bench_rows *rows, const struct bench_machine *m,
                    const struct bench_stream *stream);
int bench_write_json(const char *path, const struct bench_rows *rows, const struct bench_machine *m,
                     const struct bench_stream *stream);
/* 0 drawn, 1 gnuplot missing (data and script written, and said so), -1 error. */
int bench_plot(const char *png, const struct bench_opts *o, const struct bench_rows *rows);

/* Measures memory bandwidth (copy and triad; one thread, then all cores). */
void bench_stream_measure(struct bench_stream *s);
/*
 * The time the traffic floor of an allreduce row allows, in us, or 0 where it
 * does not apply (other collectives, rows under 16 MiB).  Floor: every rank
 * reads its input once and writes its output once, 2 * n * bytes through
 * memory, at the copy bandwidth of all cores.
 */
double bench_floor_us(const struct bench_stream *s, const struct bench_row *r);

#endif
