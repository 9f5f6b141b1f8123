/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * train.c - `collie train MODEL`: data-parallel training of an MLP or a
 * logistic regression on Fashion-MNIST (or any MNIST-format directory, or
 * synthetic data), reported as the reference benchmarks report.  With -n N
 * outside a job it launches N ranks of itself, like `collie bench`.
 */
#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../train/dataset.h"
#include "../train/trainer.h"
#include "common/launch.h"
#include "tools.h"
#include "train_scaling.h"

/* What the command line asks beyond the training itself. */
struct train_cli {
    const char *csv, *json, *save, *plot, *raw;
    int scaling[16], nscaling;
};

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: collie train mlp|logreg [-n RANKS] [options]\n"
        "  -n RANKS            launch RANKS ranks on this host (else: run as a rank of the job)\n"
        "  --preset small      mlp 784-256-128-100-10 (the published Fashion-MNIST MLP)\n"
        "  --preset a6000-head mlp 784-4096-4096-10 with dropout 0.5 (about 20 M parameters)\n"
        "  --hidden A,B,...    hidden layer sizes (mlp)\n"
        "  --dropout P         dropout on hidden layers (default 0)\n"
        "  --data DIR          MNIST-format IDX files (default %s)\n"
        "  --synthetic N       a synthetic data set of N samples instead\n"
        "  --libsvm FILE       LIBSVM-format data (the epsilon set's); two classes train a\n"
        "                      sigmoid output with binary cross-entropy\n"
        "  --libsvm-test FILE  its test set (default: the last sixth of FILE)\n"
        "  --batch B           samples per rank and step (default 64)\n"
        "  --epochs E          at most E epochs (default 20)\n"
        "  --lr LR             learning rate per rank (default 0.02; x ranks: linear scaling)\n"
        "  --no-scale-lr       do not multiply the learning rate by the number of ranks\n"
        "  --warmup E          linear learning-rate warm-up over E epochs (default 0)\n"
        "  --plateau F         decay on plateau: lr x F when the training loss has not\n"
        "                      improved for --patience epochs (default 2), down to --min-lr\n"
        "  --momentum M        SGD momentum (default 0.9), --nesterov, --adam\n"
        "  --wd W              weight decay / L2 (default 0; logreg: 2.5e-6)\n"
        "  --compress T        gradients on the wire as float16 or bfloat16, or as\n"
        "                      int8-ef or sign-ef codes with error feedback (3.9x, 28x\n"
        "                      fewer bytes than float32; collie_allreduce_ef)\n"
        "  --no-overlap        reduce the gradients after the backward pass in one allreduce\n"
        "  --sync S            allreduce (default: gradients), neighbor (each rank's model\n"
        "                      averaged with its neighbours), hierarchical-neighbor (within the\n"
        "                      host, then with the neighbour hosts), push-sum (one-sided\n"
        "                      deposits to the neighbours: nobody waits for a neighbour)\n"
        "  --topology T        the neighbours: exp2 (default), ring, mesh, star, full, ...,\n"
        "                      onepeer-exp2, onepeer-exact, inner-outer-ring, inner-outer-exp2\n"
        "                      (collie bench --help lists them)\n"
        "  --combine C         atc: average after the update (default); awc: average while\n"
        "                      the gradient is computed\n"
        "  --global-avg-every H   with neighbour averaging, also average globally every H steps\n"
        "                      (default: each layer's as soon as the pass has produced them)\n"
        "  --target ACC        time to this test accuracy; stop once reached\n"
        "  --seed S            same seed, same data order and initial weights (default 1)\n"
        "  --max-steps N       stop after N steps\n"
        "  --csv FILE, --json FILE   per-epoch rows and the summary\n"
        "  --save FILE         the trained parameters, float32 (W1 b1 W2 b2 ...)\n"
        "  --elastic           a lost rank does not end the job: the survivors shrink the\n"
        "                      communicator, go back to the last step all of them completed,\n"
        "                      re-shard the data, rescale the rate and go on (-n: collie run\n"
        "                      --keep-going)\n"
        "  --checkpoint FILE   rank 0 writes the whole state there, atomically, at the end of\n"
        "                      each epoch, or every K steps with --checkpoint-every K\n"
        "  --resume FILE       continue from a checkpoint: on as many ranks, bit for bit\n"
        "  --inject-kill R:S   testing: rank R SIGKILLs itself before step S\n"
        "  --scaling 1,2,4,8   run at each rank count; print speedup, efficiency, time to target\n"
        "  --plot FILE.png     accuracy and loss against time (and the scaling curve), by "
        "gnuplot\n",
        FASHION_MNIST_DIR);
}

