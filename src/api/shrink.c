/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shrink.c - collie_comm_shrink: the survivors of a failure agree on who is
 * left and build a communicator of exactly those (ULFM's MPI_Comm_shrink).
 *
 * They cannot use the failed communicator's links, so they meet at the
 * doors every rank opened at init (core/door.h).  One survivor coordinates:
 * the lowest rank that this rank has no evidence against.  Evidence comes
 * in two strengths: a door that refuses a connection is a dead process
 * (DEAD, final), and a rank whose door took a connection but did not answer
 * within COLLIE_TIMEOUT is presumed stalled (SILENT).  Each rank, in a loop:
 *
 *   - if every rank below it is suspected, it coordinates: it takes JOINs
 *     at its door, probes the ranks that have not joined (a refusal proves
 *     a death at once, so a SIGKILLed rank costs nothing), and decides when
 *     every other rank has joined or is suspected, or COLLIE_TIMEOUT after
 *     it began;
 *   - otherwise it joins the lowest unsuspected rank and waits for the
 *     decision, serving its own door meanwhile: whoever knocks hears whom
 *     it follows (FOLLOW), so a rank that was wrongly suspected - stalled,
 *     then woken - learns who the survivors follow and joins them instead
 *     of coordinating a communicator of its own (the lower of two
 *     coordinators wins; the other hands its members over, REDIRECT).
 *
 * The decision lists the members and carries a fresh collie_unique_id
 * drawn by the coordinator, which is the new communicator's rank 0; the
 * members keep their order.  Each suspected stalled candidate costs at most
 * one COLLIE_TIMEOUT, dead ones nothing, and the whole call is capped.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../core/auth.h"
#include "../core/door.h"
#include "../core/gate.h"
#include "../core/log.h"
#include "../core/seal.h"
#include "../core/sock.h"
#include "api.h"

#define MAGIC 0x5348524bu             /* "SHRK" */
#define SLICE_MS 20                   /* serving the door between looks at one's own connection */
#define PROBE_FIRST_NS 250000000ull   /* then twice as long each time, up to COLLIE_TIMEOUT / 16 */
#define PROBE_CONNECT_NS 100000000ull /* a door on a live host answers a connect in far less */
#define PROBE_ANSWER_NS 200000000ull  /* a rank in shrink serves its door every SLICE_MS */
#define RETRY_PAUSE_NS 50000000ull

enum knock { KNOCK_JOIN = 1, KNOCK_PROBE = 2 };
enum answer { ANS_ACK = 1, ANS_FOLLOW, ANS_LATE, ANS_DECISION, ANS_REDIRECT };
enum evidence { NONE, SILENT, DEAD, JOINED };

struct knock_msg { /* the hello that passes the gate */
    uint32_t magic, kind;
    int32_t from, size;
};

struct answer_msg {
    uint32_t magic, kind;
    int32_t arg;   /* FOLLOW, REDIRECT: a rank (-1: none yet); DECISION: the member count */
    int32_t first; /* DECISION: the coordinator, the new rank 0 */
};

struct shrink {
    collie_comm *comm;
    int n, me;
    uint8_t *ev;                    /* [r]: enum evidence */
    struct collie__link *member;    /* coordinating: [r] a member's connection, else fd -1 */
    uint64_t *probe_at, *probe_gap; /* coordinating: each rank's next probe, and the gap after */
    struct collie__gate *gate;
    int floor;  /* candidates start here (yielding to a rank moves it there) */
    int follow; /* whom this rank follows now (me: coordinating; -1: looking) */
    int yield;  /* coordinating: a lower coordinator showed itself, -1: none */
    uint64_t timeout_ns, cap_ns;
    collie_status status; /* why it failed */
    /* the decision */
    int count, *ranks;
    collie_unique_id id;
};

enum step { STEP_DONE, STEP_AGAIN, STEP_FAILED };

static const struct collie__door_addr *door_of(const struct shrink *s, int r)
{
    return &s->comm->door->addr[r];
}

static int send_answer(struct collie__link l, uint32_t kind, int32_t arg, int32_t first,
                       uint64_t deadline)
{
    struct answer_msg a = {MAGIC, kind, arg, first};
    return collie__link_send(l, &a, sizeof a, deadline);
}

static enum step failed(struct shrink *s, collie_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum step failed(struct shrink *s, collie_status st, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    collie__api_error("collie_comm_shrink on rank %d: %s", s->me, msg);
    COLLIE_WARN("shrink", "%s: %s", collie_strerror(st), collie_last_error(NULL));
    s->status = st;
    return STEP_FAILED;
}

/* Coordinating, and a lower coordinator x showed itself: this rank and its members go there. */
static void yield_to(struct shrink *s, int x, int why)
{
    if (s->yield >= 0 && s->yield <= x)
        return;
    COLLIE_INFO("shrink", "rank %d yields to rank %d (%s)", s->me, x,
                why < 0 ? "it coordinates too" : "another rank follows it");
    s->yield = x;
}

/*
 * Serves the door for up to wait_ns.  A JOIN joins a coordinator; anyone
 * else hears whom this rank follows.  A PROBE comes from a coordinator: a
 * lower one than this coordinating rank wins.
 */
static void serve_door(struct shrink *s, uint64_t wait_ns)
{
    uint64_t until = collie__now_ns() + wait_ns;
    struct collie__link l = {-1, NULL};
    struct knock_msg k;
    struct collie__auth_nonces nonces;
    while (collie__gate_next(s->gate, until, &l.fd, &k, &nonces) == 0) {
        uint64_t dl = collie__now_ns() + PROBE_ANSWER_NS;
        int valid =
            k.magic == MAGIC && k.size == s->n && k.from >= 0 && k.from < s->n && k.from != s->me;
        if (collie__link_seal(&l, s->comm->token, &nonces, 0, &k, sizeof k) != 0) {
            /* it will see its connection end: as if this rank were gone */
            COLLIE_WARN("shrink",
                        "rank %d could not encrypt its door's link to rank %d "
                        "(COLLIE_ENCRYPT=1; see the seal's message above)",
                        s->me, k.from);
            collie__link_close(&l);
            continue;
        }
        if (valid && k.kind == KNOCK_JOIN && s->follow == s->me) {
            /* it may come back after losing its connection: the new one replaces the old */
            collie__link_close(&s->member[k.from]);
            s->member[k.from] = l;
            s->ev[k.from] = JOINED;
            if (send_answer(l, ANS_ACK, s->me, s->me, dl) != 0) {
                collie__link_close(&s->member[k.from]);
                s->ev[k.from] = DEAD;
            }
            continue;
        }
        if (valid && k.kind == KNOCK_PROBE && s->follow == s->me && k.from < s->me)
            yield_to(s, k.from, -1);
        if (valid)
            send_answer(l, ANS_FOLLOW, s->yield >= 0 ? s->yield : s->follow, -1, dl);
        else
            COLLIE_WARN("shrink", "rank %d: a knock at its door that is not a shrink's (from %d)",
                        s->me, k.from);
        collie__link_close(&l);
    }
}

/* Connects to r's door: 0 with *fd, or -1 (ev[r] DEAD when it refused: nobody listens there). */
static int open_door(struct shrink *s, int r, uint64_t by, int *fd)
{
    const struct collie__door_addr *at = door_of(s, r);
    if (collie__sock_connect_once(at->host, at->port, by, fd) == 0)
        return 0;
    if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH)
        s->ev[r] = DEAD;
    return -1;
}

/*
 * Opens an authenticated connection to r's door and knocks: 0 with the
 * connection in *l, or -1 with s->ev[r] updated (DEAD when refused or
 * reset, SILENT when no answer by deadline).  -2: r's door answered with
 * another token (or another COLLIE_ENCRYPT).
 */
static int knock(struct shrink *s, int r, uint32_t kind, uint64_t connect_by, uint64_t answer_by,
                 struct collie__link *l)
{
    *l = (struct collie__link){-1, NULL};
    if (open_door(s, r, connect_by, &l->fd)) {
        if (kind == KNOCK_JOIN && s->ev[r] != DEAD)
            s->ev[r] = SILENT;
        return -1;
    }
    struct collie__auth_nonces nonces;
    int rc = collie__auth_connect(l->fd, s->comm->token, answer_by, &nonces);
    struct knock_msg k = {MAGIC, kind, s->me, s->n};
    if (rc == 0)
        rc = collie__sock_send(l->fd, &k, sizeof k, answer_by);
    if (rc == 0 && collie__link_seal(l, s->comm->token, &nonces, 1, &k, sizeof k) != 0)
        rc = -1, errno = ENOMEM;
    if (rc != 0) {
        int e = errno;
        collie__link_close(l);
        if (rc == -2)
            return -2;
        if (e == ETIMEDOUT) {
            if (kind == KNOCK_JOIN)
                s->ev[r] = SILENT;
        } else {
            s->ev[r] = DEAD;
        }
        return -1;
    }
    return 0;
}

static int recv_answer(struct collie__link l, struct answer_msg *a, uint64_t deadline)
{
    if (collie__link_recv(l, a, sizeof *a, deadline) != 0)
        return -1;
    if (a->magic != MAGIC) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

/*
 * Coordinating: asks r (not joined, not dead) whom it follows.  A refusal
 * proves r dead; no answer means r is not shrinking yet.  If r follows a
 * lower rank than this one, that rank coordinates too (or is about to) and
 * wins; if r follows a higher one, that one will probe here and yield.
 */
static void probe(struct shrink *s, int r)
{
    uint64_t now = collie__now_ns(), cap = s->timeout_ns / 16;
    s->probe_at[r] = now + s->probe_gap[r];
    if (s->probe_gap[r] < cap)
        s->probe_gap[r] *= 2; /* a rank slow to fail costs its door a few stale knocks, no more */
    /*
     * A rival coordinator can only be a lower rank not proven dead.  With
     * none, asking is pointless: a bare connection tells death from life
     * at once, without waiting on a rank that is not shrinking yet.
     */
    int rival = 0;
    for (int x = 0; x < s->me; x++)
        rival |= s->ev[x] != DEAD;
    if (!rival) {
        int fd;
        if (open_door(s, r, now + PROBE_CONNECT_NS, &fd) == 0)
            close(fd); /* alive: its gate will see a knock given up, and say so at INFO */
        return;
    }
    struct collie__link l;
    if (knock(s, r, KNOCK_PROBE, now + PROBE_CONNECT_NS, now + PROBE_ANSWER_NS, &l) != 0)
        return;
    struct answer_msg a;
    if (recv_answer(l, &a, collie__now_ns() + PROBE_ANSWER_NS) == 0 && a.kind == ANS_FOLLOW &&
        a.arg >= 0 && a.arg < s->me)
        yield_to(s, a.arg, r);
    collie__link_close(&l);
}

/* Coordinating: the decision to every member; the new communicator's id drawn here. */
static enum step decide(struct shrink *s)
{
    int others = 0, unproven = 0;
    for (int r = 0; r < s->n; r++) {
        others += r != s->me && s->ev[r] == JOINED;
        unproven += r != s->me && s->ev[r] != JOINED && s->ev[r] != DEAD;
    }
    if (others == 0 && unproven > 0)
        /* Alone among ranks that live: they most likely shrank without this one. */
        return failed(s, COLLIE_ERR_PEER_LOST,
                      "no survivor joined rank %d within COLLIE_TIMEOUT, and %d rank(s) whose "
                      "doors still open did not answer: they shrank without it, or stall",
                      s->me, unproven);
    char host[64];
    snprintf(host, sizeof host, "%s", door_of(s, s->me)->host);
    if ((s->status = collie__get_unique_id_at(&s->id, host)) != COLLIE_OK)
        return STEP_FAILED; /* last_error(NULL) says why */
    s->count = 0;
    s->ranks[s->count++] = s->me;
    for (int r = 0; r < s->n; r++)
        if (r != s->me && s->ev[r] == JOINED)
            s->ranks[s->count++] = r;
    uint64_t dl = collie__now_ns() + s->timeout_ns;
    for (int i = 1; i < s->count; i++) {
        struct collie__link l = s->member[s->ranks[i]];
        /* A member lost now fails the new communicator's init, within its timeout. */
        if (send_answer(l, ANS_DECISION, s->count, s->me, dl) == 0 &&
            collie__link_send(l, s->ranks, sizeof(int) * (size_t)s->count, dl) == 0)
            collie__link_send(l, &s->id, sizeof s->id, dl);
    }
    return STEP_DONE;
}

/* Tells members that joined here to go to s->floor instead. */
static void hand_over(struct shrink *s)
{
    uint64_t dl = collie__now_ns() + PROBE_ANSWER_NS;
    for (int r = 0; r < s->n; r++)
        if (s->member[r].fd >= 0) {
            send_answer(s->member[r], ANS_REDIRECT, s->floor, -1, dl);
            collie__link_close(&s->member[r]);
            s->ev[r] = NONE;
        }
}

/* A member's connection that ended before the decision: it died (or gave up on us). */
static void watch_members(struct shrink *s)
{
    for (int r = 0; r < s->n; r++) {
        if (s->member[r].fd < 0)
            continue;
        struct pollfd p = {s->member[r].fd, POLLIN, 0};
        char byte; /* a member sends nothing after its JOIN: anything here is its end */
        if (poll(&p, 1, 0) == 1 && recv(p.fd, &byte, 1, MSG_DONTWAIT) <= 0) {
            collie__link_close(&s->member[r]);
            s->ev[r] = DEAD;
        }
    }
}

static int settled(const struct shrink *s)
{
    for (int r = 0; r < s->n; r++)
        if (r != s->me && s->ev[r] == NONE)
            return 0;
    return 1;
}

static enum step coordinate(struct shrink *s)
{
    s->follow = s->me;
    s->yield = -1;
    uint64_t now = collie__now_ns(), decide_by = now + s->timeout_ns;
    for (int r = 0; r < s->n; r++) {
        s->probe_at[r] = now;
        s->probe_gap[r] = PROBE_FIRST_NS;
    }
    COLLIE_INFO("shrink", "rank %d coordinates", s->me);
    int next = 0;
    while (!settled(s) && collie__now_ns() < decide_by) {
        serve_door(s, SLICE_MS * 1000000ull);
        watch_members(s);
        /* One probe per turn, round robin, so that the door is served between them. */
        for (int k = 0; k < s->n && s->yield < 0; k++) {
            int r = (next + k) % s->n;
            if (r == s->me || s->ev[r] == JOINED || s->ev[r] == DEAD ||
                collie__now_ns() < s->probe_at[r])
                continue;
            next = r + 1;
            probe(s, r);
            break;
        }
        if (s->yield >= 0) {
            s->floor = s->yield;
            s->ev[s->yield] = NONE;
            hand_over(s);
            return STEP_AGAIN;
        }
    }
    serve_door(s, 0); /* JOINs that arrived meanwhile */
    return decide(s);
}

/* Waits for the decision of the coordinator at l, serving the door meanwhile. */
static enum step await_decision(struct shrink *s, int c, struct collie__link l)
{
    uint64_t deadline = collie__now_ns() + s->timeout_ns + 2000000000ull;
    while (collie__now_ns() < deadline) {
        serve_door(s, SLICE_MS * 1000000ull);
        struct pollfd p = {l.fd, POLLIN, 0};
        if (!collie__link_buffered(l) && poll(&p, 1, SLICE_MS) != 1)
            continue;
        struct answer_msg a;
        if (recv_answer(l, &a, collie__now_ns() + s->timeout_ns) != 0) {
            s->ev[c] = DEAD; /* it died, or gave up */
            return STEP_AGAIN;
        }
        if (a.kind == ANS_REDIRECT && a.arg >= 0 && a.arg < s->n) {
            s->floor = a.arg;
            s->ev[a.arg] = NONE;
            return STEP_AGAIN;
        }
        if (a.kind != ANS_DECISION || a.arg < 1 || a.arg > s->n || a.first != c)
            return failed(s, COLLIE_ERR_INTERNAL, "rank %d sent a shrink answer %d out of turn", c,
                          (int)a.kind);
        s->count = a.arg;
        uint64_t dl = collie__now_ns() + s->timeout_ns;
        if (collie__link_recv(l, s->ranks, sizeof(int) * (size_t)s->count, dl) != 0 ||
            collie__link_recv(l, &s->id, sizeof s->id, dl) != 0) {
            s->ev[c] = DEAD;
            return STEP_AGAIN;
        }
        return STEP_DONE;
    }
    s->ev[c] = SILENT;
    return STEP_AGAIN;
}

static enum step join(struct shrink *s, int c)
{
    s->follow = c;
    uint64_t now = collie__now_ns();
    struct collie__link l;
    int rc = knock(s, c, KNOCK_JOIN, now + s->timeout_ns, now + s->timeout_ns, &l);
    if (rc == -2)
        return failed(s, COLLIE_ERR_AUTH,
                      "rank %d's door answered with another token (or another COLLIE_ENCRYPT)", c);
    if (rc < 0)
        return STEP_AGAIN;
    struct answer_msg a;
    enum step st = STEP_AGAIN;
    if (recv_answer(l, &a, collie__now_ns() + s->timeout_ns) != 0) {
        s->ev[c] = errno == ETIMEDOUT ? SILENT : DEAD;
    } else if (a.kind == ANS_ACK) {
        st = await_decision(s, c, l);
    } else if (a.kind == ANS_FOLLOW) {
        /* c is not coordinating (yet): it follows someone we suspect, or looks. */
        if (a.arg >= 0 && a.arg < s->n && a.arg != s->me && s->ev[a.arg] == SILENT)
            s->ev[a.arg] = NONE; /* it answered c: worth another knock */
        struct timespec pause = {0, (long)RETRY_PAUSE_NS};
        nanosleep(&pause, NULL);
    }
    collie__link_close(&l);
    return st;
}

/* The lowest rank from floor with no evidence against it. */
static int candidate(const struct shrink *s)
{
    for (int r = s->floor; r < s->n; r++)
        if (r == s->me || (s->ev[r] != DEAD && s->ev[r] != SILENT))
            return r;
    return s->me;
}

static enum step agree(struct shrink *s)
{
    while (collie__now_ns() < s->cap_ns) {
        int c = candidate(s);
        enum step st = c == s->me ? coordinate(s) : join(s, c);
        s->follow = -1;
        if (st != STEP_AGAIN)
            return st;
    }
    return failed(s, COLLIE_ERR_TIMEOUT,
                  "no agreement on the survivors within 3 x COLLIE_TIMEOUT = %.0f s",
                  3 * s->comm->timeout_s);
}

collie_status collie_comm_shrink(collie_comm *comm, collie_comm **newcomm)
{
    if (!comm || !newcomm) {
        collie__api_error("collie_comm_shrink: %s is NULL", comm ? "newcomm" : "comm");
        return COLLIE_ERR_INVALID_ARG;
    }
    *newcomm = NULL;
    if (comm->size == 1 || !comm->door) {
        collie_unique_id id;
        collie_status st = collie__get_unique_id_at(&id, "127.0.0.1");
        return st == COLLIE_OK ? collie_init_rank(newcomm, 1, &id, 0) : st;
    }
    int n = comm->size;
    struct shrink s = {.comm = comm, .n = n, .me = comm->rank, .follow = -1, .yield = -1};
    s.timeout_ns = (uint64_t)(comm->timeout_s * 1e9);
    s.cap_ns = collie__now_ns() + 3 * s.timeout_ns;
    s.ev = calloc((size_t)n, 1);
    s.member = malloc(sizeof *s.member * (size_t)n);
    s.probe_at = calloc((size_t)n, sizeof *s.probe_at);
    s.probe_gap = calloc((size_t)n, sizeof *s.probe_gap);
    s.ranks = malloc(sizeof(int) * (size_t)n);
    char who[64];
    snprintf(who, sizeof who, "rank %d (its door)", s.me);
    if (s.ev && s.member && s.probe_at && s.probe_gap && s.ranks)
        s.gate =
            collie__gate_open(comm->door->listen_fd, comm->token, sizeof(struct knock_msg), who);
    collie_status st = COLLIE_ERR_NOMEM;
    if (!s.gate) {
        collie__api_error("collie_comm_shrink: no memory for %d ranks' state", n);
    } else {
        for (int r = 0; r < n; r++)
            s.member[r] = (struct collie__link){-1, NULL};
        double t0 = collie_wtime();
        st = agree(&s) == STEP_DONE ? COLLIE_OK : s.status;
        if (st == COLLIE_OK) {
            int new_rank = 0;
            while (s.ranks[new_rank] != s.me)
                new_rank++;
            COLLIE_INFO("shrink", "rank %d: %d survivor(s) agreed in %.3f s, rank 0 was rank %d",
                        s.me, s.count, collie_wtime() - t0, s.ranks[0]);
            st = collie_init_rank(newcomm, s.count, &s.id, new_rank);
        }
        for (int r = 0; r < n; r++)
            collie__link_close(&s.member[r]);
        collie__gate_close(s.gate);
    }
    free(s.ev), free(s.member), free(s.probe_at), free(s.probe_gap), free(s.ranks);
    return st;
}
