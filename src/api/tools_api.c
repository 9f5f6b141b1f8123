/* tools_api.c - tools_api.h: answers for `collie info` and `collie bench`. */
#include <string.h>

#include "../coll/algo.h"
#include "../core/bootstrap.h"
#include "../core/config.h"
#include "../transport/transport.h"
#include "tools_api.h"

int collie__tools_in_a_job(void) { return collie__identity_in_a_job(); }

int collie__tools_cpus(const collie_comm *comm) { return comm ? comm->cpus : -1; }

int collie__tools_hosts(const collie_comm *comm) { return comm ? comm->nhosts : -1; }

void collie__tools_print_transports(const collie_comm *comm, FILE *out)
{
    for (int i = 0; collie__transports[i]; i++) {
        const struct collie__transport *t = collie__transports[i];
        int peers = 0;
        for (int r = 0; r < comm->size; r++)
            peers += r != comm->rank && collie__transport_of(comm, r) == t;
        if (peers)
            fprintf(out, "  %-6s in use: %d peer(s) of this rank\n", t->name, peers);
        else
            fprintf(out, "  %-6s built in, not used by this job\n", t->name);
    }
}

const char *collie__tools_algo(const collie_comm *comm, const char *coll, size_t bytes)
{
    for (int c = 0; c < COLLIE_COLL_COUNT; c++) {
        if (strcmp(coll, collie__coll_name((enum collie__coll)c)))
            continue;
        struct collie__op op = {.desc = {.coll = (uint8_t)c}, .count = bytes, .elem_size = 1};
        return collie__algo_name((int)collie__select_peek(comm, &op)->id);
    }
    return NULL;
}

void collie__tools_print_algos(FILE *out) { collie__algo_print(out); }

void collie__tools_print_config(FILE *out) { collie__config_print(out); }