/* Push-sum runs on a window over one topology: a schedule of several steps is refused here. */
static int push_sum_static(const char *topology, int nranks)
{
    collie_schedule *s;
    if (collie_schedule_from_name(topology, nranks > 0 ? nranks : 1, &s) != COLLIE_OK)
        return 0; /* the ranks say why */
    int period = collie_schedule_period(s);
    collie_schedule_free(s);
    if (period == 1)
        return 0;
    fprintf(stderr,
            "collie train: --sync push-sum needs a static topology, not the schedule '%s'\n",
            topology);
    return -1;
}

static int parse_hidden(const char *s, struct train_config *c)
{
    c->nhidden = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 65536 || c->nhidden == MLP_MAX_LAYERS - 1)
            return -1;
        c->hidden[c->nhidden++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return 0;
}

/* Fills c from argv; returns the -n value (0 if none), or -1. */
static int parse_counts(const char *s, struct train_cli *cli)
{
    cli->nscaling = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 4096 || cli->nscaling == 16 || (*end && *end != ','))
            return -1;
        cli->scaling[cli->nscaling++] = (int)v;
        s = *end ? end + 1 : end;
    }
    return cli->nscaling ? 0 : -1;
}

static int parse(int argc, char **argv, struct train_config *c, struct train_cli *cli)
{
    int nranks = 0, model = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "mlp") || !strcmp(a, "logreg")) {
            model = !strcmp(a, "mlp");
            if (!model) {
                c->nhidden = 0;
                c->weight_decay = 2.5e-6f;
            }
            continue;
        }
        if (!strcmp(a, "--nesterov")) {
            c->nesterov = 1;
            continue;
        }
        if (!strcmp(a, "--adam")) {
            c->optim = OPTIM_ADAM;
            continue;
        }
        if (!strcmp(a, "--no-scale-lr")) {
            c->scale_lr = 0;
            continue;
        }
        if (!strcmp(a, "--no-overlap")) {
            c->no_overlap = 1;
            continue;
        }
        if (!strcmp(a, "--elastic")) {
            c->elastic = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr,
                    "collie train: unknown argument '%s' (or it needs a value; try --help)\n", a);
            return -1;
        }
        i++;
        char *end = "";
        if (!strcmp(a, "-n")) {
            nranks = (int)strtol(v, &end, 10);
            if (nranks < 1)
                goto bad;
        } else if (!strcmp(a, "--preset")) {
            if (!strcmp(v, "small")) {
                c->nhidden = 3;
                c->hidden[0] = 256;
                c->hidden[1] = 128;
                c->hidden[2] = 100;
            } else if (!strcmp(v, "a6000-head")) {
                c->nhidden = 2;
                c->hidden[0] = c->hidden[1] = 4096;
                c->dropout = 0.5f;
            } else
                goto bad;
        } else if (!strcmp(a, "--hidden")) {
            if (parse_hidden(v, c))
                goto bad;
        } else if (!strcmp(a, "--dropout")) {
            c->dropout = strtof(v, &end);
            if (!(c->dropout >= 0 && c->dropout < 1))
                goto bad;
        } else if (!strcmp(a, "--data"))
            c->data = v;
        else if (!strcmp(a, "--libsvm"))
            c->libsvm = v;
        else if (!strcmp(a, "--libsvm-test"))
            c->libsvm_test = v;
        else if (!strcmp(a, "--synthetic")) {
            c->synthetic = (int)strtol(v, &end, 10);
            if (c->synthetic < 1)
                goto bad;
        } else if (!strcmp(a, "--batch")) {
            c->batch = (int)strtol(v, &end, 10);
            if (c->batch < 1)
                goto bad;
        } else if (!strcmp(a, "--epochs")) {
            c->epochs = (int)strtol(v, &end, 10);
            if (c->epochs < 1)
                goto bad;
        } else if (!strcmp(a, "--max-steps")) {
            c->max_steps = (int)strtol(v, &end, 10);
            if (c->max_steps < 1)
                goto bad;
        } else if (!strcmp(a, "--lr")) {
            c->lr = strtof(v, &end);
            if (!(c->lr > 0))
                goto bad;
        } else if (!strcmp(a, "--warmup")) {
            c->warmup_epochs = (int)strtol(v, &end, 10);
            if (c->warmup_epochs < 0)
                goto bad;
        } else if (!strcmp(a, "--plateau")) {
            c->plateau_factor = strtof(v, &end);
            if (!(c->plateau_factor > 0 && c->plateau_factor < 1))
                goto bad;
        } else if (!strcmp(a, "--patience")) {
            c->plateau_patience = (int)strtol(v, &end, 10);
            if (c->plateau_patience < 0)
                goto bad;
        } else if (!strcmp(a, "--min-lr")) {
            c->min_lr = strtof(v, &end);
            if (!(c->min_lr >= 0))
                goto bad;
        } else if (!strcmp(a, "--momentum")) {
            c->momentum = strtof(v, &end);
            if (!(c->momentum >= 0 && c->momentum < 1))
                goto bad;
        } else if (!strcmp(a, "--wd")) {
            c->weight_decay = strtof(v, &end);
            if (!(c->weight_decay >= 0))
                goto bad;
        } else if (!strcmp(a, "--target")) {
            c->target = strtof(v, &end);
            if (!(c->target > 0 && c->target <= 1))
                goto bad;
        } else if (!strcmp(a, "--seed"))
            c->seed = strtoull(v, &end, 10);
        else if (!strcmp(a, "--sync")) {
            if (!strcmp(v, "allreduce"))
                c->sync = TRAIN_SYNC_ALLREDUCE;
            else if (!strcmp(v, "neighbor"))
                c->sync = TRAIN_SYNC_NEIGHBOR;
            else if (!strcmp(v, "hierarchical-neighbor"))
                c->sync = TRAIN_SYNC_HIER_NEIGHBOR;
            else if (!strcmp(v, "push-sum"))
                c->sync = TRAIN_SYNC_PUSH_SUM;
            else
                goto bad;
        } else if (!strcmp(a, "--topology")) {
            collie_schedule *probe; /* every name is known at one node */
            if (collie_schedule_from_name(v, 1, &probe) != COLLIE_OK) {
                fprintf(stderr, "collie train: --topology: %s\n", collie_last_error(NULL));
                return -1;
            }
            collie_schedule_free(probe);
            c->topology = v;
        } else if (!strcmp(a, "--combine")) {
            if (strcmp(v, "atc") && strcmp(v, "awc"))
                goto bad;
            c->awc = !strcmp(v, "awc");
        } else if (!strcmp(a, "--global-avg-every")) {
            c->global_avg_every = (int)strtol(v, &end, 10);
            if (c->global_avg_every < 1)
                goto bad;
        } else if (!strcmp(a, "--compress")) {
            if (!strcmp(v, "float16") || !strcmp(v, "fp16"))
                c->grad_dtype = COLLIE_FLOAT16;
            else if (!strcmp(v, "bfloat16") || !strcmp(v, "bf16"))
                c->grad_dtype = COLLIE_BFLOAT16;
            else if (!strcmp(v, "int8-ef"))
                c->ef_kind = COLLIE_COMPRESS_INT8;
            else if (!strcmp(v, "sign-ef"))
                c->ef_kind = COLLIE_COMPRESS_SIGN;
            else
                goto bad;
        } else if (!strcmp(a, "--csv"))
            cli->csv = v;
        else if (!strcmp(a, "--json"))
            cli->json = v;
        else if (!strcmp(a, "--save"))
            cli->save = v;
        else if (!strcmp(a, "--plot"))
            cli->plot = v;
        else if (!strcmp(a, "--raw"))
            cli->raw = v; /* internal: driver <-> job */
        else if (!strcmp(a, "--checkpoint"))
            c->checkpoint = v;
        else if (!strcmp(a, "--resume"))
            c->resume = v;
        else if (!strcmp(a, "--checkpoint-every")) {
            c->checkpoint_every = (int)strtol(v, &end, 10);
            if (c->checkpoint_every < 1)
                goto bad;
        } else if (!strcmp(a, "--inject-kill")) {
            if (sscanf(v, "%d:%d", &c->kill_rank, &c->kill_step) != 2 || c->kill_rank < 0 ||
                c->kill_step < 1)
                goto bad;
        } else if (!strcmp(a, "--scaling")) {
            if (parse_counts(v, cli))
                goto bad;
        } else {
            fprintf(stderr, "collie train: unknown option '%s' (try --help)\n", a);
            return -1;
        }
        if (*end)
            goto bad;
        continue;
    bad:
        fprintf(stderr, "collie train: bad value '%s' for %s (try --help)\n", v, a);
        return -1;
    }
    if (model < 0) {
        fprintf(stderr, "collie train: name a model, mlp or logreg (try --help)\n");
        return -1;
    }
    if (c->sync == TRAIN_SYNC_PUSH_SUM && push_sum_static(c->topology, nranks) != 0)
        return -1;
    if (c->sync == TRAIN_SYNC_PUSH_SUM && c->awc) {
        fprintf(stderr, "collie train: --combine awc does not apply to --sync push-sum (it never "
                        "waits for its neighbours)\n");
        return -1;
    }
    if (c->sync != TRAIN_SYNC_ALLREDUCE && (c->elastic || c->checkpoint || c->resume)) {
        fprintf(stderr, "collie train: --elastic, --checkpoint and --resume need --sync allreduce "
                        "(with neighbour averaging every rank holds a different model)\n");
        return -1;
    }
    if (c->checkpoint_every && !c->checkpoint) {
        fprintf(stderr, "collie train: --checkpoint-every needs --checkpoint FILE\n");
        return -1;
    }
    if (c->sync != TRAIN_SYNC_ALLREDUCE && (c->grad_dtype != COLLIE_FLOAT32 || c->ef_kind)) {
        fprintf(stderr, "collie train: --compress applies to gradient allreduce, not to --sync "
                        "neighbor\n");
        return -1;
    }
    return nranks;
}

