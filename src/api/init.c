/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init.c - the communicator's life cycle and getters: collie_init() builds
 * the layers bottom-up (configuration, identity, rendezvous, host table,
 * transports), collie_finalize() takes them down top-down.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../coll/algo.h"
#include "../core/auth.h"
#include "../core/bootstrap.h"
#include "../core/config.h"
#include "../core/door.h"
#include "../core/log.h"
#include "../core/status.h"
#include "../core/uid.h"
#include "../transport/transport.h"
#include "api.h"
#include "async.h"
#include "timeline.h"

/* Per thread: two threads failing collie_init at once each read their own. */
static _Thread_local char init_error[512];

void collie__api_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(init_error, sizeof init_error, fmt, ap);
    va_end(ap);
}

collie_status collie__refuse(collie_comm *comm, const char *call, const char *fmt, ...)
{
    char detail[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (!comm) {
        collie__api_error("collie_%s: %s", call, detail);
        return COLLIE_ERR_INVALID_ARG;
    }
    return collie__fail(comm, COLLIE_ERR_INVALID_ARG, "%s on rank %d: %s", call, comm->rank,
                        detail);
}

void collie__api_close(collie_comm *comm)
{
    free(comm->api);
    comm->api = NULL;
}

static void destroy(collie_comm *comm)
{
    collie__comm_leave(comm);     /* a relative's failure: the peers hear why this rank leaves */
    collie__async_shutdown(comm); /* pending requests complete or fail first */
    collie__timeline_detach(comm);
    collie__transports_close(comm);
    collie__door_close(comm);
    collie__bootstrap_close(comm);
    collie__select_close(comm);
    collie__api_close(comm);
    collie__comm_free(comm);
}

static collie_status init_fail(collie_comm *comm, collie_status status)
{
    collie__api_error("%s", comm->last_error);
    destroy(comm);
    return status;
}

/* What each rank tells every other in the first exchange: where it runs, where its door is. */
struct card {
    char host_id[COLLIE_HOST_ID_LEN];
    struct collie__door_addr door;
};

/*
 * The first exchange of a new communicator: every rank's card, in one round
 * over the rendezvous (each round costs every rank a wake-up, on a crowded
 * host most of a communicator's making).  Fills the host table and the doors.
 */
static collie_status meet(collie_comm *comm, const struct collie__identity *id)
{
    struct card mine, *all = calloc((size_t)comm->size, sizeof *all);
    if (!all)
        return collie__fail(comm, COLLIE_ERR_NOMEM, "no memory for %d ranks' cards", comm->size);
    memset(&mine, 0, sizeof mine);
    memcpy(mine.host_id, id->host_id, sizeof mine.host_id);
    collie_status st = collie__door_listen(comm, &mine.door);
    if (st == COLLIE_OK)
        st = collie__bootstrap_allgather(comm, &mine, all, sizeof mine);
    if (st == COLLIE_OK)
        st = collie__comm_find_hosts(comm, all[0].host_id, sizeof *all, sizeof all->host_id,
                                     id->local_rank, id->local_size, id->source);
    if (st == COLLIE_OK)
        st = collie__door_learn(comm, &all[0].door, sizeof *all);
    free(all);
    return st;
}

static collie_status join(collie_comm *comm, const struct collie__identity *id)
{
    collie_status st = collie__select_init(comm);
    if (st == COLLIE_OK)
        st = id->over ? collie__bootstrap_open_over(comm, id->over)
                      : collie__bootstrap_open(comm, id);
    if (st == COLLIE_OK)
        st = meet(comm, id);
    if (st == COLLIE_OK)
        st = collie__transports_open(comm);
    if (st == COLLIE_OK)
        st = collie__select_check_forced(comm);
    if (st == COLLIE_OK)
        st = collie__select_probe_links(comm);
    return st;
}

/* COLLIE_ENCRYPT is 0 or 1, and 1 only with a token to derive keys from (seal.h). */
static collie_status check_encrypt(collie_comm *comm, int token_public)
{
    long long encrypt = collie__config_int(COLLIE_CFG_ENCRYPT);
    if (encrypt != 0 && encrypt != 1)
        return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                            "COLLIE_ENCRYPT=%lld: it is 0 (plain links) or 1 (encrypted)", encrypt);
    if (encrypt && comm->size > 1 && (!comm->token[0] || token_public))
        return collie__fail(comm, COLLIE_ERR_INVALID_ARG,
                            "COLLIE_ENCRYPT=1 needs COLLIE_TOKEN (the keys derive from it): "
                            "`collie run` sets one; with other launchers export the same random "
                            "COLLIE_TOKEN to every rank");
    return COLLIE_OK;
}

