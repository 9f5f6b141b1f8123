/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmi1.c - the PMI-1 wire protocol on the socket MPICH's mpiexec (Hydra)
 * hands each process in PMI_FD.  MPICH builds its client into libmpi and
 * ships none on its own, and Slurm's libpmi2 refuses Hydra's answers, so
 * collie speaks the few lines it needs itself: one text command a line,
 * "cmd=NAME key=value ...", one answer each.  Runs on pmi.c's thread, which
 * bounds it by COLLIE_TIMEOUT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "pmi.h"

struct wire {
    int fd;
    char line[2048];
    char *err;
    size_t errlen;
};

/* Sends one command and reads its answer's line; 0, or -1 with err. */
static int ask(struct wire *w, const char *command)
{
    size_t len = strlen(command), done = 0;
    while (done < len) {
        ssize_t n = write(w->fd, command + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(w->err, w->errlen, "MPICH's mpiexec hung up (PMI_FD): %s",
                     n < 0 ? strerror(errno) : "closed");
            return -1;
        }
        done += (size_t)n;
    }
    size_t got = 0;
    while (got == 0 || w->line[got - 1] != '\n') {
        ssize_t n = got + 1 < sizeof w->line ? read(w->fd, w->line + got, 1) : -2;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(w->err, w->errlen, "MPICH's mpiexec %s (PMI_FD) after '%.*s'",
                     n == -2 ? "sent a line too long" : "hung up", (int)strcspn(command, "\n"),
                     command);
            return -1;
        }
        got++;
    }
    w->line[got - 1] = 0;
    return 0;
}

/* The value of key in the last answer, into out; 0, or -1 where it is missing. */
static int field(const struct wire *w, const char *key, char *out, size_t len)
{
    size_t klen = strlen(key);
    for (const char *p = w->line; (p = strstr(p, key)) != NULL; p += klen) {
        if ((p != w->line && p[-1] != ' ') || p[klen] != '=')
            continue;
        const char *v = p + klen + 1;
        size_t n = strcspn(v, " ");
        if (n >= len)
            return -1;
        memcpy(out, v, n);
        out[n] = 0;
        return 0;
    }
    return -1;
}

/* Asks command, and checks that the answer is cmd=expect with rc=0 where it has an rc. */
static int ask_for(struct wire *w, const char *command, const char *expect)
{
    char cmd[64], rc[16];
    if (ask(w, command) != 0)
        return -1;
    if (field(w, "cmd", cmd, sizeof cmd) != 0 || strcmp(cmd, expect) != 0 ||
        (field(w, "rc", rc, sizeof rc) == 0 && strcmp(rc, "0") != 0)) {
        snprintf(w->err, w->errlen, "MPICH's mpiexec answered '%.120s' to '%.*s' (PMI-1)", w->line,
                 (int)strcspn(command, "\n"), command);
        return -1;
    }
    return 0;
}

static int env_count(const char *name)
{
    long v = collie__env_count(name);
    return v >= 0 && v < 1 << 24 ? (int)v : -1;
}

int collie__pmi1_exchange(struct collie__pmi_job *job, collie__pmi_publish_fn publish, char *err,
                          size_t errlen)
{
    struct wire w = {.fd = env_count("PMI_FD"), .err = err, .errlen = errlen};
    char kvs[256], command[1400];
    job->rank = env_count("PMI_RANK");
    job->size = env_count("PMI_SIZE");
    job->local_rank = env_count("MPI_LOCALRANKID");
    job->local_size = env_count("MPI_LOCALNRANKS");
    if (w.fd < 0 || job->rank < 0 || job->size < 1) {
        snprintf(err, errlen, "PMI_FD, PMI_RANK and PMI_SIZE do not describe a PMI-1 client");
        return -1;
    }
    if (ask_for(&w, "cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init") != 0 ||
        ask_for(&w, "cmd=get_my_kvsname\n", "my_kvsname") != 0)
        return -1;
    if (field(&w, "kvsname", kvs, sizeof kvs) != 0) {
        snprintf(err, errlen, "MPICH's mpiexec named no key-value space: '%.120s'", w.line);
        return -1;
    }
    if (job->rank == 0) {
        if (publish(job->value, sizeof job->value, &job->listen_fd, err, errlen) != 0)
            return -1;
        snprintf(command, sizeof command, "cmd=put kvsname=%s key=%s value=%s\n", kvs,
                 COLLIE_PMI_KEY, job->value);
        if (ask_for(&w, command, "put_result") != 0)
            return -1;
    }
    if (ask_for(&w, "cmd=barrier_in\n", "barrier_out") != 0)
        return -1;
    if (job->rank != 0) {
        snprintf(command, sizeof command, "cmd=get kvsname=%s key=%s\n", kvs, COLLIE_PMI_KEY);
        if (ask_for(&w, command, "get_result") != 0 ||
            field(&w, "value", job->value, sizeof job->value) != 0) {
            snprintf(err, errlen,
                     "rank 0 of this job published no %s key through PMI-1 ('%.80s'): is rank "
                     "0 a collie program of this version?",
                     COLLIE_PMI_KEY, w.line);
            return -1;
        }
    }
    int rc = ask_for(&w, "cmd=finalize\n", "finalize_ack");
    close(w.fd); /* as MPICH's own client does once finalized */
    return rc;
}
