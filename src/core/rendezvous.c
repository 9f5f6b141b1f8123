/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rendezvous.c - rank 0's address where the user set none, from the
 * launcher itself: through its PMIx or PMI-2 key-value store (rank 0 opens
 * a listener and publishes it with a fresh secret), else, under srun
 * --mpi=none, at the step's first node on a port derived from the job's and
 * step's ids.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "config.h"
#include "pmi.h"
#include "rendezvous.h"
#include "sock.h"
#include "uid.h"

#define VALUE_TAG "collie1"

/* Rank 0's value: its fresh listener and secret (a unique id's, drawn in this process). */
static int publish(char *value, size_t len, int *listen_fd, char *err, size_t errlen)
{
    struct collie__uid u;
    if (collie__uid_draw(&u, NULL, err, errlen) != 0)
        return -1;
    *listen_fd = collie__uid_take_listener(&u);
    char token[2 * COLLIE_UID_TOKEN_BYTES + 1];
    collie__uid_token_text(&u, token, sizeof token);
    snprintf(value, len, "%s,%s,%u,%s", VALUE_TAG, u.host, (unsigned)u.port, token);
    return 0;
}

static collie_status from_store(struct collie__identity *id, const char *iface, char *err,
                                size_t errlen)
{
    struct collie__pmi_job job;
    char why[400];
    int rc = collie__pmi_exchange(&job, publish, collie__config_double(COLLIE_CFG_TIMEOUT), why,
                                  sizeof why);
    if (rc != 0) {
        snprintf(err, errlen, "rendezvous through %s (launcher: %s): %s", iface, id->source, why);
        return rc == -ETIMEDOUT ? COLLIE_ERR_TIMEOUT : COLLIE_ERR_SYSTEM;
    }
    if (job.rank != id->rank || job.size != id->size) {
        snprintf(err, errlen,
                 "the launcher's variables (%s) say rank %d of %d, its %s server rank %d of %d: "
                 "a variable left over from another job? Unset it, or set COLLIE_RANK, "
                 "COLLIE_SIZE and COLLIE_ADDR",
                 id->source, id->rank, id->size, iface, job.rank, job.size);
        if (job.listen_fd >= 0)
            close(job.listen_fd);
        return COLLIE_ERR_INVALID_ARG;
    }
    if (id->local_rank < 0 && id->local_size < 0) {
        id->local_rank = job.local_rank;
        id->local_size = job.local_size;
    }
    char host[sizeof id->addr_host], token[sizeof id->token];
    unsigned port = 0;
    char tail;
    if (sscanf(job.value, VALUE_TAG ",%255[^,],%u,%71[0-9a-f]%c", host, &port, token, &tail) != 3 ||
        port == 0 || port > 65535 || strlen(token) != 2 * COLLIE_UID_TOKEN_BYTES) {
        snprintf(err, errlen,
                 "rendezvous through %s (launcher: %s): rank 0 published '%.80s' under "
                 "" COLLIE_PMI_KEY ", not '" VALUE_TAG ",HOST,PORT,TOKEN' (another program's "
                 "key, or a collie of another version?)",
                 iface, id->source, job.value);
        if (job.listen_fd >= 0)
            close(job.listen_fd);
        return COLLIE_ERR_MISMATCH;
    }
    id->listen_fd = job.listen_fd;
    snprintf(id->addr_host, sizeof id->addr_host, "%s", host);
    id->addr_port = (int)port;
    snprintf(id->token, sizeof id->token, "%s", token);
    return COLLIE_OK;
}

/* The first host of a Slurm host list: "n[003-005,9],gpu1" -> "n003". */
static int first_host(const char *list, char *out, size_t len)
{
    size_t n = strcspn(list, "[,");
    if (n == 0 || n >= len)
        return -1;
    memcpy(out, list, n);
    out[n] = 0;
    if (list[n] != '[')
        return 0;
    const char *range = list + n + 1, *close = strchr(range, ']');
    size_t digits = strspn(range, "0123456789");
    size_t tail = close ? strcspn(close + 1, ",") : 0;
    if (!close || digits == 0 || n + digits + tail >= len)
        return -1;
    memcpy(out + n, range, digits);
    memcpy(out + n + digits, close + 1, tail);
    out[n + digits + tail] = 0;
    return 0;
}

int collie__rendezvous_slurm_port(long job, long step)
{
    return 10000 + (int)((16 * job + step) % 20000);
}

static collie_status from_slurm_step(struct collie__identity *id, char *err, size_t errlen)
{
    const char *list = getenv("SLURM_STEP_NODELIST");
    long job = collie__env_count("SLURM_JOB_ID"), step = collie__env_count("SLURM_STEP_ID");
    if (job < 0 || step < 0 || first_host(list, id->addr_host, sizeof id->addr_host) != 0) {
        snprintf(err, errlen,
                 "no rendezvous under Slurm without PMI: SLURM_STEP_NODELIST='%s', "
                 "SLURM_JOB_ID and SLURM_STEP_ID do not name this step's first node and ids; "
                 "run with srun --mpi=pmi2 (or pmix), or set COLLIE_ADDR=host:port",
                 list);
        return COLLIE_ERR_INVALID_ARG;
    }
    id->addr_port = collie__rendezvous_slurm_port(job, step);
    snprintf(id->token, sizeof id->token, "slurm-%ld.%ld", job, step);
    id->token_public = 1;
    if (id->rank != 0)
        return COLLIE_OK;
    const char *node = getenv("SLURMD_NODENAME");
    if (node && strcmp(node, id->addr_host) != 0) {
        snprintf(err, errlen,
                 "Slurm placed rank 0 on %s, not on the step's first node %s, where the "
                 "others look for it without PMI: run with srun --mpi=pmi2 (or pmix), or set "
                 "COLLIE_ADDR=host:port",
                 node, id->addr_host);
        return COLLIE_ERR_INVALID_ARG;
    }
    char why[256];
    if (collie__sock_listen(id->addr_host, id->addr_port, &id->listen_fd, why, sizeof why) != 0) {
        snprintf(err, errlen,
                 "Slurm step %ld.%ld without PMI: rank 0 listens on the port derived from the "
                 "job and step ids, and %s; run with srun --mpi=pmi2 (or pmix), or set "
                 "COLLIE_ADDR=host:port to a free port",
                 job, step, why);
        return COLLIE_ERR_SYSTEM;
    }
    return COLLIE_OK;
}

const char *collie__rendezvous_offered(void)
{
    const char *iface = collie__pmi_offered();
    if (iface)
        return iface;
    if (getenv("SLURM_STEP_NODELIST") && getenv("SLURM_STEP_ID"))
        return "Slurm's step";
    return NULL;
}

collie_status collie__rendezvous_from_launcher(struct collie__identity *id, char *err,
                                               size_t errlen)
{
    const char *offered = collie__rendezvous_offered();
    if (strcmp(offered, "Slurm's step") == 0) {
        id->rendezvous = "Slurm's step (SLURM_STEP_NODELIST's first node, a port from the job id)";
        return from_slurm_step(id, err, errlen);
    }
    id->rendezvous = !strcmp(offered, "PMIx")    ? "the launcher's PMIx key-value store"
                     : !strcmp(offered, "PMI-2") ? "the launcher's PMI-2 key-value store"
                                                 : "the launcher's PMI-1 key-value store";
    return from_store(id, offered, err, errlen);
}
