/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.c - the wire header of wire.h: writing it from the call in flight,
 * and the one check every transport applies to a header it received.
 */
#include "wire.h"

#define WIRE_MAGIC 0x434c5733u /* "CLW3" */

void collie__wire_fill(struct collie__xfer *x, int k)
{
    const struct collie__op_desc *d = x->desc;
    int user = x->chan == COLLIE_XFER_USER;
    x->hdr[k] = (struct collie__wire){
        .magic = WIRE_MAGIC,
        .seq = user ? 0 : d->seq,
        .coll = d->coll,
        .dtype = d->dtype,
        .op = d->op,
        .stripe = (uint8_t)k,
        .algo = user ? COLLIE__ALGO_NONE : d->algo,
        .root = user ? -1 : d->root,
        .count = d->count,
        .len = x->st[k].len,
    };
}

collie_status collie__wire_mismatch(collie_comm *comm, int peer, const struct collie__op_desc *mine,
                                    const struct collie__op_desc *theirs)
{
    char a[160], b[160];
    collie__op_describe(mine, a, sizeof a);
    collie__op_describe(theirs, b, sizeof b);
    if (theirs->seq == mine->seq && theirs->coll == mine->coll && theirs->count == mine->count &&
        theirs->algo != mine->algo)
        return collie__fail(comm, COLLIE_ERR_MISMATCH,
                            "rank %d runs %s #%u with algorithm %s but rank %d with %s: give every "
                            "rank the same COLLIE_ALGO and COLLIE_NET_* settings",
                            comm->rank, a, mine->seq, collie__algo_name(mine->algo), peer,
                            collie__algo_name(theirs->algo));
    return collie__fail(comm, COLLIE_ERR_MISMATCH,
                        "rank %d called %s as collective #%u but rank %d called %s as #%u",
                        comm->rank, a, mine->seq, peer, b, theirs->seq);
}

/* A user message: the receiver's count and dtype must be the sender's. */
static collie_status check_user(collie_comm *comm, const struct collie__xfer *x,
                                const struct collie__wire *h)
{
    const struct collie__op_desc *d = x->desc;
    if (h->coll == COLLIE_COLL_SEND && h->count == d->count && h->dtype == d->dtype)
        return COLLIE_OK;
    return collie__fail(comm, COLLIE_ERR_MISMATCH,
                        "rank %d called recv(count=%llu, %s) but rank %d sent (count=%llu, %s)",
                        comm->rank, (unsigned long long)d->count, collie__dtype_name(d->dtype),
                        x->peer, (unsigned long long)h->count, collie__dtype_name(h->dtype));
}

collie_status collie__wire_check(collie_comm *comm, const struct collie__xfer *x, int k)
{
    const struct collie__wire *h = &x->hdr[k];
    if (h->magic != WIRE_MAGIC)
        return collie__fail(comm, COLLIE_ERR_INTERNAL,
                            "rank %d: the stream from rank %d lost its framing (magic %#x): "
                            "does every rank run the same collie version?",
                            comm->rank, x->peer, h->magic);
    if (x->chan == COLLIE_XFER_USER)
        return check_user(comm, x, h);
    const struct collie__op_desc *d = x->desc;
    struct collie__op_desc theirs = {.seq = h->seq,
                                     .coll = h->coll,
                                     .dtype = h->dtype,
                                     .op = h->op,
                                     .algo = h->algo,
                                     .root = h->root,
                                     .count = h->count};
    if (!collie__desc_equal(d, &theirs))
        return collie__wire_mismatch(comm, x->peer, d, &theirs);
    if (h->stripe == k && h->len == x->st[k].len)
        return COLLIE_OK;
    char mine[160];
    collie__op_describe(d, mine, sizeof mine);
    return collie__fail(comm, COLLIE_ERR_MISMATCH,
                        "rank %d expected %zu bytes in stripe %d of a message of %s #%u from "
                        "rank %d, which sent %llu in stripe %u: do all ranks set the same "
                        "COLLIE_TCP_STREAMS, COLLIE_SHM_SLOT, COLLIE_P2P_PIECE and COLLIE_ALGO?",
                        comm->rank, x->st[k].len, k, mine, d->seq, x->peer,
                        (unsigned long long)h->len, h->stripe);
}
