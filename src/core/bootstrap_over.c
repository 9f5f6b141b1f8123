/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bootstrap_over.c - the exchanges of a communicator made inside its parent
 * (collie_comm_split, when each group lies on one host): each is one of the
 * parent's allgathers, carrying every group's records at once.
 *
 * Why: a rendezvous of its own cost a split a TCP star at its rank 0, every
 * rank connecting and proving the token, then a round over the star for each
 * exchange; each round wakes every rank in turn, which on a crowded host is
 * most of a communicator's making.  The parent's shared memory carries the
 * same records in one of its collectives.
 *
 * The price is lockstep: the parent's collectives must match on every rank,
 * so every rank takes part in exactly COLLIE__BOOTSTRAP_OVER_ROUNDS of them
 * whatever happens to its group; a rank that has finished (a group of one,
 * no group) or failed sends a record that says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "status.h"

enum { RECORD_DATA = 1, RECORD_FAILED, RECORD_DONE };

struct record {
    uint32_t kind;   /* RECORD_* */
    uint32_t status; /* RECORD_FAILED: how it failed; data holds the reason */
    uint32_t len;    /* RECORD_DATA: the bytes of data that are the record */
    uint32_t unused;
    char data[COLLIE__BOOTSTRAP_OVER_BYTES];
};

/* One of the parent's allgathers: every parent rank's record into all[] (parent->size). */
static collie_status round_trip(struct collie__bootstrap_over *over, const struct record *mine,
                                struct record *all)
{
    over->rounds++;
    return over->allgather(over->parent, mine, all, sizeof *mine);
}

static struct record *records(const struct collie__bootstrap_over *over)
{
    return malloc(sizeof(struct record) * (size_t)collie_size(over->parent));
}

collie_status collie__bootstrap_over_allgather(collie_comm *comm,
                                               struct collie__bootstrap_over *over,
                                               const void *mine, void *all, size_t len)
{
    if (len > COLLIE__BOOTSTRAP_OVER_BYTES || over->rounds >= COLLIE__BOOTSTRAP_OVER_ROUNDS)
        return collie__fail(comm, COLLIE_ERR_INTERNAL,
                            "rank %d: exchange %d of %zu bytes while made over its parent, "
                            "which carries %d of at most %d",
                            comm->rank, over->rounds + 1, len, COLLIE__BOOTSTRAP_OVER_ROUNDS,
                            COLLIE__BOOTSTRAP_OVER_BYTES);
    struct record *out = records(over), me = {.kind = RECORD_DATA, .len = (uint32_t)len};
    if (!out)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for %d ranks' records",
                            collie_size(over->parent));
    memcpy(me.data, mine, len);
    collie_status st = round_trip(over, &me, out);
    if (st != COLLIE_OK)
        st = collie__fail(comm, st, "rank %d: its parent failed while it was made: %s", comm->rank,
                          collie_last_error(over->parent));
    for (int r = 0; r < comm->size && st == COLLIE_OK; r++) {
        struct record *in = &out[over->members[r]];
        if (in->kind == RECORD_FAILED) {
            in->data[sizeof in->data - 1] = 0;
            st = collie__fail_from_peer(comm,
                                        in->status > COLLIE_OK && in->status <= COLLIE_ERR_ABORTED
                                            ? (collie_status)in->status
                                            : COLLIE_ERR_INTERNAL,
                                        in->data);
        } else if (in->kind != RECORD_DATA || in->len != len) {
            st = collie__fail(comm, COLLIE_ERR_MISMATCH,
                              "rank %d sent %s in exchange %d of the communicator's making "
                              "where rank %d sent %zu bytes: do all ranks run the same collie "
                              "with the same settings?",
                              r, in->kind == RECORD_DATA ? "another length" : "nothing more",
                              over->rounds, comm->rank, len);
        } else {
            memcpy((char *)all + (size_t)r * len, in->data, len);
        }
    }
    free(out);
    return st;
}

collie_status collie__bootstrap_over_finish(struct collie__bootstrap_over *over, collie_comm *comm,
                                            collie_status status)
{
    collie__bootstrap_made(comm);
    struct record me = {.kind = status == COLLIE_OK ? RECORD_DONE : RECORD_FAILED,
                        .status = (uint32_t)status};
    if (status != COLLIE_OK)
        snprintf(me.data, sizeof me.data, "%s", collie_last_error(comm));
    struct record *out = over->rounds < COLLIE__BOOTSTRAP_OVER_ROUNDS ? records(over) : NULL;
    if (over->rounds < COLLIE__BOOTSTRAP_OVER_ROUNDS && !out) /* the others wait in vain */
        return collie__fail(over->parent, COLLIE_ERR_NOMEM,
                            "rank %d: no memory for %d ranks' records while a split was made: "
                            "this communicator's collectives are out of step",
                            collie_rank(over->parent), collie_size(over->parent));
    collie_status st = COLLIE_OK;
    while (st == COLLIE_OK && over->rounds < COLLIE__BOOTSTRAP_OVER_ROUNDS)
        st = round_trip(over, &me, out);
    free(out);
    return st;
}
