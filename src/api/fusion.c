/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fusion.c - the carrier of a fused group (async.h): the members' inputs
 * packed into one buffer in call order, one allreduce in place, the results
 * unpacked into each member's output.  The packing runs on the lane when the
 * carrier starts (the buffers belong to collie until the members complete).
 */
#include <stdlib.h>
#include <string.h>

#include "../reduce/copy.h"
#include "async.h"

struct pack {
    int n;
    size_t cap;
    struct collie_request **member;
    unsigned char buf[]; /* the members' elements, back to back */
};

static collie_status exec_fused(collie_comm *comm, struct collie_request *carrier)
{
    struct pack *p = carrier->ctx;
    size_t off = 0;
    for (int i = 0; i < p->n; i++) {
        const struct collie__op *m = &p->member[i]->op;
        size_t bytes = m->count * m->elem_size;
        collie__copy(p->buf + off, m->sendbuf, bytes);
        off += bytes;
    }
    collie_status st = collie__op_execute(comm, &carrier->op);
    if (st != COLLIE_OK)
        return st;
    off = 0;
    for (int i = 0; i < p->n; i++) {
        struct collie__op *m = &p->member[i]->op;
        size_t bytes = m->count * m->elem_size;
        collie__copy(m->recvbuf, p->buf + off, bytes);
        off += bytes;
        m->desc.seq = carrier->op.desc.seq; /* the timeline shows which allreduce carried it */
    }
    /* One collective ran; the members count as the calls they are. */
    collie__count_op(comm, COLLIE_LANE_COLL, (unsigned long long)p->n - 1);
    return COLLIE_OK;
}

struct collie_request *collie__fuse(collie_comm *comm, struct collie_request **members, int n,
                                    size_t bytes, void **spare)
{
    struct collie_request *c = calloc(1, sizeof *c);
    struct pack *p = *spare;
    if (p && p->cap >= bytes) /* last time's buffer: no page faults on the next step */
        *spare = NULL;
    else if ((p = malloc(sizeof *p + bytes)))
        p->cap = bytes;
    struct collie_request **list = malloc(sizeof *list * (size_t)n);
    if (!c || !p || !list) {
        if (p && p != *spare)
            free(p);
        free(c), free(list);
        return NULL;
    }
    memcpy(list, members, sizeof *list * (size_t)n);
    p->n = n;
    p->member = list;
    const struct collie__op *first = &members[0]->op;
    c->comm = comm;
    c->op = *first;
    c->op.sendbuf = c->op.recvbuf = p->buf;
    c->op.count = bytes / first->elem_size;
    c->op.desc.count = c->op.count;
    c->exec = exec_fused;
    c->ctx = p;
    c->t_issue = members[0]->t_issue;
    c->fused = (unsigned)n;
    return c;
}

void collie__fuse_done(struct collie_request *carrier, collie_status st, void **spare,
                       void (*complete)(struct collie_request *member, collie_status st, void *arg),
                       void *arg)
{
    struct pack *p = carrier->ctx, *kept = *spare;
    for (int i = 0; i < p->n; i++) {
        p->member[i]->t_start = carrier->t_start;
        complete(p->member[i], st, arg);
    }
    free(p->member);
    if (!kept || kept->cap < p->cap) { /* keep the larger buffer for the next group */
        free(kept);
        *spare = p;
    } else {
        free(p);
    }
    free(carrier);
}

void collie__fuse_free_spare(void *spare) { free(spare); }
