/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exchange.c - the step every point-to-point reduction is made of: send a
 * range to one member while receiving another's copy of a range and
 * combining it into ours (ring reduce-scatter, recursive doubling and
 * halving, folding in the extra members).
 *
 * Done whole, the step receives everything, then reduces: the link idles
 * while the CPU reduces, and above the cache size the received copy goes
 * to memory and comes back.  Here both directions move in pieces of
 * COLLIE_P2P_PIECE into two alternating buffers: when piece k has
 * arrived, piece k+1 is posted and pushed once (the kernel carries it on
 * while we compute), then piece k is reduced, still in cache.  The send
 * side runs ahead on its own, a piece per message.
 *
 * Both members cut the same range the same way (pieces of the same bytes),
 * so every message matches its receive exactly.  When the sent range is the
 * combined one (recursive doubling sends and reduces buf), a piece is
 * combined only after its own bytes have left.
 */
#include "../reduce/reduce.h"
#include "../transport/xfer.h"
#include "algo.h"

/* One direction of the step: its length, and where the next piece starts. */
struct side {
    size_t len, next;
};

/* Posts on x the piece of s that starts at s->next, from or into buf. */
static void post(collie_comm *comm, struct collie__xfer *x, struct side *s, int peer, int send,
                 const void *buf, size_t piece)
{
    size_t n = s->len - s->next < piece ? s->len - s->next : piece;
    collie__xfer_init(comm, x, &comm->cur, peer, send, buf, n, COLLIE_XFER_COLL);
    s->next += n;
}

collie_status collie__exchange_reduce(collie_comm *comm, int to, const void *sbuf, size_t slen,
                                      int from, void *dst, const void *mine, size_t count,
                                      collie_dtype dtype, collie_op op, int theirs_first)
{
    const size_t es = collie__dtype_size(dtype), rlen = count * es;
    size_t piece = comm->p2p_piece / es * es;
    if (!piece) /* off (0): one piece; or smaller than an element */
        piece = comm->p2p_piece ? es : (rlen > slen ? rlen : slen) + es;
    unsigned char *tmp =
        collie__scratch(comm, COLLIE_SCRATCH_TMP, rlen <= piece ? rlen : 2 * piece);
    if (!tmp)
        return comm->failed;
    struct side out = {slen, 0}, in = {rlen, 0};
    struct collie__xfer x[2] = {{.left = 0}, {.left = 0}}; /* the send, the receive; idle: left 0 */
    const unsigned char *d = dst, *sb = sbuf;
    const int aliased = slen && rlen && sb < d + rlen && d < sb + slen; /* then the same range */
    size_t landed = 0, combined = 0; /* bytes of dst received into tmp, and combined */
    uint64_t stalled_since = 0;
    for (;;) {
        if (!x[0].left && out.next < out.len)
            post(comm, &x[0], &out, to, 1, sb + out.next, piece);
        /* Piece k+1 goes to the other buffer while piece k waits to be combined. */
        if (!x[1].left && in.next < in.len && in.next - combined < 2 * piece)
            post(comm, &x[1], &in, from, 0, tmp + in.next / piece % 2 * piece, piece);
        int moved = 0, receiving = x[1].left > 0;
        collie_status st = collie__xfer_poll(comm, x, 2, &moved);
        if (st != COLLIE_OK)
            return st;
        if (receiving && !x[1].left) {
            landed = in.next;
            continue; /* post the next piece before combining this one */
        }
        size_t n = landed - combined < piece ? landed - combined : piece;
        size_t sent = x[0].left ? out.next - x[0].len : out.next;
        if (n && (!aliased || sent >= combined + n)) {
            const unsigned char *ours = (const unsigned char *)mine + combined;
            const unsigned char *theirs = tmp + combined / piece % 2 * piece;
            const void *srcs[2] = {theirs_first ? theirs : ours, theirs_first ? ours : theirs};
            collie__reduce((unsigned char *)dst + combined, srcs, 2, n / es, dtype, op, 1, 0);
            combined += n;
            stalled_since = 0;
            continue;
        }
        if (!x[0].left && out.next == out.len && combined == rlen)
            return COLLIE_OK;
        if (moved) {
            stalled_since = 0;
            continue;
        }
        if (collie__xfer_timed_out(comm, &stalled_since))
            return collie__xfer_stalled(comm, x, 2);
        st = collie__xfer_sleep(comm, x, 2, 0);
        if (st != COLLIE_OK)
            return st;
    }
}
