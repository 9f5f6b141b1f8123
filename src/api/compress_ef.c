/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compress_ef.c - collie_[i]allreduce_ef: allreduce of error-feedback codes
 * (src/reduce/quantize.h), in DeepSpeed's compressed-allreduce shape.  Each
 * rank adds its residual to its buffer and encodes it as n chunks; an
 * alltoall gives chunk j's codes to rank j, which sums them with its own
 * residual of that chunk and encodes the sum; an allgather gives every rank
 * every owner's code, which every rank decodes alike.  Each message starts
 * with a header that names the kind and count it was made for, so ranks that
 * disagree fail with MISMATCH even where their messages are the same size.
 *
 * Codes pay where links are slow: by default (COLLIE_EF_CODES=auto) a job
 * on several hosts whose links the cost model finds slow enough
 * (cost_ef.c) reduces exactly within each host, the hosts' first ranks run
 * the codes between them, and each broadcasts the result in its host; any
 * other job runs an exact allreduce.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/algo.h"
#include "../coll/cost.h"
#include "../core/config.h"
#include "../reduce/quantize.h"
#include "api.h"
#include "async.h"

#define MAGIC 0x45460000u /* "EF" above the kind */

struct header {
    uint32_t kind;      /* MAGIC | kind */
    uint32_t pad;       /* (count on 8 bytes) */
    uint64_t count;     /* the call's count on the rank that wrote it */
    uint32_t bad;       /* an owner's: 1 + the first rank whose chunk disagreed, else 0 */
    uint32_t bad_kind;  /* that rank's kind and count */
    uint64_t bad_count; /* (an owner passes them on: every rank then names the same pair) */
};

enum ef_mode {
    EF_CODES, /* every rank of comm runs the codes */
    EF_EXACT, /* nothing coded (one host, or links too fast to pay): an exact allreduce */
    EF_HOSTS, /* exact within each host, the codes between the hosts' first ranks */
};

struct collie_compressor {
    collie_comm *comm;
    enum ef_mode mode;
    collie_comm *local;       /* EF_HOSTS: this host's ranks */
    collie_comm *leaders;     /* EF_HOSTS: the hosts' first ranks (NULL on the others) */
    collie_compressor *inner; /* EF_HOSTS, on a first rank: the codes between hosts */
    size_t count, chunk;      /* chunk: the elements each rank owns, ceil(count / ranks) */
    size_t message;           /* bytes of one chunk's message: header and code, 8-aligned */
    int kind;
    atomic_int busy;     /* a call is using it */
    float *worker;       /* ranks x chunk: what this rank's codes left out */
    float *owner;        /* chunk: what the code of the chunk this rank owns left out */
    unsigned char *out;  /* ranks messages: this rank's codes, one per owner */
    unsigned char *in;   /* ranks messages: the codes received, then the owners' gathered */
    unsigned char *mine; /* one message: this rank's code of its chunk */
};

/* A call's state on its lane: the compressor it uses and its two collectives, checked. */
struct ef_call {
    collie_compressor *c;
    float *buf;
    collie_op op;
    struct collie__op gather;
};

static const char *kind_name(uint32_t kind)
{
    return kind == COLLIE_COMPRESS_INT8 ? "INT8" : kind == COLLIE_COMPRESS_SIGN ? "SIGN" : "?";
}

/* The elements of chunk j that the buffer has (the last ones may be short, or empty). */
static size_t valid(const collie_compressor *c, int j)
{
    size_t start = (size_t)j * c->chunk;
    return start >= c->count ? 0 : c->count - start < c->chunk ? c->count - start : c->chunk;
}

static const char *const where_names[] = {"auto", "hosts", "all", "off"};
enum where { WHERE_AUTO, WHERE_HOSTS, WHERE_ALL, WHERE_OFF, WHERE_BAD };

/* COLLIE_EF_CODES, as one of where_names, or WHERE_BAD. */
static enum where where_set(void)
{
    const char *v = collie__config_string(COLLIE_CFG_EF_CODES);
    for (int w = WHERE_AUTO; w < WHERE_BAD; w++)
        if (!strcmp(v, where_names[w]))
            return (enum where)w;
    return WHERE_BAD;
}

