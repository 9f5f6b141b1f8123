/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.c - the check of a received wire header (src/transport/wire.c):
 * every transport applies it to the 40 bytes a peer sent before it writes
 * a byte of payload.  The input is this rank's call (a descriptor, the
 * channel, the stripe and its agreed length) and the header received.
 * The promises: a header is accepted exactly when it is the one the peer
 * would have written for the same call (collie__wire_fill), and the error
 * that names a mismatch can describe any bytes at all.
 */
#include <string.h>

#include "fuzz.h"
#include "transport/wire.h"

struct input {
    struct collie__op_desc desc;
    uint8_t chan, stripe;
    uint8_t pad[6];
    uint64_t len;
    struct collie__wire hdr;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static collie_comm *comm;
    if (!comm && !(comm = collie__comm_create(0, 2)))
        return 0;
    struct input in;
    if (size != sizeof in)
        return 0;
    memcpy(&in, data, sizeof in);
    struct collie__xfer x = {.peer = 1, .chan = in.chan & 1, .desc = &in.desc, .nstripes = 1};
    int k = in.stripe % COLLIE_MAX_STREAMS;
    x.st[k].len = (size_t)in.len;

    /* What the peer writes for this call: the header that must pass. */
    struct collie__xfer theirs = x;
    collie__wire_fill(&theirs, k);
    int same = !memcmp(&theirs.hdr[k], &in.hdr, offsetof(struct collie__wire, pad)) &&
               theirs.hdr[k].root == in.hdr.root && theirs.hdr[k].count == in.hdr.count &&
               theirs.hdr[k].len == in.hdr.len;
    if (x.chan == COLLIE_XFER_USER) /* a user message: only the magic, count and dtype matter */
        same = in.hdr.magic == theirs.hdr[k].magic && in.hdr.coll == COLLIE_COLL_SEND &&
               in.hdr.count == in.desc.count && in.hdr.dtype == in.desc.dtype;

    x.hdr[k] = in.hdr;
    atomic_store(&comm->failed, COLLIE_OK);
    collie_status st = collie__wire_check(comm, &x, k);
    FUZZ_ASSERT((st == COLLIE_OK) == same);
    FUZZ_ASSERT(st == COLLIE_OK || strlen(comm->last_error) > 0);
    comm->last_error[0] = 0;
    return 0;
}
