/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hosts.h - `collie run -H host:slots,...` and `--hostfile`: the host list,
 * which host each rank runs on (hosts filled in order, as mpirun and
 * horovodrun do), and the command line that starts a rank on a remote host
 * through ssh (or COLLIE_RSH / --rsh).
 */
#ifndef COLLIE_TOOLS_HOSTS_H
#define COLLIE_TOOLS_HOSTS_H

#include <stddef.h>

struct host {
    char name[256];
    int slots;
    int local; /* this machine: started directly, not over ssh */
};

struct host_list {
    struct host *host;
    int n, total_slots;
};

/* Appends "a:2,b,c:4" (no count: 1 slot).  0, or -1 with a message on stderr. */
int hosts_parse_list(struct host_list *l, const char *spec);

/* Appends the hosts of a hostfile: "name [slots=N]" or "name:N" per line, # comments. */
int hosts_parse_file(struct host_list *l, const char *path);

/* The host of rank r when ranks fill hosts in order. */
int hosts_of_rank(const struct host_list *l, int r);

void hosts_free(struct host_list *l);

/*
 * Writes into buf a shell command for the remote host: change to dir, set
 * the environment (n NAME=VALUE strings), run argv; the rank is terminated
 * when the connection's standard input ends (the launcher stopped or died).
 * Returns 0, or -1 if buf is too small.
 */
int hosts_remote_command(char *buf, size_t len, const char *dir, char *const *env, int nenv,
                         char *const *argv);

#endif
