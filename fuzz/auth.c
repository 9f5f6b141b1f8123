/*
 * auth.c - the token handshake (src/core/auth.c) against a peer that sends
 * arbitrary bytes, on both sides: as the accepting end (rank 0, any
 * listener) and as the connecting end.  The promise: bytes not computed from
 * the token are never accepted (the nonces are fresh, so no input can carry
 * a valid proof), and nothing is read past what the handshake asks for.
 */
#include <sys/socket.h>
#include <unistd.h>

#include "core/auth.h"
#include "core/clock.h"
#include "core/sock.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096) /* a socket pair's buffer holds it: the writer never blocks */
        return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    /* The peer's bytes, then its end of the stream. */
    if (collie__sock_send(sv[1], data + 1, size - 1, collie__now_ns() + 1000000000ull) == 0) {
        shutdown(sv[1], SHUT_WR);
        uint64_t deadline = collie__now_ns() + 1000000000ull;
        int rc = data[0] & 1 ? collie__auth_connect(sv[0], "fuzz-token", deadline)
                             : collie__auth_accept(sv[0], "fuzz-token", deadline);
        FUZZ_ASSERT(rc == -1 || rc == -2);
    }
    close(sv[0]);
    close(sv[1]);
    return 0;
}
