/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_rings.c - a rank's shared-memory rings are in its page tables from
 * init (shm.c's populate_rings): the resident set of the host's segment
 * (the "memfd:collie" mapping in /proc/self/smaps) covers every ring the
 * rank sends and receives on, before any message.  Until then a ring's
 * pages faulted in on its first pass, a page at a time at both ends:
 * measured at 2 ranks, a pairwise alltoall of 32 KiB blocks took 40 us an
 * exchange for its first eight calls, then 5.
 *
 * Run as `collie run -n N test_rings`.  Exits 77 (skipped) on a kernel
 * without MADV_POPULATE_WRITE (before 5.14), where the rings fault in as
 * before.
 */
#include <errno.h>
#include <sys/mman.h>

#include "test_util.h"
#include "transport/shm.h"
#include "transport/wire.h"

/* The largest resident set, in bytes, of this process's mappings of collie's segments. */
static size_t segment_rss(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f, "cannot read /proc/self/smaps");
    char line[512];
    int in_segment = 0;
    size_t best = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, kb;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in_segment = strstr(line, "memfd:collie") != NULL;
        else if (in_segment && sscanf(line, "Rss: %lu kB", &kb) == 1 && kb * 1024 > best)
            best = kb * 1024;
    }
    fclose(f);
    return best;
}

int main(void)
{
#ifdef MADV_POPULATE_WRITE
    void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int supported = probe != MAP_FAILED && madvise(probe, 4096, MADV_POPULATE_WRITE) == 0;
    if (probe != MAP_FAILED)
        munmap(probe, 4096);
#else
    int supported = 0;
#endif
    if (!supported) {
        printf("skipped: no MADV_POPULATE_WRITE\n");
        return 77;
    }
    collie_comm *comm = test_init();
    int n = collie_local_size(comm);
    size_t rings = 2 * (size_t)COLLIE_XFER_CHANNELS * (size_t)(n - 1) * collie__shm_ring_bytes(n);
    size_t rss = segment_rss();
    CHECK(rss >= rings, "rank %d: %zu bytes of the segment resident, its %d ranks' rings are %zu",
          collie_rank(comm), rss, n, rings);
    /* and they work: a message to and from every peer, every element checked */
    int me = collie_rank(comm);
    int32_t out[1024], in[1024];
    for (int peer = 0; peer < collie_size(comm); peer++) {
        for (int i = 0; i < 1024 && peer != me; i++)
            out[i] = (int32_t)(me * 100000 + peer * 1000 + i);
        if (peer != me) /* a ring holds it: the send returns before the peer receives */
            CHECK_OK(comm, collie_send(comm, out, 1024, COLLIE_INT32, peer));
    }
    for (int peer = 0; peer < collie_size(comm); peer++) {
        if (peer == me)
            continue;
        CHECK_OK(comm, collie_recv(comm, in, 1024, COLLIE_INT32, peer));
        for (int i = 0; i < 1024; i++)
            CHECK(in[i] == (int32_t)(peer * 100000 + me * 1000 + i), "from rank %d, element %d: %d",
                  peer, i, in[i]);
    }
    CHECK_OK(comm, collie_finalize(comm));
    printf("rank %d: %zu bytes of the segment resident, the rings %zu\n", me, rss, rings);
    return 0;
}