/*
 * Where comm's calls of `kind` run the codes: COLLIE_EF_CODES's choice, or
 * for auto the cost model's on rates every rank holds alike (the links'
 * are measured once for the job).  The count does not enter, so ranks
 * whose counts differ still take the same path and fail alike.
 */
static enum ef_mode mode_for(const collie_comm *comm, int kind, enum where where)
{
    if (where == WHERE_ALL)
        return EF_CODES;
    if (where == WHERE_OFF || comm->nhosts == 1)
        return EF_EXACT;
    if (where == WHERE_AUTO) {
        struct collie__machine m;
        collie__select_machine(comm, &m);
        if (!collie__cost_ef_codes_pay(&m, kind))
            return EF_EXACT;
    }
    return comm->nhosts == comm->size ? EF_CODES : EF_HOSTS; /* one rank a host: all cross */
}

static const char *mode_words(enum ef_mode mode)
{
    switch (mode) {
    case EF_EXACT: return "exact";
    case EF_HOSTS: return "exact within each host, codes between the hosts' first ranks";
    default: return "codes on every rank";
    }
}

const char *collie__ef_describe(const collie_comm *comm)
{
    static _Thread_local char text[400];
    enum where where = where_set();
    if (where == WHERE_BAD) {
        snprintf(text, sizeof text, "COLLIE_EF_CODES='%s' is not auto, hosts, all or off",
                 collie__config_string(COLLIE_CFG_EF_CODES));
        return text;
    }
    enum ef_mode int8 = mode_for(comm, COLLIE_COMPRESS_INT8, where),
                 sign = mode_for(comm, COLLIE_COMPRESS_SIGN, where);
    const char *why = " (the cost model, on the links' rates)";
    if (comm->nhosts == 1 && where != WHERE_ALL)
        why = " (one host: COLLIE_EF_CODES=all codes it)";
    else if (where != WHERE_AUTO)
        why = " (COLLIE_EF_CODES)";
    if (int8 == sign)
        snprintf(text, sizeof text, "%s%s", mode_words(int8), why);
    else
        snprintf(text, sizeof text, "INT8: %s; SIGN: %s%s", mode_words(int8), mode_words(sign),
                 why);
    return text;
}

static collie_status create(collie_comm *comm, size_t count, int kind, enum ef_mode mode,
                            collie_compressor **out);

/* EF_HOSTS: each host's ranks, and the hosts' first ranks with the codes between them. */
static collie_status split_hosts(collie_compressor *c)
{
    collie_comm *comm = c->comm;
    int host = comm->hosts.host_of[comm->rank], first = comm->local_rank == 0;
    collie_status st = collie_comm_split(comm, host, comm->rank, &c->local);
    if (st == COLLIE_OK)
        st = collie_comm_split(comm, first ? 0 : -1, comm->rank, &c->leaders);
    if (st == COLLIE_OK && first)
        st = create(c->leaders, c->count, c->kind, EF_CODES, &c->inner); /* decided: codes */
    if (st != COLLIE_OK)
        return collie__fail(comm, st, "rank %d: allreduce_ef cannot group the hosts' ranks: %s",
                            comm->rank, collie_last_error(NULL));
    return COLLIE_OK;
}

collie_status collie_compressor_create(collie_comm *comm, size_t count, collie_compress_kind kind,
                                       collie_compressor **out)
{
    if (!out)
        return collie__refuse(comm, "compressor_create", "out (the output pointer) is NULL");
    *out = NULL;
    if (!comm)
        return collie__refuse(NULL, "compressor_create", "comm is NULL");
    if (kind != COLLIE_COMPRESS_INT8 && kind != COLLIE_COMPRESS_SIGN)
        return collie__refuse(comm, "compressor_create",
                              "kind=%d is not COLLIE_COMPRESS_INT8 (1) or COLLIE_COMPRESS_SIGN (2)",
                              (int)kind);
    size_t n = (size_t)comm->size;
    if (count > SIZE_MAX / 16 / n)
        return collie__refuse(comm, "compressor_create", "count=%zu overflows the address space",
                              count);
    enum where where = where_set();
    if (where == WHERE_BAD)
        return collie__refuse(comm, "compressor_create",
                              "COLLIE_EF_CODES='%s' is not auto, hosts, all or off",
                              collie__config_string(COLLIE_CFG_EF_CODES));
    return create(comm, count, kind, mode_for(comm, kind, where), out);
}

