/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trainer.h - synchronous data-parallel SGD over collie: every rank computes
 * the gradient of its slice of each global batch; each layer's gradients are
 * averaged by a non-blocking allreduce issued as soon as the backward pass
 * has produced them (the last layer first, as DDP's buckets), waited before
 * the update (--no-overlap: one allreduce of the fused buffer after the
 * pass); every rank applies the same update.  Or, decentralized
 * (decentral.h), each rank updates its own model and averages it with its
 * neighbours; accuracy is then the mean model's.  Measures what
 * the reference benchmarks report (SPEC.md, *Measures*).
 */
#ifndef COLLIE_TRAIN_TRAINER_H
#define COLLIE_TRAIN_TRAINER_H

#include <stdio.h>

#include "collie.h"
#include "decentral.h"
#include "mlp.h"
#include "optim.h"

struct train_config {
    int hidden[MLP_MAX_LAYERS - 1], nhidden; /* no hidden layer: logistic regression */
    float dropout;
    const char *data;                 /* MNIST-format directory */
    const char *libsvm, *libsvm_test; /* LIBSVM files instead (test: else the last sixth) */
    int synthetic; /* > 0: a synthetic set of this many training samples instead */
    int batch;     /* per rank */
    int epochs;
    int max_steps; /* > 0: stop after this many steps (tests) */
    float lr;
    int scale_lr;         /* linear scaling rule: lr x ranks */
    int warmup_epochs;    /* linear warm-up of the learning rate */
    float plateau_factor; /* > 0: lr x factor when the training loss stops improving */
    int plateau_patience; /* epochs without improvement first */
    float min_lr;
    enum optim_kind optim;
    float momentum, weight_decay;
    int nesterov;
    collie_dtype grad_dtype; /* float32, or float16/bfloat16: compressed gradients */
    int ef_kind;             /* 0, or a collie_compress_kind: error-feedback codes instead */
    int no_overlap;          /* reduce all gradients after the backward pass, in one call */
    float target;            /* test accuracy to time, and stop at; 0: none */
    enum train_sync sync;    /* gradient allreduce, or neighbour averaging of the models */
    const char *topology;    /* neighbour averaging: collie_schedule_from_name's name */
    int awc;                 /* neighbour averaging while computing (else after the update) */
    int global_avg_every;    /* > 0: neighbour averaging also averages globally every H steps */
    unsigned long long seed;
    int quiet; /* no per-epoch lines */
    /* Surviving failures (allreduce sync only; see checkpoint.h) */
    int elastic;            /* a lost rank: the survivors shrink and go on */
    const char *checkpoint; /* written by rank 0 every checkpoint_every steps (0: each epoch) */
    int checkpoint_every;
    const char *resume;       /* a checkpoint to continue from */
    int kill_rank, kill_step; /* testing: that rank SIGKILLs itself before that step (> 0) */
};

struct train_epoch {
    int epoch;
    double wall_s, loss, test_accuracy, samples_per_s;
    double lr;        /* the rate the epoch ended with (after warm-up) */
    double consensus; /* neighbour averaging: sqrt(mean over ranks of |x_r - mean|^2); else 0 */
};

struct train_result {
    int ranks, epochs_run, steps;
    size_t nparams;
    struct train_epoch *epoch; /* epochs_run rows */
    double time_to_target_s;   /* < 0: never reached */
    int epoch_to_target;
    double throughput_mean, throughput_ci95;    /* samples/s over timed iterations */
    double compute_s_per_iter, comm_s_per_iter; /* comm: the waiting left after compute */
    double comm_alone_s_per_iter; /* overlap on: every 10th step reduces after the pass, timed */
    double bytes_per_epoch_formula, bytes_per_epoch_actual;
    double final_test_accuracy;
    float *weights;    /* the trained parameters, nparams of them (malloc'd; the caller frees) */
    int root;          /* this rank is rank 0 of the ranks that finished: it reports */
    int lost;          /* ranks lost and trained without (elastic) */
    double recovery_s; /* from the failed step's start to training again, summed */
};

/*
 * Trains on comm; the result of the rank with r->root set is complete (rank
 * 0, or after a shrink the survivors' rank 0).  0, or -1 with a message on
 * stderr.  Elastic runs finalize the communicators of survivors they made;
 * comm stays the caller's.
 */
int train_run(collie_comm *comm, const struct train_config *c, struct train_result *r);

/* The summary, as Horovod and BlueFog print it, and the JSON/CSV files. */
void train_print_summary(FILE *out, const struct train_config *c, const struct train_result *r);
int train_write_json(const char *path, const struct train_config *c, const struct train_result *r);

/* Bytes per gradient element on the wire as c configures it: 4, 2, or a code's. */
double train_wire_bytes(const struct train_config *c);

/* --compress's value for c: "none", "float16", "bfloat16", "int8-ef" or "sign-ef". */
const char *train_compress_name(const struct train_config *c);
int train_write_csv(const char *path, const struct train_result *r);

#endif
