/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state.h - what the collective layer keeps per communicator (comm->coll):
 * the algorithms COLLIE_ALGO forces, the last choice per collective, adaptive's
 * timings and placement, and the links' rates measured at init.  Made by
 * collie__select_init, freed by collie__select_close; core carries the pointer
 * and never looks inside.
 */
#ifndef COLLIE_COLL_STATE_H
#define COLLIE_COLL_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/op.h"

struct collie__arms;

struct collie__algo;

/* Sizes adaptive.c tells apart: powers of two up to 128 TiB. */
#define COLLIE__SIZE_CLASSES 48

/* Algorithm numbers stay below this (registry.c checks): algo_logged keeps a bit for each. */
#define COLLIE__ALGO_WIRE_LIMIT 32

struct collie__coll_state {
    uint32_t algo_logged[COLLIE_COLL_COUNT]; /* bit per algorithm number whose choice was logged */
    uint8_t forced[COLLIE_COLL_COUNT];       /* by COLLIE_ALGO: an algorithm number, else NONE */
    /*
     * The last choice per collective (select.c), reused while the size
     * repeats, as a training loop's do: the cost model took a tenth of a
     * small broadcast's time.  NULL: none yet.  Written by the thread that
     * runs the collectives.
     */
    struct collie__choice {
        size_t bytes;
        const struct collie__algo *algo;
    } last_choice[COLLIE_COLL_COUNT];
    /* adaptive.c's timings of its branches, local rank 0's: NULL until its first call */
    struct collie__arms *arms;
    /*
     * adaptive.c's placement of the host's CPUs: whether its next call skips
     * the probe (every rank's copy, from local rank 0's last verdict; 0 until
     * then: the first call probes), and local rank 0's last finding and when
     * it probed.
     */
    struct collie__placement {
        uint64_t probed_ns;
        uint8_t far, skip_probe;
    } placement;
    /*
     * adaptive.c's granted calls, per collective and size class (a power of
     * two), every rank's copy of local rank 0's verdict: the branch that
     * the next `left` calls of exactly `bytes` run without asking, and the
     * placement they run in; this rank's own time of the last call that
     * asked (local rank 0 grants by it where it runs a branch it does not
     * learn).
     */
    struct collie__batch {
        size_t bytes;
        const struct collie__algo *branch;
        uint32_t untimed_ns;
        uint16_t left;
        uint8_t far;
    } batches[COLLIE_COLL_COUNT][COLLIE__SIZE_CLASSES];
    double link_alpha, link_beta; /* measured at init between hosts (link_probe.c); 0: not */
};

#endif
