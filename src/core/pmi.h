/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmi.h - the rendezvous through the launcher's own key-value store, where
 * it offers one: PMIx (Open MPI's mpirun, srun --mpi=pmix) or PMI-2 (srun
 * --mpi=pmi2, MPICH's mpiexec).  Their client libraries are loaded at run
 * time, so libcollie needs neither to build nor to run without them.
 */
#ifndef COLLIE_PMI_H
#define COLLIE_PMI_H

#include <stddef.h>

#define COLLIE_PMI_VALUE_LEN 256
#define COLLIE_PMI_KEY "collie.rendezvous" /* rank 0's value: "collie1,HOST,PORT,TOKEN" */

/* What the launcher's interface told this process, and what rank 0 published. */
struct collie__pmi_job {
    int rank, size;             /* from the interface */
    int local_rank, local_size; /* -1 where it does not say */
    int listen_fd; /* rank 0: the listener publish opened (the caller's now), else -1 */
    char value[COLLIE_PMI_VALUE_LEN];
};

/*
 * Rank 0's value for every rank to read, into value (0), and the listener it
 * names into *listen_fd; or -1 with err filled.
 */
typedef int (*collie__pmi_publish_fn)(char *value, size_t len, int *listen_fd, char *err,
                                      size_t errlen);

/*
 * Whether PMI_FD and PMI_RANK are Slurm's (srun --mpi=pmi2): set in a Slurm
 * step, without the MPI_LOCALRANKID that MPICH's mpiexec sets beside them.
 */
int collie__pmi_under_srun(void);

/*
 * The interface this process's launcher offers, from the variables it sets
 * for its client: "PMIx", "PMI-2" (Slurm's), "PMI-1" (MPICH's mpiexec), or
 * NULL.  Starts nothing.
 */
const char *collie__pmi_offered(void);

/*
 * Joins the launcher's interface, and if this process is its rank 0 calls
 * publish and publishes its value; waits at the launcher's fence, reads rank
 * 0's value into job->value and leaves the interface.  Bounded by
 * timeout_s: a server that does not answer fails the call, it never hangs
 * (the thread that waits for it then closes what publish opened).
 * Returns 0; -ETIMEDOUT where the server did not answer in time, else -1;
 * err names the interface and what went wrong.
 */
int collie__pmi_exchange(struct collie__pmi_job *job, collie__pmi_publish_fn publish,
                         double timeout_s, char *err, size_t errlen);

/* PMI-1's exchange on PMI_FD (pmi1.c), blocking: pmi.c's thread runs it. */
int collie__pmi1_exchange(struct collie__pmi_job *job, collie__pmi_publish_fn publish, char *err,
                          size_t errlen);

#endif