/* A compressor on comm whose calls take `mode`'s path (its arguments checked). */
static collie_status create(collie_comm *comm, size_t count, int kind, enum ef_mode mode,
                            collie_compressor **out)
{
    size_t n = (size_t)comm->size, chunk = (count + n - 1) / n;
    collie_compressor *c = calloc(1, sizeof *c);
    size_t message = (sizeof(struct header) + collie__quant_bytes(kind, chunk) + 7) & ~(size_t)7;
    if (c) {
        c->comm = comm;
        c->mode = mode;
        c->count = count;
        c->chunk = chunk;
        c->kind = kind;
        c->message = message;
        if (mode == EF_CODES) {
            c->worker = calloc(n * chunk + 1, sizeof *c->worker);
            c->owner = calloc(chunk + 1, sizeof *c->owner);
            c->out = calloc(n, message);
            c->in = calloc(n, message);
            c->mine = calloc(1, message);
        }
    }
    if (!c || (mode == EF_CODES && (!c->worker || !c->owner || !c->out || !c->in || !c->mine))) {
        collie_compressor_free(c);
        return collie__fail(comm, COLLIE_ERR_NOMEM,
                            "rank %d: no memory for a compressor of %zu elements", comm->rank,
                            count);
    }
    collie_status st = mode == EF_HOSTS ? split_hosts(c) : COLLIE_OK;
    if (st != COLLIE_OK) {
        collie_compressor_free(c);
        return st;
    }
    *out = c;
    return COLLIE_OK;
}

collie_status collie_compressor_free(collie_compressor *c)
{
    if (!c)
        return COLLIE_OK;
    if (atomic_load(&c->busy))
        return collie__refuse(c->comm, "compressor_free",
                              "a request still uses this compressor: wait for it first");
    collie_compressor_free(c->inner);
    if (c->leaders)
        collie_finalize(c->leaders);
    if (c->local)
        collie_finalize(c->local);
    free(c->worker);
    free(c->owner);
    free(c->out);
    free(c->in);
    free(c->mine);
    free(c);
    return COLLIE_OK;
}

static void write_header(unsigned char *at, const collie_compressor *c, const struct header *bad)
{
    struct header h = {.kind = MAGIC | (uint32_t)c->kind, .count = c->count};
    if (bad) {
        h.bad = bad->bad;
        h.bad_kind = bad->bad_kind;
        h.bad_count = bad->bad_count;
    }
    memcpy(at, &h, sizeof h);
}

/* Whether h was written for a call like c's. */
static int agrees(const collie_compressor *c, const struct header *h)
{
    return h->kind == (MAGIC | (uint32_t)c->kind) && h->count == c->count;
}

/* Every rank: its residual plus its buffer, encoded chunk by chunk into one message per owner. */
static void encode_all(collie_compressor *c, const float *buf)
{
    for (int j = 0; j < c->comm->size; j++) {
        float *x = c->worker + (size_t)j * c->chunk;
        size_t m = valid(c, j);
        for (size_t i = 0; i < m; i++)
            x[i] += buf[(size_t)j * c->chunk + i];
        unsigned char *msg = c->out + (size_t)j * c->message;
        memset(msg, 0, c->message); /* the bytes past a short chunk's code go out as zeros */
        write_header(msg, c, NULL);
        collie__quant_encode(c->kind, x, m, msg + sizeof(struct header));
    }
}

