/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * checkpoint.h - a training run's whole state in one blob: the position in
 * the data, the learning-rate schedule, the dropout stream, the model and
 * the optimizer.  The same blob goes to a checkpoint file (written
 * atomically: a temporary file, fsync, rename, fsync of the directory) and,
 * in elastic training, from the survivors' rank 0 to the others.
 */
#ifndef COLLIE_TRAIN_CHECKPOINT_H
#define COLLIE_TRAIN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "mlp.h"
#include "optim.h"
#include "schedule.h"

/* Where a run stands between two steps. */
struct train_state {
    int64_t iter;      /* steps taken over the whole run */
    int64_t pos;       /* samples of this epoch's order consumed (steps x global batch) */
    int32_t epoch;     /* the epoch in progress, 0-based */
    int32_t ranks;     /* how many ranks took the last step */
    double loss_sum;   /* this epoch's per-rank batch losses, summed (rank 0's: all ranks') */
    double loss_count; /* and how many */
    uint64_t rng;      /* the dropout stream (alike on every rank) */
    struct lr_schedule lr;
    int64_t optim_t;
};

/* Bytes of a blob for this model and optimizer. */
size_t ckpt_bytes(const struct mlp *m, const struct optim *o);

/* Packs st, the parameters and the optimizer's moments into buf (ckpt_bytes of them). */
void ckpt_pack(void *buf, const struct train_state *st, const struct mlp *m, const struct optim *o);

/* The reverse; the model and the optimizer must be the blob's (same ckpt_bytes). */
void ckpt_unpack(const void *buf, struct train_state *st, struct mlp *m, struct optim *o);

/*
 * Writes a blob to path atomically: a reader sees the old file or the new
 * one, whole, never a mix, even across a crash.  0, or -1 with err.
 */
int ckpt_write(const char *path, const void *blob, size_t len, char *err, size_t errlen);

/*
 * Reads path into blob, which must be exactly len bytes: 0, or -1 with err
 * naming what is wrong (missing, not a checkpoint, another model or
 * optimizer, damaged: its CRC-32 does not match).
 */
int ckpt_read(const char *path, void *blob, size_t len, char *err, size_t errlen);

#endif
