/* SPDX-License-Identifier: BSD-3-Clause */
/* collie.c - the `collie` command: dispatches to its subcommands. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "collie.h"
#include "common/launch.h"
#include "tools.h"

/*
 * `collie train` is its own executable (collie-train, beside this one): the
 * training workloads link OpenBLAS, whose thread pool must never sit in a
 * rank that `collie bench` measures.
 */
static int train(char **argv)
{
    char path[PATH_MAX];
    if (tools_sibling_path("collie-train", path, sizeof path) == 0) {
        argv[0] = path;
        execv(path, argv);
    }
    fprintf(stderr,
            "collie train: cannot run %s: %s (is this build configured with "
            "COLLIE_BUILD_TRAIN=ON?)\n",
            path, strerror(errno));
    return 127;
}

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: collie COMMAND [ARGS...]\n"
        "\n"
        "commands:\n"
        "  run     launch N ranks of a program on this host   (collie run -h)\n"
        "  bench   measure the collectives, optionally beside MPI   (collie bench -h)\n"
        "  train   data-parallel training of an MLP or logistic regression (collie train -h)\n"
        "  sim     predict collectives and training on any machine, at any scale (collie sim -h)\n"
        "  info    show the version, what the library detects, and its configuration\n"
        "  timeline FILE  merge the ranks' COLLIE_TIMELINE=FILE traces into FILE\n"
        "  version print the version\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run"))
        return collie_tool_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return collie_tool_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "train"))
        return train(argv + 1);
    if (!strcmp(cmd, "sim"))
        return collie_tool_sim(argc - 1, argv + 1);
    if (!strcmp(cmd, "info"))
        return collie_tool_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "timeline"))
        return collie_tool_timeline(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("collie %s\n", collie_version());
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "collie: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
