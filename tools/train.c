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

#include "../train/dataset.h"
#include "../train/trainer.h"
#include "launch.h"
#include "tools.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: collie train mlp|logreg [-n RANKS] [options]\n"
            "  -n RANKS            launch RANKS ranks on this host (else: run as a rank of the job)\n"
            "  --preset small      mlp 784-256-128-100-10 (the published Fashion-MNIST MLP)\n"
            "  --preset a6000-head mlp 784-4096-4096-10 with dropout 0.5 (about 20 M parameters)\n"
            "  --hidden A,B,...    hidden layer sizes (mlp)\n"
            "  --dropout P         dropout on hidden layers (default 0)\n"
            "  --data DIR          MNIST-format IDX files (default %s)\n"
            "  --synthetic N       a synthetic data set of N samples instead\n"
            "  --batch B           samples per rank and step (default 64)\n"
            "  --epochs E          at most E epochs (default 20)\n"
            "  --lr LR             learning rate per rank (default 0.02; x ranks: linear scaling)\n"
            "  --no-scale-lr       do not multiply the learning rate by the number of ranks\n"
            "  --warmup E          linear learning-rate warm-up over E epochs (default 0)\n"
            "  --momentum M        SGD momentum (default 0.9), --nesterov, --adam\n"
            "  --wd W              weight decay / L2 (default 0; logreg: 2.5e-6)\n"
            "  --compress T        float16 or bfloat16 gradients on the wire\n"
            "  --target ACC        time to this test accuracy; stop once reached\n"
            "  --seed S            same seed, same data order and initial weights (default 1)\n"
            "  --max-steps N       stop after N steps\n"
            "  --csv FILE, --json FILE   per-epoch rows and the summary\n"
            "  --save FILE         the trained parameters, float32 (W1 b1 W2 b2 ...)\n",
            FASHION_MNIST_DIR);
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
static int parse(int argc, char **argv, struct train_config *c, const char **csv,
                 const char **json, const char **save)
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
        if (!strcmp(a, "--nesterov")) { c->nesterov = 1; continue; }
        if (!strcmp(a, "--adam")) { c->optim = OPTIM_ADAM; continue; }
        if (!strcmp(a, "--no-scale-lr")) { c->scale_lr = 0; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        if (!v) {
            fprintf(stderr, "collie train: unknown argument '%s' (or it needs a value; try --help)\n", a);
            return -1;
        }
        i++;
        char *end = "";
        if (!strcmp(a, "-n")) { nranks = (int)strtol(v, &end, 10); if (nranks < 1) goto bad; }
        else if (!strcmp(a, "--preset")) {
            if (!strcmp(v, "small")) { c->nhidden = 3; c->hidden[0] = 256; c->hidden[1] = 128; c->hidden[2] = 100; }
            else if (!strcmp(v, "a6000-head")) { c->nhidden = 2; c->hidden[0] = c->hidden[1] = 4096; c->dropout = 0.5f; }
            else goto bad;
        }
        else if (!strcmp(a, "--hidden")) { if (parse_hidden(v, c)) goto bad; }
        else if (!strcmp(a, "--dropout")) { c->dropout = strtof(v, &end); if (!(c->dropout >= 0 && c->dropout < 1)) goto bad; }
        else if (!strcmp(a, "--data")) c->data = v;
        else if (!strcmp(a, "--synthetic")) { c->synthetic = (int)strtol(v, &end, 10); if (c->synthetic < 1) goto bad; }
        else if (!strcmp(a, "--batch")) { c->batch = (int)strtol(v, &end, 10); if (c->batch < 1) goto bad; }
        else if (!strcmp(a, "--epochs")) { c->epochs = (int)strtol(v, &end, 10); if (c->epochs < 1) goto bad; }
        else if (!strcmp(a, "--max-steps")) { c->max_steps = (int)strtol(v, &end, 10); if (c->max_steps < 1) goto bad; }
        else if (!strcmp(a, "--lr")) { c->lr = strtof(v, &end); if (!(c->lr > 0)) goto bad; }
        else if (!strcmp(a, "--warmup")) { c->warmup_epochs = (int)strtol(v, &end, 10); if (c->warmup_epochs < 0) goto bad; }
        else if (!strcmp(a, "--momentum")) { c->momentum = strtof(v, &end); if (!(c->momentum >= 0 && c->momentum < 1)) goto bad; }
        else if (!strcmp(a, "--wd")) { c->weight_decay = strtof(v, &end); if (!(c->weight_decay >= 0)) goto bad; }
        else if (!strcmp(a, "--target")) { c->target = strtof(v, &end); if (!(c->target > 0 && c->target <= 1)) goto bad; }
        else if (!strcmp(a, "--seed")) c->seed = strtoull(v, &end, 10);
        else if (!strcmp(a, "--compress")) {
            if (!strcmp(v, "float16") || !strcmp(v, "fp16")) c->grad_dtype = COLLIE_FLOAT16;
            else if (!strcmp(v, "bfloat16") || !strcmp(v, "bf16")) c->grad_dtype = COLLIE_BFLOAT16;
            else goto bad;
        }
        else if (!strcmp(a, "--csv")) *csv = v;
        else if (!strcmp(a, "--json")) *json = v;
        else if (!strcmp(a, "--save")) *save = v;
        else {
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

/* Outside a job: `collie run -n N <self> train <the same arguments without -n>`. */
static int launch(int argc, char **argv, int nranks)
{
    char self[PATH_MAX], n[16];
    if (tools_self_path(self, sizeof self))
        return 1;
    snprintf(n, sizeof n, "%d", nranks);
    char **args = calloc((size_t)argc + 8, sizeof *args);
    int k = 0;
    args[k++] = self, args[k++] = "run", args[k++] = "-n", args[k++] = n;
    args[k++] = self, args[k++] = "train";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n")) {
            i++;
            continue;
        }
        args[k++] = argv[i];
    }
    int rc = tools_run_job(args);
    free(args);
    return rc ? 1 : 0;
}

int collie_tool_train(int argc, char **argv)
{
    struct train_config c = {.data = FASHION_MNIST_DIR, .batch = 64, .epochs = 20, .lr = 0.02f,
                             .scale_lr = 1, .momentum = 0.9f, .grad_dtype = COLLIE_FLOAT32,
                             .seed = 1, .optim = OPTIM_SGD, .nhidden = 1, .hidden = {128}};
    const char *csv = NULL, *json = NULL, *save = NULL;
    int nranks = parse(argc, argv, &c, &csv, &json, &save);
    if (nranks < 0)
        return 2;
    if (!tools_in_a_job())
        return launch(argc, argv, nranks ? nranks : 1);
    if (nranks) {
        fprintf(stderr, "collie train: -n launches a job, but this already is one; drop -n\n");
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
               c.nhidden + 1, c.batch, c.synthetic ? "synthetic data" : c.data);
    int rc = train_run(comm, &c, &r);
    if (rc == 0 && collie_rank(comm) == 0) {
        train_print_summary(stdout, &c, &r);
        if (csv && train_write_csv(csv, &r))
            fprintf(stderr, "collie train: cannot write %s\n", csv);
        if (json && train_write_json(json, &c, &r))
            fprintf(stderr, "collie train: cannot write %s\n", json);
        if (save && save_params(save, r.weights, r.nparams))
            fprintf(stderr, "collie train: cannot write %s\n", save);
    }
    free(r.epoch);
    free(r.weights);
    collie_finalize(comm);
    return rc ? 1 : 0;
}
