/* SPDX-License-Identifier: BSD-3-Clause */
/* check.h - how the training loop reports a failed collie call. */
#ifndef COLLIE_TRAIN_CHECK_H
#define COLLIE_TRAIN_CHECK_H

#include <stdio.h>

#include "collie.h"

/* 0 for COLLIE_OK; else prints what failed, with collie's detail, and returns -1. */
static inline int train_check(collie_comm *comm, collie_status st, const char *what)
{
    if (st == COLLIE_OK)
        return 0;
    fprintf(stderr, "collie train, rank %d: %s failed: %s\n  %s\n", collie_rank(comm), what,
            collie_strerror(st), collie_last_error(comm));
    return -1;
}

#endif
