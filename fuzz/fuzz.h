/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz.h - what every harness in fuzz/ shares.  A harness is one
 * LLVMFuzzerTestOneInput over one parser of bytes collie reads from a peer
 * or a user; it aborts (FUZZ_ASSERT) where the parser broke a promise, and
 * the sanitizers catch the rest.  Built two ways (fuzz/CMakeLists.txt): with
 * libFuzzer under clang (COLLIE_FUZZ=ON), and with replay.c's main in every
 * other build, which runs the seed corpus and every input that once failed.
 */
#ifndef COLLIE_FUZZ_H
#define COLLIE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            dprintf(2, "%s:%d: broken promise: %s\n", __FILE__, __LINE__, #cond);                  \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/*
 * The input as a NUL-terminated string (bytes after an embedded NUL are
 * dropped, as C would see them), or as a file at a path: a memfd, so no
 * file is left behind.  Each returns NULL / -1 only when out of memory.
 */
char *fuzz_string(const uint8_t *data, size_t size);
int fuzz_file(const uint8_t *data, size_t size, char *path, size_t len);

/*
 * Splits the input at NUL bytes into at most max arguments after argv[0]
 * (strings inside buf, which the caller frees); returns argc.
 */
int fuzz_args(const uint8_t *data, size_t size, const char *prog, char **argv, int max, char **buf);

/* Silences the library's log (COLLIE_DEBUG=NONE) unless the caller set it: call first. */
void fuzz_quiet(void);

/*
 * Sends what the code under test prints on stderr to /dev/null; file
 * descriptor 2, where the sanitizers and FUZZ_ASSERT write, stays open.
 */
void fuzz_quiet_stderr(void);

#endif
