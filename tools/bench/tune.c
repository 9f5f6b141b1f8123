/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tune.c - `collie bench --tune FILE`: measures the cost model's rates on
 * this job's machine and writes its description (src/coll/cost.h), which
 * COLLIE_MACHINE gives the library and `collie sim --machine` the simulator.
 *
 * Each rate comes from the call the model says it dominates, solved from
 * the model's own formula for the algorithm that ran (so the description
 * reproduces those calls exactly):
 *   host_latency_us    a 64-byte allreduce of two ranks of host 0 (a sync and the
 *                      call around it, its data through a slot): host 0's first
 *                      and last ranks, which `collie run --bind auto` puts on
 *                      different CPUs;
 *   host_carry_us      a 4-byte allreduce of the two (its data in the sync's lines);
 *   host_peer_us       a 4-byte allreduce of all of host 0's ranks, when there
 *                      are more than two and its cores hold them;
 *   host_switch_us     the same call, when they outnumber its cores;
 *   host_bandwidth_gbs a 16 MiB allreduce of the two (host_cache_gbs stays: solving
 *                      both from two calls proved ill-conditioned on a noisy host),
 *                      or of all of host 0's ranks where its cores hold more than two;
 *   host_resident_gbs  a 1 MiB oneshot allreduce of the two (their buffers in cache);
 *   host_alone_gain    a 1 MiB oneshot reduce of the two (the root reduces alone), or
 *                      where all of host 0's ranks measured the rate, the two's
 *                      16 MiB allreduce (the two with the other cores idle);
 *   link_latency_us    a 4-byte allreduce of one rank of host 0 and one of host 1;
 *   link_bandwidth_gbs a 16 MiB allreduce of those two;
 *   host_attach_call_us, host_attach_gbs, host_attach_memory_gbs
 *                      the two ranks of host 0 again, forced to copy each
 *                      other's buffers (allreduce:direct) where the kernel
 *                      lets them: 4 bytes, 4 MiB (in cache) and 16 MiB.
 * The placement (ranks, hosts, ranks per host, cores) is the job's; where
 * every rank runs on the same kernel (the same boot id: hosts emulated in
 * namespaces, or containers of one server), the hosts share its cores
 * (shared_cores: the union of the ranks' CPUs, as the library finds it at
 * init; shared_tcp_gbs stays, 0 = the link's rate, which is what unshaped
 * links between them measure).  A rate
 * the job cannot measure (one host: no link), or that its call cannot tell
 * (no solution, or a term of under TUNE_SHARE_MIN of the time), keeps the
 * library's value.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/tools_api.h"
#include "bench.h"

#define TUNE_BYTES (16u << 20)
/*
 * The least share of a call's time the solved term must take: below it the
 * solution is mostly the other terms' error (measured: 16 MiB direct in the
 * slow state, its copies 8% of the time, gave 58 GB/s where 5-11 is right).
 */
#define TUNE_SHARE_MIN 0.25

/* An allreduce (or a reduce to rank 0) of `bytes`, timed `iters` times. */
struct probe {
    size_t bytes;
    int iters;
    const char *coll; /* "allreduce" or "reduce" */
};

/*
 * The slowest member's median seconds per call of p on comm (NULL: not a
 * member, 0).  A reduce reads the first half of buf and writes the second.
 */
static double measure(collie_comm *comm, const struct probe *p, float *buf, double *times)
{
    if (!comm)
        return 0;
    size_t count = p->bytes / sizeof(float);
    int reduce = !strcmp(p->coll, "reduce");
    for (int i = -2; i < p->iters; i++) { /* two warm-up calls */
        double t0 = bench_now_s();
        collie_status st =
            reduce ? collie_reduce(comm, buf, buf + count, count, COLLIE_FLOAT32, COLLIE_MAX, 0)
                   : collie_allreduce(comm, buf, buf, count, COLLIE_FLOAT32, COLLIE_MAX);
        if (st != COLLIE_OK) {
            fprintf(stderr, "collie bench --tune: %s: %s\n", p->coll, collie_last_error(comm));
            return -1;
        }
        if (i >= 0)
            times[i] = bench_now_s() - t0;
    }
    double t = bench_median(times, p->iters);
    return collie_allreduce(comm, &t, &t, 1, COLLIE_FLOAT64, COLLIE_MAX) ? -1 : t;
}

static int set_value(struct collie__machine *m, const char *key, double v)
{
    char text[64], err[512];
    snprintf(text, sizeof text, "%.6g", v);
    if (collie__tools_machine_set(m, key, text, err, sizeof err)) {
        fprintf(stderr, "collie bench --tune: %s\n", err);
        return -1;
    }
    return 0;
}

/*
 * The value of `key` for which the model predicts `seconds` for p on m (a
 * sub-communicator's placement): the prediction is a + b x, x the value (a
 * latency) or its inverse (a rate, a gain), so two predictions, at x and 2x,
 * give a and b: x is the value m has, or `lo`, the least the key takes,
 * where it has one (a gain: 1 and 2, which a pair's idle core allows; a rate
 * the model reads only above another: that one's value, and twice it).  The
 * rates m had stay when the measurement cannot be explained (a solution
 * below that least, or not positive); 0, -1 on an error.
 */
static int solve(struct collie__machine *m, const char *key, int rate, double lo,
                 const struct probe *p, const char *algo, double seconds)
{
    double keep = collie__tools_machine_get(m, key), x = lo > 0 ? lo : keep, t1, t2;
    const char *chosen;
    if (set_value(m, key, x) ||
        collie__tools_predict(m, p->coll, algo, p->bytes, 1, &t1, &chosen) ||
        set_value(m, key, 2 * x) ||
        collie__tools_predict(m, p->coll, algo, p->bytes, 1, &t2, &chosen))
        return -1;
    /* from x to 2x a rate's 1/x halves and a latency's x doubles */
    double b = rate ? 2 * x * (t1 - t2) : (t2 - t1) / x, a = rate ? t1 - b / x : t1 - b * x;
    double v = rate ? b / (seconds - a) : (seconds - a) / b;
    int ok = isfinite(v) && v > 0 && v >= lo, weak = ok && seconds - a < TUNE_SHARE_MIN * seconds;
    printf("# %-18s %12.6g  from %s of %zu bytes (%s): %.2f us%s\n", key, ok && !weak ? v : keep,
           p->coll, p->bytes, chosen, seconds * 1e6,
           !ok    ? ", which the model cannot explain: the library's value stays"
           : weak ? ", which the model's other terms nearly explain: too little to solve from, "
                    "the library's value stays"
                  : "");
    return set_value(m, key, ok && !weak ? v : keep);
}

/*
 * The model's rates are those of CPUs that share a cache (cost.h), and a
 * virtual machine's host moves its vCPUs between that placement and one
 * where a cache line takes 3-5x as long to cross, seconds to minutes apart.
 * Tuned in the far one, a description put the sync
 * at 2.4x and memory's rate at 0.7x what the near one measured, and with
 * them every row of a validation.  So before each step,
 * rank 0 probes the handoff (handoff.c) while the others sleep through it,
 * and while it reads over TUNE_NEAR_NS the job waits, TUNE_NEAR_POLL_S at a
 * time, until `budget_s` (--tune-wait, over the whole tune) is spent; then
 * it measures the machine as it finds it.  Sets *ns to the probe; 1 where
 * the step runs far, 0 near, -1 on an error.
 */
#define TUNE_NEAR_NS 100 /* near reads 30-60 ns on the 2-vCPU machine, far 150-250 */
#define TUNE_NEAR_POLL_S 0.25

static void sleep_s(double s)
{
    nanosleep(&(struct timespec){.tv_sec = (time_t)s, .tv_nsec = (long)(fmod(s, 1) * 1e9)}, NULL);
}

static int await_near(collie_comm *comm, double *budget_s, double *ns)
{
    for (;;) {
        /* rank 0's handoff, and whether all wait for another */
        double probe[2] = {bench_probe_handoff_ns(collie_rank(comm)), 0};
        probe[1] = probe[0] > TUNE_NEAR_NS && *budget_s > 0;
        if (collie_broadcast(comm, probe, 2, COLLIE_FLOAT64, 0) != COLLIE_OK) {
            fprintf(stderr, "collie bench --tune: broadcast: %s\n", collie_last_error(comm));
            return -1;
        }
        *ns = probe[0];
        if (!probe[1])
            return *ns > TUNE_NEAR_NS;
        sleep_s(TUNE_NEAR_POLL_S);
        *budget_s -= TUNE_NEAR_POLL_S;
    }
}

/* A sub-communicator of the ranks `in` picks; NULL elsewhere (and -1 on failure). */
static int split(collie_comm *comm, int in, collie_comm **out)
{
    if (collie_comm_split(comm, in ? 0 : -1, 0, out) != COLLIE_OK) {
        fprintf(stderr, "collie bench --tune: split: %s\n", collie_last_error(NULL));
        return -1;
    }
    return 0;
}

/* On every rank of a job: measure, and rank 0 writes `path`.  0, or -1 with a message. */
int bench_tune(const char *path, double wait_s)
{
    collie_comm *comm, *pair = NULL, *host = NULL, *cross = NULL;
    collie_status st = collie_init(&comm);
    if (st != COLLIE_OK) {
        fprintf(stderr, "collie bench --tune: collie_init: %s\n", collie_last_error(NULL));
        return -1;
    }
    int on_host0 = collie_host_index(comm) == 0, local = collie_local_rank(comm);
    int hosts = collie_host_count(comm), host0_size = 0, host_cores = 1, shared = 0;
    for (int r = 0; r < collie_size(comm); r++)
        host0_size += collie_host_of(comm, r) == 0;
    char err[512] = "";
    struct collie__machine *m = collie__tools_machine_new(err, sizeof err);
    if (m) { /* the job's placement; its cores are the fewest of any host's, alike on every rank */
        collie__tools_machine_place(m, comm);
        /* the links measured at init seed m, once: the steps below solve their own */
        collie__tools_machine_links(m, comm);
        host_cores = (int)collie__tools_machine_get(m, "cores");
        shared = (int)collie__tools_machine_get(m, "shared_cores");
    }
    int iters = 2000, rc = 0;
    double *times = malloc(sizeof(double) * (size_t)iters);
    float *buf = calloc(TUNE_BYTES / sizeof(float), sizeof(float));
    if (!m || !times || !buf ||
        split(comm, on_host0 && (local == 0 || local == host0_size - 1) && host0_size > 1, &pair) ||
        split(comm, on_host0 && host0_size > 2, &host) ||
        split(comm, local == 0 && collie_host_index(comm) < 2 && hosts > 1, &cross))
        rc = -1;
    if (rc == 0 && collie_rank(comm) == 0) {
        if (err[0])
            fprintf(stderr, "collie bench --tune: %s; starting from the defaults\n", err);
        printf("# collie bench --tune: %d ranks on %d host(s), %d on host 0, %d cores a host\n",
               collie_size(comm), hosts, host0_size, host_cores);
        if (shared)
            printf("# shared_cores %d: every host runs on one kernel (its boot id), on its "
                   "CPUs\n",
                   shared);
    }
    const char *ar = "allreduce";
    const struct probe sync = {4, iters, ar}, slot_sync = {64, iters, ar}, slow_sync = {4, 200, ar},
                       copy = {TUNE_BYTES, 10, ar}, wire = {TUNE_BYTES, 5, ar},
                       cached = {4u << 20, 50, ar}, resident = {1u << 20, 100, ar},
                       rooted = {1u << 20, 100, "reduce"};
    /* the pair again, where its ranks may read each other's memory (alike on both) */
    collie_comm *attach = pair && collie__tools_attach(pair) ? pair : NULL, *none = NULL;
    /*
     * Host 0's ranks fit on its cores, and there are more than two: its
     * rates are each core's share while all of them stream, so all of them
     * measure it, and the pair, with the other cores idle, what one gains
     * then (measured on 16 vCPUs: the pair's rate over 2.1 put 16 ranks'
     * 64 MiB rows at 0.4-0.6x their time).  Else the pair measures the rate
     * and a reduce's root, reducing alone, the gain.
     */
    int wide = host0_size > 2 && host0_size <= host_cores;
    struct {
        collie_comm **sub;
        const char *key;
        int rate;
        double lo; /* the least value the key takes, where it has one (solve()) */
        /*
         * A key the model reads only where it is the larger of it and this
         * one (host_resident_gbs over host_bandwidth_gbs, cost.c): its least
         * value is this one's, already solved, or the predictions at x and 2x
         * could fall on both sides of the switch and the solution be off by
         * the gap.
         */
        const char *above;
        const struct probe *p;
        const char *force; /* the algorithm to measure, where the model would choose another */
    } steps[] = {
        {&pair, "host_latency_us", 0, 0, NULL, &slot_sync, NULL},
        {&pair, "host_carry_us", 0, 0, NULL, &sync, NULL},
        /* the ranks beyond two: a line each while the cores hold them, else a switch each */
        {&host, host0_size > host_cores ? "host_switch_us" : "host_peer_us", 0, 0, NULL, &sync,
         NULL},
        {wide ? &host : &pair, "host_bandwidth_gbs", 1, 0, NULL, &copy, NULL},
        {wide ? &pair : &none, "host_alone_gain", 1, 1, NULL, &copy, NULL},
        {&pair, "host_resident_gbs", 1, 0, "host_bandwidth_gbs", &resident, "allreduce:oneshot"},
        {wide ? &none : &pair, "host_alone_gain", 1, 1, NULL, &rooted, "reduce:oneshot"},
        {&cross, "link_latency_us", 0, 0, NULL, &slow_sync, NULL},
        {&cross, "link_bandwidth_gbs", 1, 0, NULL, &wire, NULL},
        {&attach, "host_attach_call_us", 0, 0, NULL, &sync, "allreduce:direct"},
        {&attach, "host_attach_gbs", 1, 0, NULL, &cached, "allreduce:direct"},
        {&attach, "host_attach_memory_gbs", 1, 0, NULL, &copy, "allreduce:direct"},
    };
    /* Rank 0 is the first rank of host 0: a member of every sub-communicator that exists. */
    double budget = wait_s, ns;
    for (size_t k = 0; k < sizeof steps / sizeof steps[0] && rc == 0; k++) {
        collie_comm *sub = *steps[k].sub;
        int far = await_near(comm, &budget, &ns); /* every rank: rank 0 broadcasts */
        if (far < 0) {
            rc = -1;
            break;
        }
        if (far && sub && collie_rank(comm) == 0)
            printf("# (the next in the far placement: a handoff of %.0f ns, over %d, after "
                   "--tune-wait's %g s)\n",
                   ns, TUNE_NEAR_NS, wait_s);
        if (sub && steps[k].force && collie__tools_force(sub, steps[k].force) != COLLIE_OK) {
            fprintf(stderr, "collie bench --tune: %s\n", collie_last_error(sub));
            rc = -1;
            break;
        }
        double t = measure(sub, steps[k].p, buf, times);
        if (t < 0 || collie_barrier(comm) != COLLIE_OK)
            rc = -1;
        else if (sub && collie_rank(comm) == 0) {
            collie__tools_machine_place(m, sub);
            double lo = steps[k].above ? collie__tools_machine_get(m, steps[k].above) : steps[k].lo;
            rc = solve(m, steps[k].key, steps[k].rate, lo, steps[k].p,
                       collie__tools_algo(sub, steps[k].p->coll, steps[k].p->bytes), t);
        }
    }
    if (rc == 0 && collie_rank(comm) == 0)
        collie__tools_machine_place(m, comm);
    if (rc == 0 && collie_rank(comm) == 0) {
        FILE *f = fopen(path, "w");
        if (!f || (collie__tools_machine_write(m, f), fclose(f))) {
            perror(path);
            rc = -1;
        } else {
            printf("# written to %s:\n", path);
            collie__tools_machine_write(m, stdout);
        }
    }
    collie_comm *subs[] = {cross, host, pair};
    for (int k = 0; k < 3; k++)
        if (subs[k])
            collie_finalize(subs[k]);
    collie_finalize(comm);
    collie__tools_machine_free(m);
    free(times);
    free(buf);
    return rc;
}
