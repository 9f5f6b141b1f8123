/* SPDX-License-Identifier: BSD-3-Clause */
/* tools_api.c - tools_api.h: answers for `collie info` and `collie bench`. */
#include <stdlib.h>
#include <string.h>

#include "../coll/algo.h"
#include "../coll/cost.h"
#include "../core/bootstrap.h"
#include "../core/config.h"
#include "../transport/shm.h"
#include "../transport/transport.h"
#include "api.h"
#include "tools_api.h"

int collie__tools_in_a_job(void) { return collie__identity_in_a_job(); }

const char *collie__tools_launcher(const collie_comm *comm)
{
    return comm && comm->launcher ? comm->launcher : "?";
}

const char *collie__tools_rendezvous(const collie_comm *comm)
{
    return comm && comm->rendezvous ? comm->rendezvous : "?";
}

const char *collie__tools_ef(const collie_comm *comm)
{
    return comm ? collie__ef_describe(comm) : "?";
}

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

static int coll_number(const char *coll)
{
    for (int c = 0; c < COLLIE_COLL_COUNT; c++)
        if (!strcmp(coll, collie__coll_name((enum collie__coll)c)))
            return c;
    return -1;
}

const char *collie__tools_algo(const collie_comm *comm, const char *coll, size_t bytes)
{
    int c = coll_number(coll);
    if (c < 0)
        return NULL;
    struct collie__op op = {.desc = {.coll = (uint8_t)c}, .count = bytes, .elem_size = 1};
    return collie__select_peek(comm, &op)->name;
}

collie_status collie__tools_force(collie_comm *comm, const char *spec)
{
    collie_status st = collie__select_force(comm, spec);
    return st == COLLIE_OK ? collie__select_check_forced(comm) : st;
}

int collie__tools_attach(const collie_comm *comm) { return collie__attach_ok(comm); }

double collie__tools_attach_call_us(const collie_comm *comm)
{
    return collie__attach_call_s(comm) * 1e6;
}

double collie__tools_attach_gbs(const collie_comm *comm)
{
    return collie__attach_beta(comm) * 1e-9;
}

int collie__tools_links_measured(const collie_comm *comm)
{
    return comm->coll->link_alpha > 0 || comm->coll->link_beta > 0;
}

struct collie__machine *collie__tools_machine_new(char *err, size_t errlen)
{
    struct collie__machine *m = calloc(1, sizeof *m);
    const char *error = m ? collie__select_rates(m) : NULL;
    if (error)
        snprintf(err, errlen, "COLLIE_MACHINE: %s", error);
    return m;
}

void collie__tools_machine_free(struct collie__machine *m) { free(m); }

void collie__tools_machine_place(struct collie__machine *m, const collie_comm *comm)
{
    collie__select_place(comm, m);
}

void collie__tools_machine_links(struct collie__machine *m, const collie_comm *comm)
{
    collie__select_links(comm, m);
}

int collie__tools_machine_set(struct collie__machine *m, const char *key, const char *value,
                              char *err, size_t errlen)
{
    return collie__machine_set(m, key, value, err, errlen);
}

int collie__tools_machine_read(struct collie__machine *m, const char *path, char *err,
                               size_t errlen)
{
    return collie__machine_read(m, path, err, errlen);
}

int collie__tools_machine_check(struct collie__machine *m, char *err, size_t errlen)
{
    return collie__machine_check(m, err, errlen);
}

void collie__tools_machine_write(const struct collie__machine *m, FILE *out)
{
    collie__machine_write(m, out);
}

double collie__tools_machine_get(const struct collie__machine *m, const char *key)
{
    return collie__machine_get(m, key);
}

int collie__tools_predict(const struct collie__machine *m, const char *coll, const char *algo,
                          size_t bytes, int degree, double *seconds, const char **chosen)
{
    int c = coll_number(coll);
    if (c < 0)
        return -1;
    const struct collie__algo *a =
        algo ? collie__algo_find(c, algo, strlen(algo)) : collie__select_on(m, c, bytes);
    if (!a)
        return -1;
    *seconds = a->cost(m, (double)bytes, degree);
    *chosen = a->name;
    return 0;
}

void collie__tools_print_algos(FILE *out) { collie__algo_print(out); }

void collie__tools_print_config(FILE *out) { collie__config_print(out); }

void collie__tools_print_config_markdown(FILE *out) { collie__config_print_markdown(out); }
