/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * split.c - collie_comm_split: an allgather over the parent (every rank's
 * color and key), then each new group made as a whole communicator: its own
 * host table, shared segment and connections, so that it runs beside its
 * parent (interleaved requests on both never wait for each other) and is
 * freed on its own.  Where every group lies on one host, the groups' making
 * rides on the parent's allgathers (bootstrap_over.c); else each group's
 * new rank 0 draws a unique id, a second allgather hands it out, and the
 * group meets at its own rendezvous (collie_init_rank).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/bootstrap.h"
#include "api.h"

struct member {
    int32_t color, key;
};

/* Ranks of comm in my group, in new-rank order: by key, then by old rank. */
static int group_of(const struct member *all, int n, int me, int *ranks)
{
    int count = 0;
    for (int r = 0; r < n; r++) {
        if (all[r].color != all[me].color)
            continue;
        int at = count++;
        while (at > 0 && all[ranks[at - 1]].key > all[r].key) { /* stable: old rank breaks ties */
            ranks[at] = ranks[at - 1];
            at--;
        }
        ranks[at] = r;
    }
    return count;
}

static int by_color_then_host(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Whether each group of all[] (n ranks of comm) lies on one of comm's hosts; pairs: n, scratch. */
static int groups_on_one_host(const collie_comm *comm, const struct member *all, int n,
                              int (*pairs)[2])
{
    int count = 0, one = 1;
    for (int r = 0; r < n; r++)
        if (all[r].color >= 0) {
            pairs[count][0] = all[r].color;
            pairs[count++][1] = comm->hosts.host_of[r];
        }
    qsort(pairs, (size_t)count, sizeof *pairs, by_color_then_host);
    for (int i = 1; i < count && one; i++)
        one = pairs[i][0] != pairs[i - 1][0] || pairs[i][1] == pairs[i - 1][1];
    return one;
}

/*
 * Where a group's ranks listen (its rendezvous, their doors): loopback on
 * one host, else the address the parent's rendezvous reached.
 */
static void group_addr(const collie_comm *comm, char *host, size_t len)
{
    if (comm->nhosts == 1 || collie__bootstrap_local_addr(comm, host, len))
        snprintf(host, len, "127.0.0.1");
}

static collie_status parent_allgather(collie_comm *parent, const void *mine, void *all, size_t len)
{
    return collie_allgather(parent, mine, all, len, COLLIE_UINT8);
}

/*
 * This rank's group (`count` ranks of comm, new rank i is comm's ranks[i];
 * new_rank: this rank's, -1 outside every group) made over comm, every
 * group at once.
 */
static collie_status split_over(collie_comm *comm, int new_rank, int count, const int *ranks,
                                collie_comm **newcomm)
{
    struct collie__bootstrap_over over = {
        .parent = comm, .members = ranks, .allgather = parent_allgather};
    group_addr(comm, over.host, sizeof over.host);
    collie_status st =
        new_rank >= 0 ? collie__init_over(newcomm, count, new_rank, &over) : COLLIE_OK;
    collie_status parent = collie__bootstrap_over_finish(&over, *newcomm, st);
    if (parent != COLLIE_OK) { /* the parent failed: its group may not be whole */
        collie_finalize(*newcomm);
        *newcomm = NULL;
        return parent;
    }
    if (st == COLLIE_OK && *newcomm)
        collie__comm_join_family(*newcomm, comm, ranks); /* without memory: its own */
    return st;
}

/*
 * As split_over, where a group spans hosts: each group's new rank 0 draws
 * a unique id, an allgather over comm hands it out, and each group meets at
 * its own rendezvous.
 */
static collie_status split_apart(collie_comm *comm, int new_rank, int count, const int *ranks,
                                 collie_comm **newcomm)
{
    int n = comm->size;
    collie_unique_id id = {{0}}, *ids = malloc(sizeof *ids * (size_t)n);
    if (!ids)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "collie_comm_split: no memory for %d ids", n);
    if (new_rank == 0) {
        char host[64];
        group_addr(comm, host, sizeof host);
        if (collie__get_unique_id_at(&id, host) != COLLIE_OK)
            memset(&id, 0, sizeof id); /* the members see an invalid id and fail alike */
    }
    collie_status st = collie_allgather(comm, &id, ids, sizeof id, COLLIE_UINT8);
    if (st == COLLIE_OK && new_rank >= 0) {
        st = collie_init_rank(newcomm, count, &ids[ranks[0]], new_rank);
        if (st == COLLIE_OK)
            collie__comm_join_family(*newcomm, comm, ranks); /* without memory: its own */
    }
    free(ids);
    return st;
}

collie_status collie_comm_split(collie_comm *comm, int color, int key, collie_comm **newcomm)
{
    if (!comm || !newcomm) {
        collie__api_error("collie_comm_split: %s is NULL", comm ? "newcomm" : "comm");
        if (comm)
            return collie__fail(comm, COLLIE_ERR_INVALID_ARG, "collie_comm_split: newcomm is NULL");
        return COLLIE_ERR_INVALID_ARG;
    }
    *newcomm = NULL;
    int n = comm->size;
    struct member mine = {color < 0 ? -1 : color, key}, *all = malloc(sizeof *all * (size_t)n);
    int *ranks = malloc(sizeof(int) * (size_t)n), (*pairs)[2] = malloc(sizeof *pairs * (size_t)n);
    collie_status st =
        all && ranks && pairs
            ? collie_allgather(comm, &mine, all, sizeof mine, COLLIE_UINT8)
            : collie__fail(comm, COLLIE_ERR_NOMEM, "collie_comm_split: no memory for %d ranks", n);
    if (st == COLLIE_OK) {
        int count = group_of(all, n, comm->rank, ranks), new_rank = -1;
        for (int i = 0; mine.color >= 0 && i < count; i++)
            if (ranks[i] == comm->rank)
                new_rank = i;
        /* A new communicator's failure leaves comm usable (last_error(NULL) says why). */
        st = groups_on_one_host(comm, all, n, pairs)
                 ? split_over(comm, new_rank, count, ranks, newcomm)
                 : split_apart(comm, new_rank, count, ranks, newcomm);
    }
    free(all), free(ranks), free(pairs);
    return st;
}