/* Builds a communicator for id (collie_init, collie_init_rank); token NULL: COLLIE_TOKEN. */
static collie_status make_comm(const struct collie__identity *id, const char *token,
                               collie_comm **out)
{
    collie_comm *comm = collie__comm_create(id->rank, id->size);
    struct collie__api_state *api = comm ? calloc(1, sizeof *api) : NULL;
    if (!api) {
        if (id->listen_fd >= 0)
            close(id->listen_fd);
        if (comm)
            collie__comm_free(comm);
        collie__api_error("collie_init: no memory for a communicator");
        return COLLIE_ERR_NOMEM;
    }
    comm->api = api;
    comm->launcher = id->source;
    comm->rendezvous = id->rendezvous;
    if (!token && id->token[0] && !collie__auth_has_token())
        token = id->token; /* the launcher's; COLLIE_TOKEN, where set, is every rank's alike */
    if (token) {
        snprintf(comm->token_buf, sizeof comm->token_buf, "%s", token);
        comm->token = comm->token_buf;
    }
    collie__log_set_rank(comm->rank);
    if ((!token || id->token_public) && comm->size > 1 && comm->rank == 0 && !id->over &&
        !collie__auth_has_token())
        COLLIE_WARN("init",
                    "COLLIE_TOKEN is not set: any process that reaches %s:%d can join "
                    "this job or feed it data. `collie run` sets a random one; with other "
                    "launchers export the same random COLLIE_TOKEN to every rank",
                    id->addr_host, id->addr_port);
    if (comm->size == 1 && id->listen_fd >= 0)
        close(id->listen_fd); /* a one-rank communicator has nobody to accept */
    collie_status st = check_encrypt(comm, id->token_public && !collie__auth_has_token());
    if (st == COLLIE_OK)
        st = join(comm, id);
    if (st != COLLIE_OK)
        return init_fail(comm, st);
    COLLIE_INFO("init",
                "rank %d of %d (from %s, rendezvous: %s), host '%s' (%d of %d): local rank %d "
                "of %d",
                comm->rank, comm->size, id->source, id->rendezvous, id->host_id,
                comm->hosts.host_of[comm->rank] + 1, comm->nhosts, comm->local_rank,
                comm->local_size);
    collie__timeline_attach(comm);
    *out = comm;
    return COLLIE_OK;
}

static collie_status load_config(void)
{
    if (collie__config_load() == 0)
        return COLLIE_OK;
    collie__api_error("%s", collie__config_error());
    COLLIE_WARN("error", "COLLIE_ERR_INVALID_ARG: %s", collie__config_error());
    return COLLIE_ERR_INVALID_ARG;
}

collie_status collie_init(collie_comm **out)
{
    if (!out) {
        collie__api_error("collie_init: comm (the output pointer) is NULL");
        return COLLIE_ERR_INVALID_ARG;
    }
    *out = NULL;
    collie_status st = load_config();
    if (st != COLLIE_OK)
        return st;
    struct collie__identity id;
    char err[400];
    st = collie__identity_from_env(&id, err, sizeof err);
    if (st != COLLIE_OK) {
        collie__api_error("%s", err);
        COLLIE_WARN("error", "%s: %s", collie__status_name(st), err);
        return st;
    }
    return make_comm(&id, NULL, out);
}

collie_status collie__get_unique_id_at(collie_unique_id *id, const char *host)
{
    if (!id) {
        collie__api_error("collie_get_unique_id: id is NULL");
        return COLLIE_ERR_INVALID_ARG;
    }
    collie_status st = load_config();
    if (st != COLLIE_OK)
        return st;
    char err[300];
    memset(id, 0, sizeof *id);
    if (collie__uid_draw((struct collie__uid *)(void *)id->internal, host, err, sizeof err) != 0) {
        collie__api_error("collie_get_unique_id: %s", err);
        COLLIE_WARN("error", "COLLIE_ERR_SYSTEM: collie_get_unique_id: %s", err);
        return COLLIE_ERR_SYSTEM;
    }
    return COLLIE_OK;
}