/* The owner: the sum (or mean) of its chunk's codes plus its residual, encoded. */
static void combine_owned(collie_compressor *c, collie_op op)
{
    int n = c->comm->size;
    size_t m = valid(c, c->comm->rank);
    float scale = op == COLLIE_AVG ? 1.0f / (float)n : 1.0f;
    struct header bad = {0};
    for (int s = 0; s < n; s++) {
        struct header h;
        memcpy(&h, c->in + (size_t)s * c->message, sizeof h);
        if (!agrees(c, &h)) {
            if (!bad.bad)
                bad = (struct header){
                    .bad = (uint32_t)s + 1, .bad_kind = h.kind & 0xffffu, .bad_count = h.count};
            continue;
        }
        collie__quant_decode_add(c->kind, c->in + (size_t)s * c->message + sizeof h, m, scale,
                                 c->owner);
    }
    memset(c->mine, 0, c->message);
    write_header(c->mine, c, bad.bad ? &bad : NULL);
    collie__quant_encode(c->kind, c->owner, m, c->mine + sizeof(struct header));
}

/* Every rank: the owners' codes decoded into buf, or MISMATCH where a header disagrees. */
static collie_status decode_all(collie_comm *comm, collie_compressor *c, float *buf)
{
    for (int j = 0; j < comm->size; j++) {
        struct header h;
        memcpy(&h, c->in + (size_t)j * c->message, sizeof h);
        if (h.bad || !agrees(c, &h)) { /* an owner's report, or an owner unlike this rank */
            int one = h.bad ? j : comm->rank, other = h.bad ? (int)h.bad - 1 : j;
            uint32_t kind_one = h.bad ? h.kind & 0xffffu : (uint32_t)c->kind;
            uint32_t kind_other = h.bad ? h.bad_kind : h.kind & 0xffffu;
            unsigned long long count_one = h.bad ? h.count : c->count;
            unsigned long long count_other = h.bad ? h.bad_count : h.count;
            return collie__fail(comm, COLLIE_ERR_MISMATCH,
                                "allreduce_ef: rank %d calls it on %llu elements with %s codes, "
                                "rank %d on %llu with %s codes",
                                one, count_one, kind_name(kind_one), other, count_other,
                                kind_name(kind_other));
        }
        collie__quant_decode(c->kind, c->in + (size_t)j * c->message + sizeof h, valid(c, j),
                             buf + (size_t)j * c->chunk);
    }
    return COLLIE_OK;
}

/* EF_HOSTS: each host's sum, exact; the codes between the hosts; the result in each host. */
static collie_status run_hosts(collie_comm *comm, collie_compressor *c, float *buf, collie_op op)
{
    collie_comm *failed = c->local;
    collie_status st = collie_reduce(c->local, buf, buf, c->count, COLLIE_FLOAT32, COLLIE_SUM, 0);
    if (st == COLLIE_OK && c->inner) {
        if (op == COLLIE_AVG) /* scaled before the codes: every rank decodes the same bits */
            for (size_t i = 0; i < c->count; i++)
                buf[i] /= (float)comm->size;
        failed = c->leaders;
        st = collie_allreduce_ef(c->leaders, c->inner, buf, c->count, COLLIE_SUM);
    }
    if (st == COLLIE_OK) {
        failed = c->local;
        st = collie_broadcast(c->local, buf, c->count, COLLIE_FLOAT32, 0);
    }
    return st == COLLIE_OK ? st
                           : collie__fail(comm, st, "allreduce_ef between hosts: %s",
                                          collie_last_error(failed));
}

static collie_status exec_ef(collie_comm *comm, struct collie_request *r)
{
    struct ef_call *call = r->ctx;
    collie_compressor *c = call->c;
    collie_status st = COLLIE_OK;
    if (c->count && c->mode == EF_EXACT)
        st = collie__op_execute(comm, &r->op); /* the float32 allreduce itself */
    else if (c->count && c->mode == EF_HOSTS)
        st = run_hosts(comm, c, call->buf, call->op);
    if (!c->count || c->mode != EF_CODES) { /* (with no count, not even headers would move) */
        atomic_store(&c->busy, 0);
        return st;
    }
    encode_all(c, call->buf);
    st = collie__op_execute(comm, &r->op); /* the alltoall */
    if (st == COLLIE_OK) {
        combine_owned(c, call->op);
        st = collie__op_execute(comm, &call->gather);
    }
    if (st == COLLIE_OK)
        st = decode_all(comm, c, call->buf);
    atomic_store(&c->busy, 0);
    return st;
}

