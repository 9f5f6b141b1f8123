/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmi.c - the rendezvous through the launcher's key-value store (pmi.h).
 * The client libraries are opened with dlopen and declared here by the few
 * fields and calls collie uses, which both interfaces keep stable.  Their
 * calls block without a deadline of their own, so the exchange runs on a
 * thread of its own and the caller waits for it no longer than COLLIE_TIMEOUT.
 */
#define _GNU_SOURCE
#include "pmi.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEY COLLIE_PMI_KEY

/* ---- PMIx (pmix_common.h): the types by the fields collie reads and writes ---- */

enum { PMIX_OK = 0, PMIX_BOOL = 1, PMIX_STRING = 3, PMIX_UINT16 = 13, PMIX_UINT32 = 14 };
enum { PMIX_SCOPE_GLOBAL = 3 };
#define PMIX_WILDCARD (UINT32_MAX - 1)

struct pmix_proc {
    char nspace[256];
    uint32_t rank;
};
struct pmix_value {
    uint16_t type;
    union {
        _Bool flag;
        uint16_t u16;
        uint32_t u32;
        char *string;
        uint64_t space[4]; /* the union's largest members are three pointers */
    } data;
};
struct pmix_info {
    char key[512];
    uint32_t flags;
    struct pmix_value value;
};

struct pmix_api {
    int (*init)(struct pmix_proc *, struct pmix_info *, size_t);
    int (*finalize)(const struct pmix_info *, size_t);
    int (*put)(uint8_t, const char *, struct pmix_value *);
    int (*commit)(void);
    int (*fence)(const struct pmix_proc *, size_t, const struct pmix_info *, size_t);
    int (*get)(const struct pmix_proc *, const char *, const struct pmix_info *, size_t,
               struct pmix_value **);
    void (*value_destruct)(struct pmix_value *);
};

/* ---- PMI-2 (Slurm's pmi2.h, MPICH's wire protocol) ---- */

struct pmi2_api {
    int (*init)(int *, int *, int *, int *);
    int (*finalize)(void);
    int (*job_id)(char *, int);
    int (*put)(const char *, const char *);
    int (*fence)(void);
    int (*get)(const char *, int, const char *, char *, int, int *);
};

/* One exchange, shared by its thread and the caller; the last of them to leave frees it. */
struct exchange {
    pthread_mutex_t lock;
    pthread_cond_t finished;
    int done, abandoned, rc;
    const char *iface, *step; /* step: what the thread waits for, for the timeout's message */
    collie__pmi_publish_fn publish;
    struct collie__pmi_job job;
    char err[300];
};

int collie__pmi_under_srun(void) { return getenv("SLURM_STEP_ID") && !getenv("MPI_LOCALRANKID"); }