static int save_params(const char *path, const float *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(p, sizeof *p, n, f);
    return fclose(f) || w != n ? -1 : 0;
}

/* Rank 0's results, appended for the driver: a "run" line, then one line per epoch. */
static int write_raw(const char *path, const struct train_result *r)
{
    FILE *f = fopen(path, "a");
    if (!f)
        return -1;
    fprintf(f, "run %d %.3f %.3f %.3f %d %.6f %.6f %.6f\n", r->ranks, r->throughput_mean,
            r->throughput_ci95, r->time_to_target_s, r->epoch_to_target, r->final_test_accuracy,
            r->compute_s_per_iter, r->comm_s_per_iter);
    for (int i = 0; i < r->epochs_run; i++)
        fprintf(f, "epoch %d %d %.3f %.6f %.6f\n", r->ranks, r->epoch[i].epoch, r->epoch[i].wall_s,
                r->epoch[i].loss, r->epoch[i].test_accuracy);
    return fclose(f) ? -1 : 0;
}

/*
 * Outside a job: `collie run -n N <this collie-train> ARGS` for each rank count,
 * ARGS being ours without -n, --scaling and --plot, plus --raw when the
 * driver reports (scaling, plot).
 */
static int launch(int argc, char **argv, const struct train_config *c, const struct train_cli *cli,
                  int nranks)
{
    char self[PATH_MAX], collie[PATH_MAX], n[16], raw[] = "/tmp/collie-train-XXXXXX";
    if (tools_self_path(self, sizeof self) || tools_sibling_path("collie", collie, sizeof collie))
        return 1;
    int reports = cli->nscaling || cli->plot, counts[16] = {nranks}, ncounts = 1, rc = 0;
    if (cli->nscaling) {
        memcpy(counts, cli->scaling, sizeof counts);
        ncounts = cli->nscaling;
    }
    if (reports) {
        int fd = mkstemp(raw);
        if (fd < 0)
            return 1;
        close(fd);
    }
    char **args = calloc((size_t)argc + 10, sizeof *args);
    for (int k = 0; k < ncounts && rc == 0; k++) {
        int a = 0;
        snprintf(n, sizeof n, "%d", counts[k]);
        args[a++] = collie, args[a++] = "run", args[a++] = "-n", args[a++] = n;
        if (c->elastic)
            args[a++] = "--keep-going"; /* a lost rank must not stop the survivors */
        args[a++] = self;
        for (int i = 1; i < argc; i++) {
            if (!strcmp(argv[i], "-n") || !strcmp(argv[i], "--scaling") ||
                !strcmp(argv[i], "--plot")) {
                i++;
                continue;
            }
            args[a++] = argv[i];
        }
        if (reports)
            args[a++] = "--raw", args[a++] = raw;
        args[a] = NULL;
        if (cli->nscaling)
            printf("# collie train on %d rank(s)\n", counts[k]);
        rc = tools_run_job(args);
    }
    free(args);
    if (reports) {
        if (rc == 0)
            rc = train_report_runs(raw, c->target, cli->nscaling > 0, cli->plot);
        unlink(raw);
    }
    return rc ? 1 : 0;
}