collie_status collie_iallreduce_ef(collie_comm *comm, collie_compressor *c, float *buf,
                                   size_t count, collie_op op, collie_request **req)
{
    if (!req)
        return collie__refuse(comm, "iallreduce_ef", "req (the output pointer) is NULL");
    *req = NULL;
    const char *bad = NULL;
    if (!comm)
        bad = "comm is NULL";
    else if (!c)
        bad = "the compressor is NULL";
    else if (c->comm != comm)
        bad = "the compressor belongs to another communicator";
    else if (count != c->count)
        bad = "count differs from the compressor's";
    else if (op != COLLIE_SUM && op != COLLIE_AVG)
        bad = "op must be COLLIE_SUM or COLLIE_AVG";
    else if (count && !buf)
        bad = "buf is NULL but count > 0";
    if (bad)
        return collie__refuse(comm, "allreduce_ef", "%s (count=%zu, compressor's %zu)", bad, count,
                              c ? c->count : 0);
    int idle = 0;
    if (!atomic_compare_exchange_strong(&c->busy, &idle, 1))
        return collie__refuse(comm, "allreduce_ef",
                              "a pending request uses this compressor: one call at a time");
    struct ef_call *call = malloc(sizeof *call);
    /* The request's own operation: the codes' alltoall, or an allreduce of the buffer (run
     * as it is where nothing is coded; for EF_HOSTS it orders the call on comm's lane). */
    struct collie__op all_to_all = {
        .desc = {.coll = COLLIE_COLL_ALLTOALL, .root = -1},
        .sendbuf = c->out,
        .recvbuf = c->in,
        .count = count ? c->message : 0,
        .dtype = COLLIE_UINT8,
        .root = -1,
    };
    if (c->mode != EF_CODES)
        all_to_all = (struct collie__op){
            .desc = {.coll = COLLIE_COLL_ALLREDUCE, .root = -1},
            .sendbuf = buf,
            .recvbuf = buf,
            .count = count,
            .dtype = COLLIE_FLOAT32,
            .op = op,
            .root = -1,
        };
    collie_status st =
        call ? collie__op_check(comm, &all_to_all)
             : collie__fail(comm, COLLIE_ERR_NOMEM, "rank %d: no memory for a call", comm->rank);
    if (st == COLLIE_OK) {
        *call = (struct ef_call){.c = c, .buf = buf, .op = op};
        call->gather = (struct collie__op){
            .desc = {.coll = COLLIE_COLL_ALLGATHER, .root = -1},
            .sendbuf = c->mine,
            .recvbuf = c->in,
            .count = count ? c->message : 0,
            .dtype = COLLIE_UINT8,
            .root = -1,
        };
        if (c->mode == EF_CODES)
            st = collie__op_check(comm, &call->gather);
    }
    if (st == COLLIE_OK)
        st = collie__async_issue(comm, &all_to_all, exec_ef, call, req);
    if (st != COLLIE_OK) {
        free(call);
        atomic_store(&c->busy, 0);
    }
    return st;
}

collie_status collie_allreduce_ef(collie_comm *comm, collie_compressor *c, float *buf, size_t count,
                                  collie_op op)
{
    collie_request *req;
    collie_status st = collie_iallreduce_ef(comm, c, buf, count, op, &req);
    return st == COLLIE_OK ? collie_wait(req) : st;
}

void collie__ef_residual_total(const collie_compressor *c, collie_op op, float *out)
{
    memset(out, 0, c->count * sizeof *out);
    if (c->mode == EF_HOSTS && c->inner) {
        collie__ef_residual_total(c->inner, COLLIE_SUM, out);
        return;
    }
    if (c->mode != EF_CODES)
        return;
    float scale = op == COLLIE_AVG ? 1.0f / (float)c->comm->size : 1.0f;
    for (size_t i = 0; i < c->count; i++)
        out[i] = c->worker[i] * scale;
    size_t first = (size_t)c->comm->rank * c->chunk;
    for (size_t i = 0; i < valid(c, c->comm->rank); i++)
        out[first + i] += c->owner[i];
}
