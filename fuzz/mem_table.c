/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem_table.c - the lookup in a peer's table of collie_mem segments
 * (src/transport/shm_mem.c): a peer writes the table, and every single copy
 * to or from that peer first asks it whether a range lies in one of the
 * peer's segments.  The input is the table's bytes, then the range (8
 * bytes of address, 8 of length).  The promises: the lookup reads nothing
 * past the table, whatever its count of entries says, and an entry it
 * returns holds the whole range, however the entry's numbers wrap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "transport/shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t bytes = collie__mem_table_bytes();
    if (size != bytes + 16)
        return 0;
    void *table = malloc(bytes); /* exactly the table: ASan sees a read past it */
    if (!table)
        return 0;
    memcpy(table, data, bytes);
    uint64_t remote, n, base = 0, length = 0;
    memcpy(&remote, data + bytes, 8);
    memcpy(&n, data + bytes + 8, 8);
    if (collie__mem_table_find(table, (uintptr_t)remote, (size_t)n, &base, &length)) {
        FUZZ_ASSERT(remote >= base);
        FUZZ_ASSERT(remote - base <= length && n <= length - (remote - base));
    }
    free(table);
    return 0;
}
