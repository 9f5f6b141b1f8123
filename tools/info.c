/*
 * info.c - `collie info`: the version, what the library detects on this host
 * (or in the job it runs in), the algorithms, and the configuration table.
 */
#include <stdio.h>
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
    printf("waiting:     %s\n", collie_local_size(comm) > cpus
                                    ? "oversubscribed: ranks yield, then sleep"
                                    : "ranks <= CPUs: ranks poll briefly, then yield");
    double handoff = bench_handoff_ns();
    if (handoff > 0) /* the host's placement of its CPUs: see collie bench's cpu2cpu */
        printf("cpu2cpu:     a cache line moves between two CPUs in %.0f ns\n", handoff);
    printf("transports:\n");
    collie__tools_print_transports(comm, stdout);
}

int collie_tool_info(int argc, char **argv)
{
    int config_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--config")) {
            config_only = 1;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: collie info [--config]\n"
                   "  Shows the version, what libcollie detects, its algorithms and every\n"
                   "  COLLIE_* variable (--config: only the variables). Run it under\n"
                   "  `collie run -n N` to see what a job's ranks detect (rank 0 prints).\n");
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
        printf("\nconfiguration:\n");
        collie__tools_print_config(stdout);
    }
    collie_finalize(comm);
    return 0;
}
