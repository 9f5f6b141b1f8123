/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cost.h - the cost model: the machine each algorithm's price is computed
 * on (its descriptor's cost, algo.h, in the terms of cost_terms.h).  One
 * model, two users: select.c, which runs the cheapest algorithm on the job's
 * own machine, and `collie sim` (tools/sim.c, through tools_api.h), which
 * predicts any machine from a description.  What the simulator predicts is
 * what the library would choose.
 *
 * The model is Hockney's, per link class, as NCCL's tuner:
 *     time = steps * alpha + bytes through the busiest resource / beta.
 * Within a host the resource is the cores: every byte of the user's
 * buffers a rank reads or writes costs 1/host_beta (memory; while the
 * host's buffers and the window's slots fit in half its cache,
 * 1/host_resident_beta), every byte of the staging slots 1/host_cache_beta
 * (they stay in cache), and ranks beyond the cores share them.  Those
 * rates are each core's share while all the cores stream; a phase that
 * leaves cores idle (a reduce's root, reducing while the others wait) runs
 * up to host_alone_gain times faster; on a crowded host a twoshot reduce's
 * copy out, the root's alone, runs at a core's share beside the others.
 * A sync of the host's ranks costs host_alpha for two of them, a cache
 * line's trip (host_peer) for every further rank the cores hold, and a
 * context switch (host_switch) for every rank beyond the cores; a crowded
 * host's tree step that runs ahead, the same line's trip.  Between
 * hosts the resource is a host's link (links x link_beta each way); a flat
 * algorithm waits for its slowest edge, so all its steps are costed at
 * link_alpha.  Hosts that share one machine's cores (shared_cores) also
 * share them for every rank's TCP: the slower of the link and those cores
 * bounds the steps.
 */
#ifndef COLLIE_COST_H
#define COLLIE_COST_H

#include <stddef.h>
#include <stdio.h>

#include "../core/op.h"

/* A machine as the model sees it: placement, then rates (seconds, bytes per second). */
struct collie__machine {
    int ranks;              /* in the communicator */
    int hosts;              /* hosts they span */
    int ranks_per_host;     /* the most on one host (ranks are placed in blocks, as launchers do) */
    int cores;              /* CPUs the ranks of a host may use: the fewest of any host */
    size_t slot_bytes;      /* the shared-memory staging slot: the chunk of one round */
    size_t ring_bytes;      /* a pair's shared-memory ring: the messages of the trees */
    int attach;             /* 1: a host's ranks read each other's memory (cross-memory attach) */
    double host_alpha;      /* one sync of a host's ranks, when they fit on its cores */
    double host_carry;      /* the same, when a oneshot's data rides in the flags' lines */
    double host_switch;     /* added to a sync per rank beyond the cores */
    double host_peer;       /* added to a sync per rank beyond two that fit on the cores;
                               a step of a crowded host's tree that runs ahead */
    double host_beta;       /* bytes one core reads or writes per second, of memory */
    double host_cache_beta; /* the same, of the staging slots (in cache) */
    double host_resident_beta;   /* the same, of the user's buffers while the host's fit in half
                                  the cache */
    double host_alone_gain;      /* how many times that rate one core gets while the others idle */
    size_t host_cache_bytes;     /* a host's last-level cache */
    double host_attach_beta;     /* bytes per second one core copies to or from another rank, */
    double host_attach_mem_beta; /* ... within the cache, and of memory */
    double host_attach_call;     /* seconds of one such copy's system call, beside its bytes */
    double host_far_sync;        /* a sync slower than this per peer: the CPUs share no cache */
    double host_far_cache_beta;  /* host_cache_beta while they share none */
    double link_alpha;           /* one message between hosts */
    double link_beta;            /* bytes per second of one link, each way */
    int links;                   /* links per host used at once */
    int shared_cores;            /* cores every host's ranks share (0: each host has its own) */
    double shared_tcp_beta;      /* bytes one of them sends and receives per second over TCP */
    double shared_tcp_alpha;     /* one message's CPU time on one of them (0: link_alpha) */
    double int8_code_beta;       /* bytes of float32 per second one rank's INT8 error-feedback */
    double sign_code_beta;       /* ... and SIGN codes handle in a call (cost_ef.c) */
    /* Two ranks' exchange (cost.c): an allreduce in a core's own cache, staged copies: */
    size_t host_core_cache_bytes; /* one core's own cache (L2) */
    double host_pair_beta;        /* the rate of the user's buffers a core reads or writes */
    double host_pair_ramp;        /* what a phase adds to read the first host_pair_ramp_bytes */
    size_t host_pair_ramp_bytes;  /* of the lines the peer has just written */
    double host_pair_fresh_beta;  /* a broadcast's bytes the root has just written, read by the
                                     other of two ranks as the root runs ahead (0: as the rest) */
    /*
     * 1: cost the CPUs' other placement, sharing no cache (select.c): the
     * slots, and a reduction's reads of the slots its peers wrote, at
     * host_far_cache_beta.  Not a key of the description: the library's own.
     */
    int far;
};

/*
 * Error-feedback codes of `kind` (1: INT8, 2: SIGN) between m's hosts: the
 * seconds of an allreduce of s bytes of float32 between the hosts' first
 * ranks, run as codes (1: the codes' alltoall and allgather, and one rank's
 * work to encode, sum and decode them at int8_code_beta or sign_code_beta)
 * or exact (0: the float32 bytes of a ring).
 */
double collie__cost_ef(const struct collie__machine *m, int kind, int codes, double s);

/*
 * 1 where codes of `kind` cost less than the exact allreduce between m's
 * hosts, at a size where the bytes decide: a choice of the links' and
 * the kernels' rates alone, so that ranks whose counts differ still choose
 * alike (and then learn from the codes' headers that they differ).
 */
int collie__cost_ef_codes_pay(const struct collie__machine *m, int kind);

/* The defaults of the rates (this file's measured machine; COLLIE_NET_* for the links). */
void collie__machine_default_rates(struct collie__machine *m);

/*
 * Reads a machine description ("key = value" lines, '#' comments; keys as
 * collie__machine_write writes them) over m: only the keys present change.
 * Returns 0, or -1 with a message naming the file, line and key in err.
 */
int collie__machine_read(struct collie__machine *m, const char *path, char *err, size_t errlen);

/*
 * Sets one key ("ranks", "link_bandwidth_gbs", ... as in the file) from its
 * text; 0, or -1 with a message in err naming the key or the value.
 */
int collie__machine_set(struct collie__machine *m, const char *key, const char *value, char *err,
                        size_t errlen);

/* The value of one key in the file's unit (GB/s, us), or NaN for an unknown key. */
double collie__machine_get(const struct collie__machine *m, const char *key);

/* Writes m as a description collie__machine_read reads back. */
void collie__machine_write(const struct collie__machine *m, FILE *out);

/* Fills what the placement leaves open: hosts from ranks, cores at least 1. 0, or -1 with err. */
int collie__machine_check(struct collie__machine *m, char *err, size_t errlen);

#endif
