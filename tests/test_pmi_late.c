/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pmi_late.c - rank 0 under a launcher whose PMI server answers only
 * after COLLIE_TIMEOUT (tests/pmi1_server.py late): collie_init fails with
 * TIMEOUT at once, and when the server does answer later, the rendezvous
 * thread left behind closes the listener it opened: no descriptor is left.
 */
#include <dirent.h>
#include <unistd.h>

#include "test_util.h"

/* Open descriptors, but the launcher's PMI_FD (which the exchange closes when it ends). */
static int open_fds(void)
{
    int n = 0, pmi = atoi(getenv("PMI_FD") ? getenv("PMI_FD") : "-1");
    DIR *d = opendir("/proc/self/fd");
    CHECK(d, "cannot list /proc/self/fd");
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.' && atoi(e->d_name) != pmi && atoi(e->d_name) != dirfd(d);
    closedir(d);
    return n;
}

int main(void)
{
    int before = open_fds();
    collie_comm *comm = NULL;
    collie_status st = collie_init(&comm);
    CHECK(st == COLLIE_ERR_TIMEOUT && !comm, "%s: %s", collie_strerror(st),
          collie_last_error(NULL));
    test_sleep(test_time(4)); /* the server answers 3 s after the first call */
    int after = open_fds();
    CHECK(after == before, "%d descriptors open before collie_init, %d after", before, after);
    printf("pmi late: ok\n");
    return 0;
}