collie_status collie_get_unique_id(collie_unique_id *id)
{
    return collie__get_unique_id_at(id, NULL);
}

collie_status collie_init_rank(collie_comm **out, int size, const collie_unique_id *uid, int rank)
{
    if (!out || !uid) {
        collie__api_error("collie_init_rank: %s is NULL", out ? "id" : "comm (the output pointer)");
        return COLLIE_ERR_INVALID_ARG;
    }
    *out = NULL;
    struct collie__uid u;
    memcpy(&u, uid->internal, sizeof u);
    if (size < 1 || rank < 0 || rank >= size || !collie__uid_valid(&u)) {
        collie__api_error(!collie__uid_valid(&u)
                              ? "collie_init_rank: id is not a collie_unique_id (from "
                                "collie_get_unique_id of this version)"
                              : "collie_init_rank: rank=%d of size=%d: need 0 <= rank < size",
                          rank, size);
        return COLLIE_ERR_INVALID_ARG;
    }
    collie_status st = load_config();
    if (st != COLLIE_OK)
        return st;
    struct collie__identity id;
    collie__identity_for_rank(&id, rank, size, u.host, u.port);
    if (rank == 0)
        id.listen_fd = collie__uid_take_listener(&u);
    if (id.listen_fd == -2 || (id.listen_fd == -1 && rank == 0 && size > 1)) {
        collie__api_error(
            id.listen_fd == -2
                ? "collie_init_rank: this collie_unique_id was used for a communicator already: "
                  "draw a new one (collie_get_unique_id) for each"
                : "collie_init_rank: rank 0 joins in a process that did not draw this id: rank "
                  "0's listener opens when the id is drawn, in the drawing process, so draw it "
                  "(collie_get_unique_id) in rank 0's process and send it to the others");
        COLLIE_WARN("error", "COLLIE_ERR_INVALID_ARG: %s", collie_last_error(NULL));
        return COLLIE_ERR_INVALID_ARG;
    }
    char token[2 * COLLIE_UID_TOKEN_BYTES + 1];
    collie__uid_token_text(&u, token, sizeof token);
    return make_comm(&id, token, out);
}

collie_status collie__init_over(collie_comm **out, int size, int rank,
                                struct collie__bootstrap_over *over)
{
    *out = NULL;
    collie_status st = load_config();
    if (st != COLLIE_OK)
        return st;
    struct collie__identity id;
    collie__identity_for_rank(&id, rank, size, "", 0);
    id.source = "collie_comm_split";
    id.rendezvous = "its parent's exchanges";
    id.over = over;
    return make_comm(&id, over->parent->token, out);
}

collie_status collie_finalize(collie_comm *comm)
{
    if (comm)
        destroy(comm);
    return COLLIE_OK;
}

int collie_rank(const collie_comm *comm) { return comm ? comm->rank : -1; }
int collie_size(const collie_comm *comm) { return comm ? comm->size : -1; }
int collie_local_rank(const collie_comm *comm) { return comm ? comm->local_rank : -1; }
int collie_local_size(const collie_comm *comm) { return comm ? comm->local_size : -1; }
int collie_host_count(const collie_comm *comm) { return comm ? comm->nhosts : -1; }
int collie_host_index(const collie_comm *comm)
{
    return comm ? comm->hosts.host_of[comm->rank] : -1;
}
int collie_host_of(const collie_comm *comm, int rank)
{
    return comm && rank >= 0 && rank < comm->size ? comm->hosts.host_of[rank] : -1;
}

collie_status collie_get_counters(const collie_comm *comm, unsigned long long *ops,
                                  unsigned long long *bytes_sent)
{
    if (!comm)
        return COLLIE_ERR_INVALID_ARG;
    unsigned long long n = 0, bytes = 0;
    for (int lane = 0; lane < COLLIE_LANES; lane++) {
        n += comm->counts[lane].ops;
        bytes += comm->counts[lane].bytes_sent;
    }
    if (ops)
        *ops = n;
    if (bytes_sent)
        *bytes_sent = bytes;
    return COLLIE_OK;
}

const char *collie_last_error(const collie_comm *comm)
{
    return comm ? comm->last_error : init_error;
}
