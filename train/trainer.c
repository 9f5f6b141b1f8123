/* trainer.c - the data-parallel training loop and its measurements. */
#define _POSIX_C_SOURCE 200809L
#include "trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dataset.h"
#include "schedule.h"

#define WARMUP_ITERS 10 /* iterations left out of the throughput statistics */

static int check(collie_comm *comm, collie_status st, const char *what)
{
    if (st == COLLIE_OK)
        return 0;
    fprintf(stderr, "collie train, rank %d: %s failed: %s\n  %s\n", collie_rank(comm), what,
            collie_strerror(st), collie_last_error(comm));
    return -1;
}

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

/* Averages the fused gradient over the ranks, in float32 or compressed to 16 bits. */
static int average(collie_comm *comm, const struct train_config *c, float *grads, size_t n,
                   void *wire)
{
    if (c->grad_dtype == COLLIE_FLOAT32)
        return check(comm, collie_allreduce(comm, grads, grads, n, COLLIE_FLOAT32, COLLIE_AVG),
                     "gradient allreduce");
    /* The library's own conversions: the same rounding as its reductions. */
    if (check(comm, collie_convert(wire, c->grad_dtype, grads, COLLIE_FLOAT32, n), "compression") ||
        check(comm, collie_allreduce(comm, wire, wire, n, c->grad_dtype, COLLIE_AVG),
              "gradient allreduce"))
        return -1;
    return check(comm, collie_convert(grads, COLLIE_FLOAT32, wire, c->grad_dtype, n),
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
    if (check(comm, collie_allreduce(comm, &correct, &correct, 1, COLLIE_INT64, COLLIE_SUM),
              "accuracy allreduce"))
        return -1;
    return (double)correct / test->n;
}

int train_run(collie_comm *comm, const struct train_config *c, struct train_result *r)
{
    int rank = collie_rank(comm), ranks = collie_size(comm), rc = -1;
    memset(r, 0, sizeof *r);
    r->ranks = ranks;
    r->time_to_target_s = -1;
    r->epoch_to_target = -1;
    struct dataset train, test;
    /* Every rank learns whether every rank loaded its data: they fail together, at once. */
    int loaded = load(c, &train, &test, rank) == 0, all = loaded;
    if (check(comm, collie_allreduce(comm, &all, &all, 1, COLLIE_INT32, COLLIE_MIN), "start") ||
        !all) {
        if (loaded) {
            dataset_free(&train);
            dataset_free(&test);
        }
        if (all == 0 && loaded && rank == 0)
            fprintf(stderr,
                    "collie train: another rank could not load the data (see its output)\n");
        return -1;
    }
    int sizes[MLP_MAX_LAYERS + 1], nl = c->nhidden + 1;
    sizes[0] = train.dim;
    for (int l = 0; l < c->nhidden; l++)
        sizes[l + 1] = c->hidden[l];
    sizes[nl] = train.classes == 2 ? 1 : train.classes; /* two classes: one sigmoid output */
    struct mlp m;
    struct optim o = {
        .momentum = c->momentum, .weight_decay = c->weight_decay, .nesterov = c->nesterov};
    int steps_per_epoch = train.n / (c->batch * ranks);
    float *xb = malloc(sizeof(float) * (size_t)c->batch * (size_t)train.dim);
    uint8_t *yb = malloc((size_t)c->batch);
    int *perm = malloc(sizeof(int) * (size_t)train.n);
    int max_iters = c->max_steps > 0 ? c->max_steps : steps_per_epoch * c->epochs;
    double *iter_s = malloc(sizeof(double) * (size_t)(max_iters + 1));
    r->epoch = calloc((size_t)c->epochs + 1, sizeof *r->epoch);
    void *wire = NULL;
    if (steps_per_epoch < 1) {
        if (rank == 0)
            fprintf(stderr, "collie train: %d samples do not fill one global batch of %d x %d\n",
                    train.n, c->batch, ranks);
        goto out;
    }
    if (mlp_init(&m, sizes, nl, c->dropout, c->batch > 1024 ? c->batch : 1024, c->seed) ||
        optim_init(&o, c->optim, m.nparams) || !xb || !yb || !perm || !iter_s || !r->epoch ||
        !(wire = malloc(m.nparams * 2))) {
        fprintf(stderr, "collie train: out of memory\n");
        goto out_model; /* both free what their init left, or nothing */
    }
    r->nparams = m.nparams;
    /* Same seed, same weights; the broadcast makes it so whatever the seed does. */
    if (check(comm, collie_broadcast(comm, m.params, m.nparams, COLLIE_FLOAT32, 0), "broadcast"))
        goto out_model;
    struct lr_schedule lr;
    lr_schedule_init(&lr, c->lr, ranks, c->scale_lr, (long)c->warmup_epochs * steps_per_epoch,
                     c->plateau_factor, c->plateau_patience, c->min_lr);
    double t_start = collie_wtime(), compute = 0, comm_s = 0, grad_bytes = 0;
    int iter = 0;
    for (int e = 0; e < c->epochs && (c->max_steps <= 0 || iter < c->max_steps); e++) {
        double loss_sum = 0, t_epoch = collie_wtime();
        dataset_shuffle(perm, train.n, c->seed, e);
        int steps = 0;
        for (int s = 0; s < steps_per_epoch && (c->max_steps <= 0 || iter < c->max_steps); s++) {
            const int *idx = perm + ((size_t)s * (size_t)ranks + (size_t)rank) * (size_t)c->batch;
            for (int i = 0; i < c->batch; i++) {
                memcpy(xb + (size_t)i * (size_t)train.dim,
                       train.x + (size_t)idx[i] * (size_t)train.dim,
                       sizeof(float) * (size_t)train.dim);
                yb[i] = train.y[idx[i]];
            }
            double t0 = collie_wtime();
            loss_sum += mlp_forward_backward(&m, xb, yb, c->batch, 1);
            double t1 = collie_wtime();
            unsigned long long before, after;
            collie_get_counters(comm, NULL, &before);
            if (average(comm, c, m.grads, m.nparams, wire))
                goto out_model;
            collie_get_counters(comm, NULL, &after);
            grad_bytes += (double)(after - before);
            double t2 = collie_wtime();
            optim_step(&o, m.params, m.grads, lr_schedule_at(&lr, (long)e * steps_per_epoch + s));
            double t3 = collie_wtime();
            if (iter >= WARMUP_ITERS) {
                compute += (t1 - t0) + (t3 - t2);
                comm_s += t2 - t1;
            }
            iter_s[iter++] = t3 - t0;
            steps++;
        }
        double loss = loss_sum;
        if (check(comm, collie_allreduce(comm, &loss, &loss, 1, COLLIE_FLOAT64, COLLIE_SUM),
                  "loss"))
            goto out_model;
        double acc = evaluate(comm, &m, &test);
        if (acc < 0)
            goto out_model;
        struct train_epoch *ep = &r->epoch[r->epochs_run++];
        ep->epoch = e + 1;
        ep->wall_s = collie_wtime() - t_start;
        ep->loss = loss / ((double)steps * ranks);
        ep->test_accuracy = acc;
        ep->samples_per_s = (double)steps * c->batch * ranks / (collie_wtime() - t_epoch);
        ep->lr = lr_schedule_at(&lr, (long)(e + 1) * steps_per_epoch - 1);
        int decayed = lr_schedule_epoch_end(&lr, ep->loss); /* the same loss on every rank */
        r->final_test_accuracy = acc;
        int reached = c->target > 0 && acc >= c->target && r->time_to_target_s < 0;
        if (reached) {
            r->time_to_target_s = ep->wall_s;
            r->epoch_to_target = e + 1;
        }
        if (rank == 0 && !c->quiet) {
            printf(
                "epoch %3d  loss %.4f  test accuracy %.4f  %7.1f s  %9.0f samples/s  lr %.3g%s%s\n",
                e + 1, ep->loss, acc, ep->wall_s, ep->samples_per_s, ep->lr,
                decayed ? "  (loss on a plateau: lr decayed)" : "",
                reached ? "  <- target reached" : "");
            fflush(stdout);
        }
        if (reached) /* every rank saw the same accuracy: all stop together */
            break;
    }
    r->steps = iter;
    /* Throughput per timed iteration: global batch / step time; mean +- 1.96 std. */
    int timed = iter - WARMUP_ITERS;
    if (timed > 1) {
        double sum = 0, sq = 0;
        for (int i = WARMUP_ITERS; i < iter; i++) {
            double t = (double)c->batch * ranks / iter_s[i];
            sum += t;
            sq += t * t;
        }
        r->throughput_mean = sum / timed;
        double var = sq / timed - r->throughput_mean * r->throughput_mean;
        r->throughput_ci95 = 1.96 * sqrt(var > 0 ? var : 0);
        r->compute_s_per_iter = compute / timed;
        r->comm_s_per_iter = comm_s / timed;
    }
    size_t elem = c->grad_dtype == COLLIE_FLOAT32 ? 4 : 2;
    /* The A6000 study's formula: (N / (B k)) x parameters x bytes per element. */
    r->bytes_per_epoch_formula =
        (double)train.n / ((double)c->batch * ranks) * (double)m.nparams * (double)elem;
    /* What this rank's gradient allreduces handed to its peers, per epoch of steps. */
    r->bytes_per_epoch_actual = iter ? grad_bytes / iter * steps_per_epoch : 0;
    r->weights = malloc(m.nparams * sizeof(float));
    if (r->weights)
        memcpy(r->weights, m.params, m.nparams * sizeof(float));
    rc = r->weights ? 0 : -1;
out_model:
    mlp_free(&m);
    optim_free(&o);
out:
    free(wire);
    free(xb);
    free(yb);
    free(perm);
    free(iter_s);
    dataset_free(&train);
    dataset_free(&test);
    return rc;
}

void train_print_summary(FILE *out, const struct train_config *c, const struct train_result *r)
{
    fprintf(out, "Total samples/sec on %d rank(s): %.1f +- %.1f\n", r->ranks, r->throughput_mean,
            r->throughput_ci95);
    double it = r->compute_s_per_iter + r->comm_s_per_iter;
    fprintf(out,
            "per iteration: compute %.3f ms, communication %.3f ms (%.0f%% of the step; "
            "comm/compute %.2f)\n",
            r->compute_s_per_iter * 1e3, r->comm_s_per_iter * 1e3,
            it > 0 ? 100 * r->comm_s_per_iter / it : 0,
            r->compute_s_per_iter > 0 ? r->comm_s_per_iter / r->compute_s_per_iter : 0);
    fprintf(out,
            "parameters %zu; bytes per epoch by the formula (N / (B k)) x params x %d B: %.3g; "
            "sent by collie (rank 0): %.3g\n",
            r->nparams, c->grad_dtype == COLLIE_FLOAT32 ? 4 : 2, r->bytes_per_epoch_formula,
            r->bytes_per_epoch_actual);
    fprintf(out, "final test accuracy %.4f after %d epoch(s), %d steps\n", r->final_test_accuracy,
            r->epochs_run, r->steps);
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
    fprintf(f, "ranks,epoch,wall_s,train_loss,test_accuracy,samples_per_s,lr\n");
    for (int i = 0; i < r->epochs_run; i++)
        fprintf(f, "%d,%d,%.3f,%.6f,%.6f,%.1f,%.6g\n", r->ranks, r->epoch[i].epoch,
                r->epoch[i].wall_s, r->epoch[i].loss, r->epoch[i].test_accuracy,
                r->epoch[i].samples_per_s, r->epoch[i].lr);
    return fclose(f) ? -1 : 0;
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
                "\"test_accuracy\": %.6f, \"samples_per_s\": %.1f, \"lr\": %.6g}",
                i ? "," : "", r->epoch[i].epoch, r->epoch[i].wall_s, r->epoch[i].loss,
                r->epoch[i].test_accuracy, r->epoch[i].samples_per_s, r->epoch[i].lr);
    fprintf(f, "\n  ],\n  \"summary\": {\"ranks\": %d, \"target\": %g, ", r->ranks, c->target);
    if (r->time_to_target_s >= 0)
        fprintf(f, "\"time_to_target_s\": %.3f, \"epoch_to_target\": %d, ", r->time_to_target_s,
                r->epoch_to_target);
    else
        fprintf(f, "\"time_to_target_s\": null, \"epoch_to_target\": null, ");
    fprintf(f,
            "\"final_test_accuracy\": %.6f, \"throughput_mean\": %.3f, \"throughput_ci95\": %.3f, "
            "\"compute_s_per_iter\": %.6f, \"comm_s_per_iter\": %.6f, "
            "\"bytes_per_epoch_formula\": %.0f, \"bytes_per_epoch_actual\": %.0f, "
            "\"parameters\": %zu}\n}\n",
            r->final_test_accuracy, r->throughput_mean, r->throughput_ci95, r->compute_s_per_iter,
            r->comm_s_per_iter, r->bytes_per_epoch_formula, r->bytes_per_epoch_actual, r->nparams);
    return fclose(f) ? -1 : 0;
}
