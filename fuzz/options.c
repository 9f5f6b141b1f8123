/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options.c - the `collie` command line: `collie bench`'s options
 * (tools/bench/options.c) and the machine options `collie sim` and
 * `collie sim train` share (tools/sim_machine.c).  The input is the
 * arguments, split at NUL bytes; its first byte picks the command.
 *
 * The promises: options that parse give values the commands can run with
 * (counts at least 1, sizes that end, a finite list of sizes); a machine
 * that sim accepts gives a prediction for every collective at every size.
 * --help (which prints and exits) and --machine (a file: fuzz/config.c
 * reads those) are left out.
 */
#include <string.h>

#include "../tools/bench/bench.h"
#include "../tools/sim.h"
#include "fuzz.h"

#define MAX_ARGS 32

static void bench(int argc, char **argv)
{
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, "collie bench") != 0)
        return;
    FUZZ_ASSERT(o.iters >= 1 && o.warmup >= 0 && o.rounds >= 1 && o.root >= 0);
    FUZZ_ASSERT(o.factor > 1 && o.min_time >= 0);
    FUZZ_ASSERT(o.ncolls >= 0 && o.nbaselines >= 0 && o.nbaselines <= BENCH_MAX_BASELINES);
    for (int i = 0; i < o.ncolls && i < BENCH_NCOLLS; i++) {
        size_t *sizes;
        size_t n = bench_sizes(&o, o.colls[i], o.nranks ? o.nranks : 4, &sizes);
        FUZZ_ASSERT(sizes && n <= 100000);
        for (size_t k = 1; k < n; k++)
            FUZZ_ASSERT(sizes[k] > sizes[k - 1]);
        free(sizes);
    }
}

static void sim(int argc, char **argv)
{
    char err[512];
    struct collie__machine *m = collie__tools_machine_new(err, sizeof err);
    FUZZ_ASSERT(m);
    int used[MAX_ARGS + 1] = {0};
    if (sim_machine_options(m, argc - 1, argv + 1, used) == 0 && sim_machine_ready(m) == 0) {
        static const char *const colls[] = {"allreduce",      "broadcast", "reduce", "allgather",
                                            "reduce_scatter", "alltoall",  "barrier"};
        for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++)
            for (int shift = 0; shift <= 40; shift += 8) {
                double seconds;
                const char *algo;
                FUZZ_ASSERT(collie__tools_predict(m, colls[c], NULL, (size_t)1 << shift, 1,
                                                  &seconds, &algo) == 0);
                FUZZ_ASSERT(seconds >= 0 && algo);
            }
    }
    collie__tools_machine_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    fuzz_quiet_stderr();
    if (size < 1 || size > 4096)
        return 0;
    char *argv[MAX_ARGS + 2], *buf;
    int argc = fuzz_args(data + 1, size - 1, "collie", argv, MAX_ARGS, &buf);
    if (!argc)
        return 0;
    int skip = 0;
    for (int i = 1; i < argc; i++)
        skip |=
            !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "--machine");
    if (!skip) {
        if (data[0] & 1)
            sim(argc, argv);
        else
            bench(argc, argv);
    }
    free(buf);
    return 0;
}
