/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * split.c - collie_comm_split: two allgathers over the parent (every rank's
 * color and key; then each new group's unique id, drawn by its new rank 0),
 * and collie_init_rank on the id.  A sub-communicator is thus a whole
 * communicator: its own rendezvous, host table, shared segment and
 * connections, so that it runs beside its parent (interleaved requests on
 * both never wait for each other) and is freed on its own.
 */
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
    int *ranks = malloc(sizeof(int) * (size_t)n);
    collie_unique_id id = {{0}}, *ids = malloc(sizeof *ids * (size_t)n);
    collie_status st = all && ranks && ids ? COLLIE_OK
                                           : collie__fail(comm, COLLIE_ERR_NOMEM,
                                                          "collie_comm_split: no memory for %d "
                                                          "ranks' colors",
                                                          n);
    if (st == COLLIE_OK)
        st = collie_allgather(comm, &mine, all, sizeof mine, COLLIE_UINT8);
    int count = st == COLLIE_OK ? group_of(all, n, comm->rank, ranks) : 0;
    int leader = count ? ranks[0] : -1;
    if (st == COLLIE_OK && mine.color >= 0 && leader == comm->rank) {
        /* One host: loopback.  Across hosts: the address the parent's rendezvous reached. */
        char host[64];
        int local = comm->nhosts == 1 || collie__bootstrap_local_addr(comm, host, sizeof host);
        if (collie__get_unique_id_at(&id, local ? "127.0.0.1" : host) != COLLIE_OK)
            memset(&id, 0, sizeof id); /* the members see an invalid id and fail alike */
    }
    if (st == COLLIE_OK)
        st = collie_allgather(comm, &id, ids, sizeof id, COLLIE_UINT8);
    if (st == COLLIE_OK && mine.color >= 0) {
        int new_rank = 0;
        while (ranks[new_rank] != comm->rank)
            new_rank++;
        /* A failure here is the new communicator's: comm stays usable, last_error(NULL) says why. */
        st = collie_init_rank(newcomm, count, &ids[leader], new_rank);
        if (st == COLLIE_OK)
            collie__comm_join_family(*newcomm, comm, ranks); /* without memory: its own */
    }
    free(all), free(ranks), free(ids);
    return st;
}