const char *collie__pmi_offered(void)
{
    if (getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK"))
        return "PMIx";
    if (getenv("PMI_FD"))
        return collie__pmi_under_srun() ? "PMI-2" : "PMI-1";
    return NULL;
}

static void *open_library(const char *const names[], char *err, size_t errlen, const char *iface,
                          const char *package)
{
    for (int i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h; /* never closed: the library may keep threads of its own */
    }
    snprintf(err, errlen,
             "the launcher offers %s, but its client library %s could not be loaded (%s): "
             "install it, or set COLLIE_ADDR=host:port of rank 0",
             iface, names[0], package);
    return NULL;
}

static void set_step(struct exchange *x, const char *step)
{
    pthread_mutex_lock(&x->lock);
    x->step = step;
    pthread_mutex_unlock(&x->lock);
}

static int failed(struct exchange *x, const char *call, int rc)
{
    snprintf(x->err, sizeof x->err, "the launcher's %s server refused %s (error %d)", x->iface,
             call, rc);
    return -1;
}

/* Rank 0's value, checked to fit the interface's limit. */
static int make_value(struct exchange *x, size_t limit)
{
    if (x->publish(x->job.value, sizeof x->job.value, &x->job.listen_fd, x->err, sizeof x->err) !=
        0)
        return -1;
    if (strlen(x->job.value) >= limit) {
        snprintf(x->err, sizeof x->err, "rank 0's rendezvous (%zu bytes) exceeds %s's %zu",
                 strlen(x->job.value), x->iface, limit);
        return -1;
    }
    return 0;
}

static int pmix_value_count(const struct pmix_value *v, int *out)
{
    if (v->type == PMIX_UINT32)
        *out = (int)v->data.u32;
    else if (v->type == PMIX_UINT16)
        *out = v->data.u16;
    else
        return -1;
    return 0;
}

/* key of proc as a count, or -1 where the server does not say. */
static int pmix_count(const struct pmix_api *px, const struct pmix_proc *proc, const char *key)
{
    struct pmix_value *v = NULL;
    int n = -1;
    if (px->get(proc, key, NULL, 0, &v) == PMIX_OK && v) {
        if (pmix_value_count(v, &n) != 0)
            n = -1;
        px->value_destruct(v);
        free(v);
    }
    return n;
}

static int exchange_pmix(struct exchange *x)
{
    static const char *const names[] = {"libpmix.so.2", "libpmix.so", NULL};
    void *h = open_library(names, x->err, sizeof x->err, "PMIx", "Debian: libpmix2");
    if (!h)
        return -1;
    struct pmix_api px = {
        .init = (int (*)(struct pmix_proc *, struct pmix_info *, size_t))dlsym(h, "PMIx_Init"),
        .finalize = (int (*)(const struct pmix_info *, size_t))dlsym(h, "PMIx_Finalize"),
        .put = (int (*)(uint8_t, const char *, struct pmix_value *))dlsym(h, "PMIx_Put"),
        .commit = (int (*)(void))dlsym(h, "PMIx_Commit"),
        .fence = (int (*)(const struct pmix_proc *, size_t, const struct pmix_info *, size_t))dlsym(
            h, "PMIx_Fence"),
        .get = (int (*)(const struct pmix_proc *, const char *, const struct pmix_info *, size_t,
                        struct pmix_value **))dlsym(h, "PMIx_Get"),
        .value_destruct = (void (*)(struct pmix_value *))dlsym(h, "PMIx_Value_destruct"),
    };
    if (!px.init || !px.finalize || !px.put || !px.commit || !px.fence || !px.get ||
        !px.value_destruct) {
        snprintf(x->err, sizeof x->err, "%s lacks the PMIx calls collie needs", names[0]);
        return -1;
    }
    struct pmix_proc me, job;
    memset(&me, 0, sizeof me);
    int rc = px.init(&me, NULL, 0);
    if (rc != PMIX_OK)
        return failed(x, "PMIx_Init", rc);
    job = me;
    job.rank = PMIX_WILDCARD;
    x->job.rank = (int)me.rank;
    x->job.size = pmix_count(&px, &job, "pmix.job.size");
    x->job.local_rank = pmix_count(&px, &me, "pmix.lrank");
    x->job.local_size = pmix_count(&px, &job, "pmix.local.size");
    if (x->job.size < 1) {
        rc = -1;
        snprintf(x->err, sizeof x->err, "the launcher's PMIx server does not say the job's size");
    }
    if (rc == PMIX_OK && me.rank == 0) {
        struct pmix_value v = {.type = PMIX_STRING};
        rc = make_value(x, 4096);
        v.data.string = x->job.value;
        if (rc == 0 && (rc = px.put(PMIX_SCOPE_GLOBAL, KEY, &v)) != PMIX_OK)
            failed(x, "PMIx_Put", rc);
        if (rc == 0 && (rc = px.commit()) != PMIX_OK)
            failed(x, "PMIx_Commit", rc);
    }
    if (rc == PMIX_OK) {
        struct pmix_info collect = {.key = "pmix.collect", .value = {.type = PMIX_BOOL}};
        collect.value.data.flag = 1;
        set_step(x, "its fence (did every rank start?)");
        if ((rc = px.fence(NULL, 0, &collect, 1)) != PMIX_OK)
            failed(x, "PMIx_Fence", rc);
    }
    if (rc == PMIX_OK && me.rank != 0) {
        struct pmix_proc root = me;
        struct pmix_value *v = NULL;
        root.rank = 0;
        set_step(x, "rank 0's key");
        rc = px.get(&root, KEY, NULL, 0, &v);
        if (rc != PMIX_OK || !v || v->type != PMIX_STRING || !v->data.string)
            snprintf(x->err, sizeof x->err,
                     "rank 0 of this job published no %s key through PMIx (error %d): is "
                     "rank 0 a collie program of this version?",
                     KEY, rc);
        else
            snprintf(x->job.value, sizeof x->job.value, "%s", v->data.string);
        if (v) {
            px.value_destruct(v);
            free(v);
        }
        rc = rc == PMIX_OK && x->job.value[0] ? 0 : -1;
    }
    set_step(x, "PMIx_Finalize");
    px.finalize(NULL, 0);
    return rc == PMIX_OK ? 0 : -1;
}

static int exchange_pmi2(struct exchange *x)
{
    static const char *const names[] = {"libpmi2.so.0", "libpmi2.so", NULL};
    void *h = open_library(names, x->err, sizeof x->err, "PMI-2", "Debian: libpmi2-0");
    if (!h)
        return -1;
    struct pmi2_api p = {
        .init = (int (*)(int *, int *, int *, int *))dlsym(h, "PMI2_Init"),
        .finalize = (int (*)(void))dlsym(h, "PMI2_Finalize"),
        .job_id = (int (*)(char *, int))dlsym(h, "PMI2_Job_GetId"),
        .put = (int (*)(const char *, const char *))dlsym(h, "PMI2_KVS_Put"),
        .fence = (int (*)(void))dlsym(h, "PMI2_KVS_Fence"),
        .get =
            (int (*)(const char *, int, const char *, char *, int, int *))dlsym(h, "PMI2_KVS_Get"),
    };
    if (!p.init || !p.finalize || !p.job_id || !p.put || !p.fence || !p.get) {
        snprintf(x->err, sizeof x->err, "%s lacks the PMI-2 calls collie needs", names[0]);
        return -1;
    }
    int spawned = 0, appnum = 0, rc;
    char jobid[256] = "";
    if ((rc = p.init(&spawned, &x->job.size, &x->job.rank, &appnum)) != 0)
        return failed(x, "PMI2_Init", rc);
    x->job.local_rank = x->job.local_size = -1;
    if ((rc = p.job_id(jobid, sizeof jobid)) != 0)
        failed(x, "PMI2_Job_GetId", rc);
    if (rc == 0 && x->job.rank == 0) {
        rc = make_value(x, 1024);
        if (rc == 0 && (rc = p.put(KEY, x->job.value)) != 0)
            failed(x, "PMI2_KVS_Put", rc);
    }
    if (rc == 0) {
        set_step(x, "its fence (did every rank start?)");
        if ((rc = p.fence()) != 0)
            failed(x, "PMI2_KVS_Fence", rc);
    }
    if (rc == 0 && x->job.rank != 0) {
        int len = 0;
        set_step(x, "rank 0's key");
        if (p.get(jobid, 0, KEY, x->job.value, sizeof x->job.value, &len) != 0 || len <= 0) {
            snprintf(x->err, sizeof x->err,
                     "rank 0 of this job published no %s key through PMI-2: is rank 0 a "
                     "collie program of this version?",
                     KEY);
            rc = -1;
        }
    }
    set_step(x, "PMI2_Finalize");
    p.finalize();
    return rc == 0 ? 0 : -1;
}

static void *exchange_main(void *arg)
{
    struct exchange *x = arg;
    int rc = !strcmp(x->iface, "PMIx") ? exchange_pmix(x)
             : !strcmp(x->iface, "PMI-2")
                 ? exchange_pmi2(x)
                 : collie__pmi1_exchange(&x->job, x->publish, x->err, sizeof x->err);
    pthread_mutex_lock(&x->lock);
    x->rc = rc;
    x->done = 1;
    int abandoned = x->abandoned;
    pthread_cond_signal(&x->finished);
    pthread_mutex_unlock(&x->lock);
    if (abandoned) { /* the caller gave up on it: nobody will accept on rank 0's listener */
        if (x->job.listen_fd >= 0)
            close(x->job.listen_fd);
        free(x);
    }
    return NULL;
}

int collie__pmi_exchange(struct collie__pmi_job *job, collie__pmi_publish_fn publish,
                         double timeout_s, char *err, size_t errlen)
{
    const char *iface = collie__pmi_offered();
    struct exchange *x = calloc(1, sizeof *x);
    if (!iface || !x) {
        free(x);
        snprintf(err, errlen, iface ? "no memory for the rendezvous" : "no launcher interface");
        return -1;
    }
    pthread_mutex_init(&x->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&x->finished, &ca);
    pthread_condattr_destroy(&ca);
    x->iface = iface;
    x->step = "its answer to the first call";
    x->publish = publish;
    x->job.listen_fd = -1;
    pthread_t t;
    pthread_attr_t ta;
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    int started = pthread_create(&t, &ta, exchange_main, x);
    pthread_attr_destroy(&ta);
    if (started != 0) {
        free(x);
        snprintf(err, errlen, "cannot start a thread for the %s rendezvous: %s", iface,
                 strerror(started));
        return -1;
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    double whole = timeout_s > 0 ? timeout_s : 1e6;
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((whole - (double)(time_t)whole) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&x->lock);
    while (!x->done && pthread_cond_timedwait(&x->finished, &x->lock, &until) != ETIMEDOUT)
        ;
    int rc = -1;
    if (!x->done) { /* the thread stays blocked in the library; it frees x if it ever returns */
        x->abandoned = 1;
        snprintf(err, errlen,
                 "the launcher's %s server did not answer within COLLIE_TIMEOUT=%g s, waiting "
                 "for %s",
                 iface, timeout_s, x->step);
        pthread_mutex_unlock(&x->lock);
        return -ETIMEDOUT;
    }
    rc = x->rc;
    if (rc == 0) {
        *job = x->job;
    } else {
        snprintf(err, errlen, "%s", x->err);
        if (x->job.listen_fd >= 0)
            close(x->job.listen_fd);
    }
    pthread_mutex_unlock(&x->lock);
    pthread_cond_destroy(&x->finished);
    pthread_mutex_destroy(&x->lock);
    free(x);
    return rc;
}