int collie_tool_train(int argc, char **argv)
{
    struct train_config c = {.data = FASHION_MNIST_DIR,
                             .batch = 64,
                             .epochs = 20,
                             .lr = 0.02f,
                             .scale_lr = 1,
                             .plateau_patience = 2,
                             .momentum = 0.9f,
                             .grad_dtype = COLLIE_FLOAT32,
                             .topology = "exp2",
                             .seed = 1,
                             .optim = OPTIM_SGD,
                             .nhidden = 1,
                             .hidden = {128}};
    struct train_cli cli = {0};
    int nranks = parse(argc, argv, &c, &cli);
    if (nranks < 0)
        return 2;
    if (!tools_in_a_job())
        return launch(argc, argv, &c, &cli, nranks ? nranks : 1);
    if (nranks || cli.nscaling || cli.plot) {
        fprintf(stderr, "collie train: -n, --scaling and --plot launch jobs, but this already is "
                        "one; drop them\n");
        return 2;
    }
    collie_comm *comm;
    collie_status st = collie_init(&comm);
    if (st != COLLIE_OK) {
        fprintf(stderr, "collie train: collie_init: %s\n  %s\n", collie_strerror(st),
                collie_last_error(NULL));
        return 1;
    }
    /* BLAS threads: the host's cores shared among its ranks. */
    int cores = openblas_get_num_procs(), local = collie_local_size(comm);
    openblas_set_num_threads(cores / local > 0 ? cores / local : 1);
    struct train_result r;
    if (collie_rank(comm) == 0)
        printf("collie train: %d rank(s), %d layer(s), batch %d per rank, %s\n", collie_size(comm),
               c.nhidden + 1, c.batch,
               c.synthetic ? "synthetic data"
               : c.libsvm  ? c.libsvm
                           : c.data);
    int rc = train_run(comm, &c, &r);
    if (rc == 0 && r.root) {
        train_print_summary(stdout, &c, &r);
        if (cli.csv && train_write_csv(cli.csv, &r))
            fprintf(stderr, "collie train: cannot write %s\n", cli.csv);
        if (cli.json && train_write_json(cli.json, &c, &r))
            fprintf(stderr, "collie train: cannot write %s\n", cli.json);
        if (cli.save && save_params(cli.save, r.weights, r.nparams))
            fprintf(stderr, "collie train: cannot write %s\n", cli.save);
        if (cli.raw && write_raw(cli.raw, &r))
            fprintf(stderr, "collie train: cannot write %s\n", cli.raw);
    }
    free(r.epoch);
    free(r.weights);
    collie_finalize(comm);
    return rc ? 1 : 0;
}
