/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * identity.c - who this rank is and where rank 0 listens, from the variables
 * of whichever launcher started the process.  With rendezvous.c and the
 * PMI clients it asks (pmi.c, pmi1.c), the only place besides config.c that
 * reads the environment: these variables belong to the launchers.
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

struct launcher {
    const char *name, *rank, *size, *local_rank, *local_size;
};

/* In order of precedence; the first whose rank variable is set wins. */
static const struct launcher launchers[] = {
    {"collie run", "COLLIE_RANK", "COLLIE_SIZE", "COLLIE_LOCAL_RANK", "COLLIE_LOCAL_SIZE"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL},
};

/* srun --mpi=pmi2 sets MPICH's PMI_RANK too: its job is Slurm's. */
static int launcher_applies(const struct launcher *l)
{
    return strcmp(l->name, "MPICH") != 0 || !collie__pmi_under_srun();
}

long collie__env_count(const char *name)
{
    const char *s = name ? getenv(name) : NULL;
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno || *end || v < 0 ? -2 : v;
}

static collie_status parse_addr(const char *text, struct collie__identity *id, char *err,
                                size_t errlen, const char *what)
{
    const char *colon = strrchr(text, ':');
    const char *host = text, *host_end = colon;
    if (text[0] == '[') { /* [v6addr]:port */
        host = text + 1;
        host_end = strchr(text, ']');
        if (!host_end || host_end[1] != ':')
            host_end = NULL;
        colon = host_end ? host_end + 1 : NULL;
    }
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || !host_end || host_end == host ||
        (size_t)(host_end - host) >= sizeof id->addr_host || !end || *end || port <= 0 ||
        port > 65535) {
        snprintf(err, errlen, "%s='%s' is not host:port (e.g. 10.0.0.1:29500)", what, text);
        return COLLIE_ERR_INVALID_ARG;
    }
    memcpy(id->addr_host, host, (size_t)(host_end - host));
    id->addr_host[host_end - host] = 0;
    id->addr_port = (int)port;
    return COLLIE_OK;
}

static collie_status read_addr(struct collie__identity *id, char *err, size_t errlen)
{
    const char *addr = collie__config_string(COLLIE_CFG_ADDR);
    if (*addr) {
        id->rendezvous = "COLLIE_ADDR";
        return parse_addr(addr, id, err, errlen, "COLLIE_ADDR");
    }
    const char *master = getenv("MASTER_ADDR");
    if (master && *master) {
        const char *port = getenv("MASTER_PORT");
        char both[300];
        snprintf(both, sizeof both, strchr(master, ':') ? "[%s]:%s" : "%s:%s", master,
                 port && *port ? port : "29500");
        id->rendezvous = "MASTER_ADDR and MASTER_PORT";
        return parse_addr(both, id, err, errlen, "MASTER_ADDR:MASTER_PORT");
    }
    if (id->size == 1)
        return COLLIE_OK;
    if (collie__rendezvous_offered())
        return collie__rendezvous_from_launcher(id, err, errlen);
    snprintf(err, errlen,
             "no rendezvous address for this %d-rank job (from %s, which offers no PMI "
             "key-value store): set COLLIE_ADDR=host:port, or MASTER_ADDR and MASTER_PORT, to an "
             "address "
             "of rank 0's host (`collie run` sets it for you)",
             id->size, id->source);
    return COLLIE_ERR_INVALID_ARG;
}

void collie__identity_boot_id(char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(buf, (int)len, f))
            buf[0] = '\0';
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
}

static void read_host_id(struct collie__identity *id)
{
    const char *host = collie__config_string(COLLIE_CFG_HOST);
    if (*host) {
        snprintf(id->host_id, sizeof id->host_id, "%s", host);
        return;
    }
    /* The hostname alone can repeat across machines (containers); the boot id does not. */
    char name[64] = "localhost", boot[40];
    gethostname(name, sizeof name - 1);
    collie__identity_boot_id(boot, sizeof boot);
    snprintf(id->host_id, sizeof id->host_id, "%s/%.8s", name, boot);
}

void collie__identity_for_rank(struct collie__identity *id, int rank, int size, const char *host,
                               int port)
{
    memset(id, 0, sizeof *id);
    id->rank = rank;
    id->size = size;
    id->local_rank = id->local_size = -1;
    id->source = "collie_init_rank";
    id->rendezvous = "a collie_unique_id";
    id->listen_fd = -1;
    snprintf(id->addr_host, sizeof id->addr_host, "%s", host);
    id->addr_port = port;
    read_host_id(id);
}

int collie__identity_in_a_job(void)
{
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++)
        if (getenv(launchers[i].rank))
            return 1;
    return 0;
}

collie_status collie__identity_from_env(struct collie__identity *id, char *err, size_t errlen)
{
    memset(id, 0, sizeof *id);
    id->rank = 0;
    id->size = 1;
    id->local_rank = id->local_size = -1;
    id->listen_fd = -1;
    id->source = "no launcher (a one-rank job)";
    id->rendezvous = "none (a one-rank job)";
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        const struct launcher *l = &launchers[i];
        if (!launcher_applies(l))
            continue;
        long rank = collie__env_count(l->rank), size = collie__env_count(l->size);
        if (rank == -1 && size == -1)
            continue;
        if (rank < 0 || size < 1 || rank >= size || size > 1 << 20) {
            snprintf(err, errlen,
                     "%s=%s and %s=%s (from %s) do not describe a rank in a job: need "
                     "0 <= rank < size",
                     l->rank, getenv(l->rank) ? getenv(l->rank) : "(unset)", l->size,
                     getenv(l->size) ? getenv(l->size) : "(unset)", l->name);
            return COLLIE_ERR_INVALID_ARG;
        }
        id->rank = (int)rank;
        id->size = (int)size;
        id->local_rank = (int)collie__env_count(l->local_rank);
        id->local_size = (int)collie__env_count(l->local_size);
        id->source = l->name;
        break;
    }
    read_host_id(id);
    return read_addr(id, err, errlen);
}
