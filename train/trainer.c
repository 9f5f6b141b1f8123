/* SPDX-License-Identifier: BSD-3-Clause */
/* trainer.c - the data-parallel training loop and its measurements. */
#define _POSIX_C_SOURCE 200809L
#include "trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <signal.h>

#include "check.h"
#include "checkpoint.h"
#include "dataset.h"
#include "schedule.h"

#define WARMUP_ITERS 10 /* iterations left out of the throughput statistics */

/* Without a test file: the last sixth of the samples, in file order, become the test set. */
static int split_off_test(struct dataset *train, struct dataset *test, char *err, size_t errlen)
{
    int n_test = train->n / 6;
    if (n_test < 1) {
        snprintf(err, errlen, "%d samples are too few to hold out a test set", train->n);
        return -1;
    }
    *test = (struct dataset){.n = n_test, .dim = train->dim, .classes = train->classes};
    test->x = malloc(sizeof(float) * (size_t)n_test * (size_t)train->dim);
    test->y = malloc((size_t)n_test);
    if (!test->x || !test->y) {
        dataset_free(test);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    train->n -= n_test;
    memcpy(test->x, train->x + (size_t)train->n * (size_t)train->dim,
           sizeof(float) * (size_t)n_test * (size_t)train->dim);
    memcpy(test->y, train->y + train->n, (size_t)n_test);
    return 0;
}

static int load(const struct train_config *c, struct dataset *train, struct dataset *test, int rank)
{
    char err[512];
    if (c->synthetic > 0) {
        /* one problem (seed), two sample streams: the test set is not in the training set */
        if (dataset_synthetic(train, c->synthetic, 784, 10, c->seed, 0) ||
            dataset_synthetic(test, c->synthetic / 6 + 1, 784, 10, c->seed, 1)) {
            fprintf(stderr, "collie train: no memory for the synthetic data\n");
            return -1;
        }
        return 0;
    }
    if (c->libsvm) {
        if (dataset_load_libsvm(c->libsvm, 0, train, err, sizeof err) == 0 &&
            (c->libsvm_test ? dataset_load_libsvm(c->libsvm_test, train->dim, test, err, sizeof err)
                            : split_off_test(train, test, err, sizeof err)) == 0)
            return 0;
        if (rank == 0)
            fprintf(stderr, "collie train: %s\n", err);
        dataset_free(train);
        return -1;
    }
    if (dataset_load_idx(c->data, 0, train, err, sizeof err) ||
        dataset_load_idx(c->data, 1, test, err, sizeof err)) {
        if (rank == 0)
            fprintf(stderr, "collie train: %s\n", err);
        dataset_free(train);
        return -1;
    }
    return 0;
}

/*
 * The error-feedback state of gradient range `slot` (a layer's, or EF_FUSED for the whole
 * gradient): made on first use, and again on a new communicator (elastic regrouping).
 */
#define EF_FUSED MLP_MAX_LAYERS
struct ef_state {
    collie_comm *comm; /* the communicator the compressors were made on */
    collie_compressor *c[MLP_MAX_LAYERS + 1];
    size_t n[MLP_MAX_LAYERS + 1];
};

static void ef_free(struct ef_state *e)
{
    for (int i = 0; i <= MLP_MAX_LAYERS; i++)
        collie_compressor_free(e->c[i]);
    memset(e, 0, sizeof *e);
}

static collie_status ef_get(struct ef_state *e, collie_comm *comm, int kind, int slot, size_t n,
                            collie_compressor **out)
{
    if (e->comm != comm)
        ef_free(e);
    e->comm = comm;
    if (!e->c[slot] || e->n[slot] != n) {
        collie_compressor_free(e->c[slot]);
        e->c[slot] = NULL;
        collie_status st =
            collie_compressor_create(comm, n, (collie_compress_kind)kind, &e->c[slot]);
        if (st != COLLIE_OK)
            return st;
        e->n[slot] = n;
    }
    *out = e->c[slot];
    return COLLIE_OK;
}

/* Averages the fused gradient over the ranks, in float32, compressed to 16 bits, or coded. */
static int average(collie_comm *comm, const struct train_config *c, float *grads, size_t n,
                   void *wire, struct ef_state *ef)
{
    if (c->ef_kind) {
        collie_compressor *z;
        collie_status st = ef_get(ef, comm, c->ef_kind, EF_FUSED, n, &z);
        if (st == COLLIE_OK)
            st = collie_allreduce_ef(comm, z, grads, n, COLLIE_AVG);
        return train_check(comm, st, "gradient allreduce");
    }
    if (c->grad_dtype == COLLIE_FLOAT32)
        return train_check(comm,
                           collie_allreduce(comm, grads, grads, n, COLLIE_FLOAT32, COLLIE_AVG),
                           "gradient allreduce");
    /* The library's own conversions: the same rounding as its reductions. */
    if (train_check(comm, collie_convert(wire, c->grad_dtype, grads, COLLIE_FLOAT32, n),
                    "compression") ||
        train_check(comm, collie_allreduce(comm, wire, wire, n, c->grad_dtype, COLLIE_AVG),
                    "gradient allreduce"))
        return -1;
    return train_check(comm, collie_convert(grads, COLLIE_FLOAT32, wire, c->grad_dtype, n),
                       "decompression");
}

static double evaluate(collie_comm *comm, struct mlp *m, const struct dataset *test)
{
    int rank = collie_rank(comm), size = collie_size(comm);
    int lo = (int)((long long)test->n * rank / size),
        hi = (int)((long long)test->n * (rank + 1) / size);
    long long correct = 0;
    for (int i = lo; i < hi; i += m->max_batch) {
        int b = hi - i < m->max_batch ? hi - i : m->max_batch;
        correct += mlp_correct(m, test->x + (size_t)i * (size_t)test->dim, test->y + i, b);
    }
    if (train_check(comm, collie_allreduce(comm, &correct, &correct, 1, COLLIE_INT64, COLLIE_SUM),
                    "accuracy allreduce"))
        return -1;
    return (double)correct / test->n;
}

/* One run's state: the data, the model, its buffers and what is measured. */
struct run {
    collie_comm *comm;
    const struct train_config *c;
    struct train_result *r;
    int rank, ranks, steps_per_epoch, iter; /* iter: steps this process took (timing) */
    int first_rank;                         /* in the job this run started on */
    struct dataset train, test;
    struct mlp m;
    struct optim o;
    struct train_state st; /* where the run stands, beside the model (checkpoint.h) */
    int perm_epoch;        /* the epoch whose order perm holds; -1: none yet */
    void *blob;            /* a packed state: checkpoints, resume, recovery */
    size_t blob_bytes;
    void *snap; /* elastic: the state before the last step's update (every survivor has it) */
    int64_t snap_iter;  /* its step; -1: none */
    collie_comm *owned; /* elastic: the survivors' communicator this run made, else NULL */
    double t_step;      /* when the step in flight began */
    float *xb;
    uint8_t *yb;
    int *perm;
    double *iter_s;     /* seconds of each step */
    void *wire;         /* the 16-bit gradients, when compressed */
    struct ef_state ef; /* the error-feedback codes' residuals (--compress int8-ef, sign-ef) */
    double t_start, compute, comm_s, grad_bytes;
    collie_request *req[MLP_MAX_LAYERS]; /* the layers' allreduces in flight */
    struct decentral dc;                 /* neighbour averaging (c->sync) */
    int nreq, issue_failed;
    double comm_alone;  /* seconds of the sampled steps' allreduces, reduced after the pass */
    int n_alone, timed; /* sampled steps; timed steps in all */
};

#define SAMPLE_EVERY 10 /* with overlap, 1 step in 10 reduces after the pass: comm alone */

/* mlp's grads_ready: starts averaging one layer's gradients while the pass goes on. */
static void issue_layer(void *arg, size_t off, size_t n)
{
    struct run *u = arg;
    float *g = u->m.grads + off;
    collie_status st;
    if (u->c->ef_kind) {
        collie_compressor *z;
        st = ef_get(&u->ef, u->comm, u->c->ef_kind, u->nreq, n, &z);
        if (st == COLLIE_OK)
            st = collie_iallreduce_ef(u->comm, z, g, n, COLLIE_AVG, &u->req[u->nreq]);
    } else if (u->c->grad_dtype == COLLIE_FLOAT32) {
        st = collie_iallreduce(u->comm, g, g, n, COLLIE_FLOAT32, COLLIE_AVG, &u->req[u->nreq]);
    } else {
        st = collie_iallreduce_compressed(u->comm, g, g, n, u->c->grad_dtype, COLLIE_AVG,
                                          &u->req[u->nreq]);
    }
    if (st != COLLIE_OK && !u->issue_failed) {
        u->issue_failed = 1;
        train_check(u->comm, st, "gradient allreduce");
    }
    u->nreq += st == COLLIE_OK;
}

/* Loads the data on every rank; all fail together if any could not. 0, or -1. */
static int load_everywhere(struct run *u)
{
    int loaded = load(u->c, &u->train, &u->test, u->rank) == 0, all = loaded;
    if (train_check(u->comm, collie_allreduce(u->comm, &all, &all, 1, COLLIE_INT32, COLLIE_MIN),
                    "start") == 0 &&
        all)
        return 0;
    if (loaded) {
        dataset_free(&u->train);
        dataset_free(&u->test);
    }
    if (all == 0 && loaded && u->rank == 0)
        fprintf(stderr, "collie train: another rank could not load the data (see its output)\n");
    return -1;
}

/* st, the model and the optimizer packed into `into` (the step count from the optimizer). */
static void pack(struct run *u, void *into, struct train_state st)
{
    st.optim_t = u->o.t;
    ckpt_pack(into, &st, &u->m, &u->o);
}

/* Rank 0's u->blob to every rank, unpacked everywhere.  0, or -1. */
static int adopt_rank0(struct run *u, const char *what)
{
    if (train_check(u->comm, collie_broadcast(u->comm, u->blob, u->blob_bytes, COLLIE_UINT8, 0),
                    what))
        return -1;
    ckpt_unpack(u->blob, &u->st, &u->m, &u->o);
    if (u->rank != 0) /* the epoch's loss so far is counted once, at rank 0 */
        u->st.loss_sum = u->st.loss_count = 0;
    return 0;
}

/* --resume: rank 0 reads the checkpoint, every rank continues from it. */
static int resume(struct run *u)
{
    char err[512] = "";
    int ok = u->rank != 0 || ckpt_read(u->c->resume, u->blob, u->blob_bytes, err, sizeof err) == 0;
    if (!ok) /* said before the others hear it: one that exits first gets the job stopped */
        fprintf(stderr, "collie train: --resume %s\n", err);
    if (train_check(u->comm, collie_broadcast(u->comm, &ok, 1, COLLIE_INT32, 0), "resume"))
        return -1;
    if (!ok)
        return -1;
    if (adopt_rank0(u, "resume"))
        return -1;
    if (u->st.ranks != u->ranks) { /* the rate follows the global batch, as at the start */
        if (u->c->scale_lr)
            u->st.lr.lr *= (float)u->ranks / (float)u->st.ranks;
        if (u->rank == 0)
            printf("collie train: the checkpoint was taken on %d rank(s); on %d the global "
                   "batch differs, so the run is no longer the same bit for bit\n",
                   u->st.ranks, u->ranks);
        u->st.ranks = u->ranks;
    }
    if (u->rank == 0)
        printf("collie train: resumed from %s at step %lld (epoch %d, sample %lld)\n", u->c->resume,
               (long long)u->st.iter, u->st.epoch + 1, (long long)u->st.pos);
    return 0;
}

/* Rank 0 writes the state to --checkpoint (the epoch's loss so far summed over the ranks). */
static int checkpoint(struct run *u)
{
    struct train_state st = u->st;
    double sums[2] = {st.loss_sum, st.loss_count};
    if (train_check(u->comm, collie_allreduce(u->comm, sums, sums, 2, COLLIE_FLOAT64, COLLIE_SUM),
                    "checkpoint"))
        return -1;
    if (u->rank != 0)
        return 0;
    st.loss_sum = sums[0], st.loss_count = sums[1];
    st.rng = u->m.rng;
    pack(u, u->blob, st);
    char err[512];
    if (ckpt_write(u->c->checkpoint, u->blob, u->blob_bytes, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "collie train: --checkpoint: %s\n", err); /* training goes on */
    return 0;
}

/* The buffers and the schedule, and the same weights everywhere (the model exists). */
static int setup(struct run *u)
{
    const struct train_config *c = u->c;
    u->steps_per_epoch = u->train.n / (c->batch * u->ranks);
    if (u->steps_per_epoch < 1) {
        if (u->rank == 0)
            fprintf(stderr, "collie train: %d samples do not fill one global batch of %d x %d\n",
                    u->train.n, c->batch, u->ranks);
        return -1;
    }
    /* Steps this process may take: after a shrink, fewer ranks take more steps per epoch. */
    int max_iters = c->max_steps > 0 ? c->max_steps : (u->train.n / c->batch) * c->epochs;
    u->xb = malloc(sizeof(float) * (size_t)c->batch * (size_t)u->train.dim);
    u->yb = malloc((size_t)c->batch);
    u->perm = malloc(sizeof(int) * (size_t)u->train.n);
    u->iter_s = malloc(sizeof(double) * (size_t)(max_iters + 1));
    u->r->epoch = calloc((size_t)c->epochs + 1, sizeof *u->r->epoch);
    u->blob_bytes = ckpt_bytes(&u->m, &u->o);
    u->blob = malloc(u->blob_bytes);
    u->snap = c->elastic ? malloc(u->blob_bytes) : NULL;
    u->snap_iter = -1;
    u->perm_epoch = -1;
    if (!u->xb || !u->yb || !u->perm || !u->iter_s || !u->r->epoch || !u->blob ||
        (c->elastic && !u->snap) || !(u->wire = malloc(u->m.nparams * 2))) {
        fprintf(stderr, "collie train: out of memory\n");
        return -1;
    }
    u->r->nparams = u->m.nparams;
    if (c->sync != TRAIN_SYNC_ALLREDUCE &&
        decentral_init(&u->dc, u->comm, c->sync, c->topology, c->awc, c->global_avg_every,
                       u->m.nparams))
        return -1;
    lr_schedule_init(&u->st.lr, c->lr, u->ranks, c->scale_lr,
                     (long)c->warmup_epochs * u->steps_per_epoch, c->plateau_factor,
                     c->plateau_patience, c->min_lr);
    u->st.ranks = u->ranks;
    if (c->resume)
        return resume(u);
    /* Same seed, same weights; the broadcast makes it so whatever the seed does. */
    return train_check(u->comm,
                       collie_broadcast(u->comm, u->m.params, u->m.nparams, COLLIE_FLOAT32, 0),
                       "broadcast");
}

/* Copies this rank's share of the next global batch (from st.pos) into xb, yb. */
static void gather_batch(struct run *u)
{
    const struct train_config *c = u->c;
    const int *idx = u->perm + (size_t)u->st.pos + (size_t)u->rank * (size_t)c->batch;
    for (int i = 0; i < c->batch; i++) {
        memcpy(u->xb + (size_t)i * (size_t)u->train.dim,
               u->train.x + (size_t)idx[i] * (size_t)u->train.dim,
               sizeof(float) * (size_t)u->train.dim);
        u->yb[i] = u->train.y[idx[i]];
    }
}

/* Counts one step's seconds: computing, and communicating (what was left to wait for). */
static void account(struct run *u, double compute, double comm, double total)
{
    if (u->iter >= WARMUP_ITERS) {
        u->compute += compute;
        u->comm_s += comm;
        u->timed++;
    }
    u->iter_s[u->iter++] = total;
}

/* Elastic: keeps the state before this step's update, which every survivor reached. */
static void snapshot(struct run *u, uint64_t rng_before)
{
    if (!u->snap)
        return;
    struct train_state st = u->st;
    st.rng = rng_before;
    pack(u, u->snap, st);
    u->snap_iter = u->st.iter;
}

/* A step done: the position moves by one global batch. */
static void advance(struct run *u, double loss)
{
    u->st.iter++;
    u->st.pos += (int64_t)u->c->batch * u->ranks;
    u->st.loss_sum += loss;
    u->st.loss_count += 1;
    u->st.ranks = u->ranks;
}

/*
 * One step, decentralized: this rank's gradient updates its own
 * model, which is averaged with the neighbours' (during the passes for AWC,
 * after the update for ATC).
 */
static int decentral_step(struct run *u)
{
    const struct train_config *c = u->c;
    gather_batch(u);
    u->m.grads_ready = NULL;
    unsigned long long before, after;
    collie_get_counters(u->comm, NULL, &before);
    double t0 = collie_wtime();
    if (decentral_before(&u->dc, u->m.params, u->m.nparams))
        return -1;
    double t1 = collie_wtime();
    double loss = mlp_forward_backward(&u->m, u->xb, u->yb, c->batch, 1);
    double t2 = collie_wtime();
    if (decentral_combine(&u->dc, u->m.params, u->m.nparams))
        return -1;
    double t3 = collie_wtime();
    optim_step(&u->o, u->m.params, u->m.grads, lr_schedule_at(&u->st.lr, (long)u->st.iter));
    double t4 = collie_wtime();
    if (decentral_after(&u->dc, u->m.params, u->m.nparams))
        return -1;
    double t5 = collie_wtime();
    collie_get_counters(u->comm, NULL, &after);
    u->grad_bytes += (double)(after - before) + decentral_take_sent(&u->dc);
    account(u, (t2 - t1) + (t4 - t3), (t1 - t0) + (t3 - t2) + (t5 - t4), t5 - t0);
    advance(u, loss);
    return 0;
}

/* One step: this rank's share of the global batch, gradients averaged. */
static int step(struct run *u)
{
    const struct train_config *c = u->c;
    u->t_step = collie_wtime();
    if (c->kill_step > 0 && u->st.iter == c->kill_step && u->first_rank == c->kill_rank) {
        printf("collie train: rank %d kills itself at step %lld (--inject-kill)\n", u->first_rank,
               (long long)u->st.iter);
        fflush(stdout);
        raise(SIGKILL);
    }
    if (c->sync != TRAIN_SYNC_ALLREDUCE)
        return decentral_step(u);
    gather_batch(u);
    uint64_t rng_before = u->m.rng;
    /*
     * With overlap, the layers' allreduces start inside the pass, except on
     * sampled steps.  Counted in steps of the run, so that a resumed run
     * reduces in the same shapes, hence the same bits.
     */
    int sampled = !c->no_overlap && u->st.iter >= WARMUP_ITERS && u->st.iter % SAMPLE_EVERY == 0;
    int overlap = !c->no_overlap && !sampled;
    u->m.grads_ready = overlap ? issue_layer : NULL;
    u->m.grads_arg = u;
    u->nreq = 0;
    u->issue_failed = 0;
    unsigned long long before, after;
    collie_get_counters(u->comm, NULL, &before);
    double t0 = collie_wtime();
    double loss = mlp_forward_backward(&u->m, u->xb, u->yb, c->batch, 1);
    double t1 = collie_wtime();
    if (overlap
            ? train_check(u->comm, collie_waitall((size_t)u->nreq, u->req), "gradient allreduce") ||
                  u->issue_failed
            : average(u->comm, c, u->m.grads, u->m.nparams, u->wire, &u->ef))
        return -1;
    collie_get_counters(u->comm, NULL, &after);
    u->grad_bytes += (double)(after - before);
    double t2 = collie_wtime();
    snapshot(u, rng_before);
    optim_step(&u->o, u->m.params, u->m.grads, lr_schedule_at(&u->st.lr, (long)u->st.iter));
    double t3 = collie_wtime();
    if (sampled) { /* the sample measures; the step still counts in the throughput */
        u->comm_alone += t2 - t1;
        u->n_alone++;
        u->iter_s[u->iter++] = t3 - t0;
    } else {
        account(u, (t1 - t0) + (t3 - t2), t2 - t1, t3 - t0);
    }
    advance(u, loss);
    return 0;
}

static int more_steps(const struct run *u)
{
    return u->c->max_steps <= 0 || u->st.iter < u->c->max_steps;
}

/* Whether the epoch's order still holds a whole global batch from st.pos. */
static int batch_left(const struct run *u)
{
    return u->st.pos + (int64_t)u->c->batch * u->ranks <= u->train.n;
}

/*
 * The rest of the epoch in progress (st.epoch, from st.pos), then loss,
 * accuracy and the report; *stop when the target is reached.
 */
static int epoch(struct run *u, int *stop)
{
    const struct train_config *c = u->c;
    struct train_result *r = u->r;
    int e = u->st.epoch;
    double t_epoch = collie_wtime();
    int64_t pos0 = u->st.pos;
    if (u->perm_epoch != e) {
        dataset_shuffle(u->perm, u->train.n, c->seed, e);
        u->perm_epoch = e;
    }
    while (batch_left(u) && more_steps(u)) {
        if (step(u))
            return -1;
        if (c->checkpoint && c->checkpoint_every > 0 && u->st.iter % c->checkpoint_every == 0 &&
            checkpoint(u))
            return -1;
    }
    int whole = !batch_left(u); /* not cut short by --max-steps */
    double sums[2] = {u->st.loss_sum, u->st.loss_count};
    if (train_check(u->comm, collie_allreduce(u->comm, sums, sums, 2, COLLIE_FLOAT64, COLLIE_SUM),
                    "loss"))
        return -1;
    /* Decentralized: the mean model is the one evaluated, and its spread reported. */
    double consensus = 0;
    if (c->sync != TRAIN_SYNC_ALLREDUCE &&
        (consensus = decentral_to_mean(&u->dc, u->m.params, u->m.nparams)) < 0)
        return -1;
    double acc = evaluate(u->comm, &u->m, &u->test);
    if (c->sync != TRAIN_SYNC_ALLREDUCE)
        decentral_restore(&u->dc, u->m.params, u->m.nparams);
    if (acc < 0)
        return -1;
    struct train_epoch *ep = &r->epoch[r->epochs_run++];
    ep->epoch = e + 1;
    ep->wall_s = collie_wtime() - u->t_start;
    ep->loss = sums[1] > 0 ? sums[0] / sums[1] : 0;
    ep->test_accuracy = acc;
    ep->samples_per_s = (double)(u->st.pos - pos0) / (collie_wtime() - t_epoch);
    ep->lr = lr_schedule_at(&u->st.lr, (long)u->st.iter - 1);
    ep->consensus = consensus;
    int decayed = lr_schedule_epoch_end(&u->st.lr, ep->loss); /* the same loss on every rank */
    r->final_test_accuracy = acc;
    int reached = c->target > 0 && acc >= c->target && r->time_to_target_s < 0;
    if (reached) {
        r->time_to_target_s = ep->wall_s;
        r->epoch_to_target = e + 1;
    }
    if (u->rank == 0 && !c->quiet) {
        char spread[48] = "";
        if (c->sync != TRAIN_SYNC_ALLREDUCE)
            snprintf(spread, sizeof spread, "  consensus %.3g", consensus);
        printf(
            "epoch %3d  loss %.4f  test accuracy %.4f  %7.1f s  %9.0f samples/s  lr %.3g%s%s%s\n",
            e + 1, ep->loss, acc, ep->wall_s, ep->samples_per_s, ep->lr, spread,
            decayed ? "  (loss on a plateau: lr decayed)" : "",
            reached ? "  <- target reached" : "");
        fflush(stdout);
    }
    *stop = reached; /* every rank saw the same accuracy: all stop together */
    u->st.epoch++;
    u->st.pos = 0;
    u->st.loss_sum = u->st.loss_count = 0;
    if (c->checkpoint && c->checkpoint_every == 0 && whole)
        return checkpoint(u); /* by default, at the end of each epoch */
    return 0;
}

/*
 * Elastic: after a failure the survivors shrink the communicator, go back
 * to the last step every one of them completed (a rank that finished one
 * more restores its snapshot: no rank can be two steps ahead, since a step
 * ends in an allreduce of all), take rank 0's state (one position, one
 * schedule, one model), re-shard the rest of the epoch's order over
 * themselves and rescale the learning rate.  0, or -1 when they cannot.
 */
static int recover(struct run *u)
{
    const struct train_config *c = u->c;
    double t_fail = u->t_step;
    collie_comm *sub = NULL;
    collie_status st = collie_comm_shrink(u->comm, &sub);
    if (st != COLLIE_OK) {
        fprintf(stderr, "collie train: rank %d: the survivors could not regroup: %s: %s\n",
                u->first_rank, collie_strerror(st), collie_last_error(NULL));
        return -1;
    }
    if (u->owned)
        collie_finalize(u->owned);
    int before = u->ranks;
    u->owned = u->comm = sub;
    u->rank = collie_rank(sub);
    u->ranks = collie_size(sub);
    long long least = (long long)u->st.iter;
    if (train_check(sub, collie_allreduce(sub, &least, &least, 1, COLLIE_INT64, COLLIE_MIN),
                    "regrouping"))
        return -1;
    if (u->st.iter > least) {
        if (u->snap_iter != least) {
            fprintf(stderr,
                    "collie train: rank %d is at step %lld, the survivors at %lld: no "
                    "snapshot of that step\n",
                    u->first_rank, (long long)u->st.iter, least);
            return -1;
        }
        ckpt_unpack(u->snap, &u->st, &u->m, &u->o);
    }
    u->st.rng = u->m.rng;
    if (u->rank == 0)
        pack(u, u->blob, u->st);
    if (adopt_rank0(u, "regrouping"))
        return -1;
    u->snap_iter = -1;
    if (c->scale_lr)
        u->st.lr.lr *= (float)u->ranks / (float)before;
    u->st.ranks = u->ranks;
    u->steps_per_epoch = u->train.n / (c->batch * u->ranks);
    u->perm_epoch = -1;
    u->r->lost += before - u->ranks;
    u->r->recovery_s += collie_wtime() - t_fail;
    if (u->rank == 0) {
        printf("collie train: lost %d rank(s); %d continue from step %lld (epoch %d, sample "
               "%lld of its order), lr %.3g; regrouping took %.2f s\n",
               before - u->ranks, u->ranks, (long long)u->st.iter, u->st.epoch + 1,
               (long long)u->st.pos, lr_schedule_at(&u->st.lr, (long)u->st.iter),
               collie_wtime() - t_fail);
        fflush(stdout);
    }
    return 0;
}

/* Throughput (mean +- 1.96 std over timed steps), the split, bytes moved, the weights. */
static int summarize(struct run *u)
{
    const struct train_config *c = u->c;
    struct train_result *r = u->r;
    int iter = u->iter, timed = iter - WARMUP_ITERS;
    r->steps = iter;
    if (timed > 1) {
        double sum = 0, sq = 0;
        for (int i = WARMUP_ITERS; i < iter; i++) {
            double t = (double)c->batch * u->ranks / u->iter_s[i];
            sum += t;
            sq += t * t;
        }
        r->throughput_mean = sum / timed;
        double var = sq / timed - r->throughput_mean * r->throughput_mean;
        r->throughput_ci95 = 1.96 * sqrt(var > 0 ? var : 0);
    }
    if (u->timed) {
        r->compute_s_per_iter = u->compute / u->timed;
        r->comm_s_per_iter = u->comm_s / u->timed;
        r->comm_alone_s_per_iter = u->n_alone ? u->comm_alone / u->n_alone : 0;
    }
    double elem = train_wire_bytes(c);
    /* The A6000 study's formula: (N / (B k)) x parameters x bytes per element. */
    r->bytes_per_epoch_formula =
        (double)u->train.n / ((double)c->batch * u->ranks) * (double)u->m.nparams * elem;
    /* What this rank's gradient allreduces handed to its peers, per epoch of steps. */
    r->bytes_per_epoch_actual = iter ? u->grad_bytes / iter * u->steps_per_epoch : 0;
    /* Decentralized: the mean model is the result (the ranks' own differ by the consensus). */
    if (c->sync != TRAIN_SYNC_ALLREDUCE && decentral_to_mean(&u->dc, u->m.params, u->m.nparams) < 0)
        return -1;
    r->weights = malloc(u->m.nparams * sizeof(float));
    if (r->weights)
        memcpy(r->weights, u->m.params, u->m.nparams * sizeof(float));
    return r->weights ? 0 : -1;
}

int train_run(collie_comm *comm, const struct train_config *c, struct train_result *r)
{
    struct run u = {.comm = comm,
                    .c = c,
                    .r = r,
                    .rank = collie_rank(comm),
                    .ranks = collie_size(comm),
                    .first_rank = collie_rank(comm)};
    memset(r, 0, sizeof *r);
    r->ranks = u.ranks;
    r->time_to_target_s = -1;
    r->epoch_to_target = -1;
    if (load_everywhere(&u))
        return -1;
    int sizes[MLP_MAX_LAYERS + 1], nl = c->nhidden + 1, rc = -1;
    sizes[0] = u.train.dim;
    for (int l = 0; l < c->nhidden; l++)
        sizes[l + 1] = c->hidden[l];
    sizes[nl] = u.train.classes == 2 ? 1 : u.train.classes; /* two classes: one sigmoid output */
    u.o = (struct optim){
        .momentum = c->momentum, .weight_decay = c->weight_decay, .nesterov = c->nesterov};
    if (mlp_init(&u.m, sizes, nl, c->dropout, c->batch > 1024 ? c->batch : 1024, c->seed) ||
        optim_init(&u.o, c->optim, u.m.nparams)) {
        fprintf(stderr, "collie train: out of memory\n");
        goto out; /* both free what their init left, or nothing */
    }
    if (setup(&u))
        goto out;
    u.t_start = collie_wtime();
    int stop = 0, regroups = 0;
    while (u.st.epoch < c->epochs && !stop && more_steps(&u))
        if (epoch(&u, &stop) && (!c->elastic || ++regroups >= r->ranks || recover(&u)))
            goto out;
    rc = summarize(&u);
    r->ranks = u.ranks;
    r->root = u.rank == 0;
out:
    if (u.owned)
        collie_finalize(u.owned);
    free(u.blob);
    free(u.snap);
    mlp_free(&u.m);
    optim_free(&u.o);
    decentral_free(&u.dc);
    free(u.wire);
    ef_free(&u.ef);
    free(u.xb);
    free(u.yb);
    free(u.perm);
    free(u.iter_s);
    dataset_free(&u.train);
    dataset_free(&u.test);
    return rc;
}

void train_print_summary(FILE *out, const struct train_config *c, const struct train_result *r)
{
    fprintf(out, "Total samples/sec on %d rank(s): %.1f +- %.1f\n", r->ranks, r->throughput_mean,
            r->throughput_ci95);
    double it = r->compute_s_per_iter + r->comm_s_per_iter;
    fprintf(out,
            "per iteration: compute %.3f ms, communication %.3f ms%s (%.0f%% of the step; "
            "comm/compute %.2f)\n",
            r->compute_s_per_iter * 1e3, r->comm_s_per_iter * 1e3,
            c->no_overlap || c->sync != TRAIN_SYNC_ALLREDUCE ? "" : " left after the backward pass",
            it > 0 ? 100 * r->comm_s_per_iter / it : 0,
            r->compute_s_per_iter > 0 ? r->comm_s_per_iter / r->compute_s_per_iter : 0);
    if (!c->no_overlap && r->comm_alone_s_per_iter > 0) {
        double hidden = 1 - r->comm_s_per_iter / r->comm_alone_s_per_iter;
        fprintf(out,
                "overlap: the allreduces alone take %.3f ms per step (1 step in %d, reduced "
                "after the pass); %.0f%% of that hid behind the backward pass\n",
                r->comm_alone_s_per_iter * 1e3, SAMPLE_EVERY, 100 * (hidden > 0 ? hidden : 0));
    }
    fprintf(out,
            "parameters %zu; bytes per epoch by the formula (N / (B k)) x params x %.3g B: "
            "%.3g; sent by collie (rank 0): %.3g\n",
            r->nparams, train_wire_bytes(c), r->bytes_per_epoch_formula, r->bytes_per_epoch_actual);
    fprintf(out, "final test accuracy %.4f after %d epoch(s), %d steps\n", r->final_test_accuracy,
            r->epochs_run, r->steps);
    if (r->lost > 0)
        fprintf(out,
                "elastic: %d rank(s) lost, training went on with %d; %.2f s lost to regrouping\n",
                r->lost, r->ranks, r->recovery_s);
    if (c->target > 0) {
        if (r->time_to_target_s >= 0)
            fprintf(out, "time to accuracy %.3f: %.1f s (epoch %d)\n", c->target,
                    r->time_to_target_s, r->epoch_to_target);
        else
            fprintf(out, "time to accuracy %.3f: not reached\n", c->target);
    }
}

int train_write_csv(const char *path, const struct train_result *r)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "ranks,epoch,wall_s,train_loss,test_accuracy,samples_per_s,lr,consensus\n");
    for (int i = 0; i < r->epochs_run; i++)
        fprintf(f, "%d,%d,%.3f,%.6f,%.6f,%.1f,%.6g,%.6g\n", r->ranks, r->epoch[i].epoch,
                r->epoch[i].wall_s, r->epoch[i].loss, r->epoch[i].test_accuracy,
                r->epoch[i].samples_per_s, r->epoch[i].lr, r->epoch[i].consensus);
    return fclose(f) ? -1 : 0;
}

