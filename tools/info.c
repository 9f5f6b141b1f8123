/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * info.c - `collie info`: the version, what the library detects on this host
 * (or in the job it runs in), the algorithms and which of them the job would
 * run at each size, and the configuration table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/tools_api.h"
#include "bench/bench.h"
#include "collie.h"
#include "tools.h"

static void print_job(const collie_comm *comm)
{
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    int cpus = collie__tools_cpus(comm);
    printf("host:        %s, %d CPUs available to this process\n", host, cpus);
    printf("job:         %d rank(s) on %d host(s); this is rank %d, local rank %d of %d\n",
           collie_size(comm), collie__tools_hosts(comm), collie_rank(comm), collie_local_rank(comm),
           collie_local_size(comm));
    printf("launcher:    %s; rendezvous: %s\n", collie__tools_launcher(comm),
           collie__tools_rendezvous(comm));
    printf("waiting:     %s\n", collie_local_size(comm) > cpus
                                    ? "oversubscribed: ranks yield, then sleep"
                                    : "ranks <= CPUs: ranks poll briefly, then yield");
    double handoff = bench_handoff_ns();
    if (handoff > 0) /* the host's placement of its CPUs: see collie bench's cpu2cpu */
        printf("cpu2cpu:     a cache line moves between two CPUs in %.0f ns\n", handoff);
    printf("transports:\n");
    collie__tools_print_transports(comm, stdout);
}

/*
 * The algorithm each collective would run at each size in this job, by the
 * choice the calls make (COLLIE_ALGO included), and the rates it is made on.
 */
static void print_choices(const collie_comm *comm)
{
    static const char *const colls[] = {"allreduce", "broadcast",      "reduce",
                                        "allgather", "reduce_scatter", "alltoall"};
    static const size_t sizes[] = {8, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20};
    char err[512] = "";
    struct collie__machine *m = collie__tools_machine_new(err, sizeof err);
    if (!m)
        return;
    const char *machine = getenv("COLLIE_MACHINE");
    if (machine && *machine && !err[0])
        printf("\nchoices of this job (rates from COLLIE_MACHINE=%s; COLLIE_ALGO overrides):\n",
               machine);
    else
        printf("\nchoices of this job (built-in rates; the single copies' and the links' measured "
               "at init, or COLLIE_NET_LATENCY_US and COLLIE_NET_BANDWIDTH; COLLIE_ALGO "
               "overrides):\n");
    if (err[0])
        printf("  (%s: the built-in rates stand)\n", err);
    collie__tools_machine_place(m, comm);
    collie__tools_machine_links(m, comm);
    printf("  links between hosts%s: %.1f us, %.3f GB/s each way; within a host: %.2f us a sync, "
           "%.1f GB/s a core\n",
           collie__tools_links_measured(comm) ? " (measured at init)" : "",
           collie__tools_machine_get(m, "link_latency_us"),
           collie__tools_machine_get(m, "link_bandwidth_gbs"),
           collie__tools_machine_get(m, "host_latency_us"),
           collie__tools_machine_get(m, "host_bandwidth_gbs"));
    if (collie__tools_attach(comm))
        printf("  cross-memory attach between this host's ranks: on, %.2f us a call and %.1f "
               "GB/s (measured at init: %.2f us, %.1f GB/s)\n",
               collie__tools_machine_get(m, "host_attach_call_us"),
               collie__tools_machine_get(m, "host_attach_gbs"), collie__tools_attach_call_us(comm),
               collie__tools_attach_gbs(comm));
    else
        printf("  cross-memory attach between this host's ranks: off (COLLIE_CMA=0, or refused: "
               "COLLIE_DEBUG=INFO)\n");
    collie__tools_machine_free(m);
    printf("  allreduce_ef (error-feedback codes): %s\n", collie__tools_ef(comm));
    printf("  %-15s", "bytes");
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        printf(" %13zu", sizes[k]);
    printf("\n");
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
        printf("  %-15s", colls[c]);
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            printf(" %13s", collie__tools_algo(comm, colls[c], sizes[k]));
        printf("\n");
    }
}

int collie_tool_info(int argc, char **argv)
{
    int config_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--config")) {
            config_only = 1;
        } else if (!strcmp(argv[i], "--config-markdown")) {
            collie__tools_print_config_markdown(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: collie info [--config | --config-markdown]\n"
                   "  Shows the version, what libcollie detects, its algorithms, the one\n"
                   "  each collective would run at sizes from 8 B to 64 MiB, and every\n"
                   "  COLLIE_* variable (--config: only the variables). Run it under\n"
                   "  `collie run -n N` (or -H) to see what a job's ranks detect and\n"
                   "  choose (rank 0 prints).  --config-markdown prints the configuration\n"
                   "  reference, docs/CONFIGURATION.md.\n");
            return 0;
        } else {
            fprintf(stderr, "collie info: unknown option '%s' (try --help)\n", argv[i]);
            return 2;
        }
    }
    if (config_only) {
        collie__tools_print_config(stdout);
        return 0;
    }
    collie_comm *comm;
    collie_status st = collie_init(&comm);
    if (st != COLLIE_OK) {
        fprintf(stderr, "collie info: collie_init failed: %s\n  %s\n", collie_strerror(st),
                collie_last_error(NULL));
        return 1;
    }
    if (collie_rank(comm) == 0) {
        printf("collie %s\n", collie_version());
        print_job(comm);
        printf("\nalgorithms (COLLIE_ALGO=COLL:NAME forces one):\n");
        collie__tools_print_algos(stdout);
        print_choices(comm);
        printf("\nconfiguration:\n");
        collie__tools_print_config(stdout);
    }
    collie_finalize(comm);
    return 0;
}