double train_wire_bytes(const struct train_config *c)
{
    /* the codes: a float32 scale per 256 elements besides their bits (collie.h) */
    if (c->ef_kind == COLLIE_COMPRESS_INT8)
        return 1 + 4.0 / 256;
    if (c->ef_kind == COLLIE_COMPRESS_SIGN)
        return 1.0 / 8 + 4.0 / 256;
    return c->grad_dtype == COLLIE_FLOAT32 ? 4 : 2;
}

const char *train_compress_name(const struct train_config *c)
{
    return c->ef_kind == COLLIE_COMPRESS_INT8   ? "int8-ef"
           : c->ef_kind == COLLIE_COMPRESS_SIGN ? "sign-ef"
           : c->grad_dtype == COLLIE_FLOAT16    ? "float16"
           : c->grad_dtype == COLLIE_BFLOAT16   ? "bfloat16"
                                                : "none";
}

int train_write_json(const char *path, const struct train_config *c, const struct train_result *r)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\n  \"epochs\": [");
    for (int i = 0; i < r->epochs_run; i++)
        fprintf(f,
                "%s\n    {\"epoch\": %d, \"wall_s\": %.3f, \"train_loss\": %.6f, "
                "\"test_accuracy\": %.6f, \"samples_per_s\": %.1f, \"lr\": %.6g, "
                "\"consensus\": %.6g}",
                i ? "," : "", r->epoch[i].epoch, r->epoch[i].wall_s, r->epoch[i].loss,
                r->epoch[i].test_accuracy, r->epoch[i].samples_per_s, r->epoch[i].lr,
                r->epoch[i].consensus);
    fprintf(f, "\n  ],\n  \"summary\": {\"ranks\": %d, \"compress\": \"%s\", \"target\": %g, ",
            r->ranks, train_compress_name(c), c->target);
    if (r->time_to_target_s >= 0)
        fprintf(f, "\"time_to_target_s\": %.3f, \"epoch_to_target\": %d, ", r->time_to_target_s,
                r->epoch_to_target);
    else
        fprintf(f, "\"time_to_target_s\": null, \"epoch_to_target\": null, ");
    fprintf(
        f,
        "\"final_test_accuracy\": %.6f, \"throughput_mean\": %.3f, \"throughput_ci95\": %.3f, "
        "\"compute_s_per_iter\": %.6f, \"comm_s_per_iter\": %.6f, \"comm_alone_s_per_iter\": %.6f, "
        "\"bytes_per_epoch_formula\": %.0f, \"bytes_per_epoch_actual\": %.0f, "
        "\"parameters\": %zu}\n}\n",
        r->final_test_accuracy, r->throughput_mean, r->throughput_ci95, r->compute_s_per_iter,
        r->comm_s_per_iter, r->comm_alone_s_per_iter, r->bytes_per_epoch_formula,
        r->bytes_per_epoch_actual, r->nparams);
    return fclose(f) ? -1 : 0;
}
