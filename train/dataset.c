/* SPDX-License-Identifier: BSD-3-Clause */
/* dataset.c - IDX (MNIST format) loading through zlib, a synthetic set, shuffling. */
#include "dataset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
    snprintf(err, errlen, "%s: %s", path, what);
    return -1;
}

/* Opens DIR/NAME.gz, else DIR/NAME (gzread reads plain files too). */
static gzFile open_idx(const char *dir, const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s.gz", dir, name);
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(path, len, "%s/%s", dir, name);
        f = gzopen(path, "rb");
    }
    return f;
}

static int read_be32(gzFile f, uint32_t *v)
{
    unsigned char b[4];
    if (gzread(f, b, 4) != 4)
        return -1;
    *v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    return 0;
}

/* Reads an IDX file of `dims` dimensions of unsigned bytes; returns the data and its shape. */
static unsigned char *read_idx(const char *dir, const char *name, int dims, uint32_t *shape,
                               char *err, size_t errlen)
{
    char path[1024];
    gzFile f = open_idx(dir, name, path, sizeof path);
    if (!f) {
        fail(err, errlen, path, "cannot open (install dataset-fashion-mnist, or give --data DIR)");
        return NULL;
    }
    uint32_t magic;
    size_t total = 1;
    if (read_be32(f, &magic) || magic != (0x800u | (uint32_t)dims)) {
        gzclose(f);
        fail(err, errlen, path, "not an IDX file of unsigned bytes with the expected dimensions");
        return NULL;
    }
    for (int i = 0; i < dims; i++) {
        if (read_be32(f, &shape[i]) || shape[i] == 0) {
            gzclose(f);
            fail(err, errlen, path, "bad dimension in the IDX header");
            return NULL;
        }
        if (total > DATASET_MAX_VALUES / shape[i]) {
            gzclose(f);
            fail(err, errlen, path, "IDX data of more than 2^28 values (1 GiB as floats)");
            return NULL;
        }
        total *= shape[i];
    }
    /* Grown as the data arrives: a short file never costs what its header promises. */
    size_t cap = total < (16u << 20) ? total : (16u << 20), got = 0;
    unsigned char *data = malloc(cap);
    while (data && got < total) {
        if (got == cap) {
            size_t bigger = cap * 2 < total ? cap * 2 : total;
            unsigned char *more = realloc(data, bigger);
            if (!more) {
                free(data);
                data = NULL;
                break;
            }
            data = more;
            cap = bigger;
        }
        size_t want = cap - got < (1u << 30) ? cap - got : (1u << 30);
        int n = gzread(f, data + got, (unsigned)want);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (!data) {
        gzclose(f);
        fail(err, errlen, path, "out of memory");
        return NULL;
    }
    gzclose(f);
    if (got != total) {
        free(data);
        snprintf(err, errlen,
                 "%s: truncated: the header promises %zu bytes of data, the file has %zu", path,
                 total, got);
        return NULL;
    }
    return data;
}

int dataset_load_idx(const char *dir, int test, struct dataset *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    const char *prefix = test ? "t10k" : "train";
    char name[64];
    uint32_t ishape[3], lshape[1];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", prefix);
    unsigned char *images = read_idx(dir, name, 3, ishape, err, errlen);
    if (!images)
        return -1;
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", prefix);
    unsigned char *labels = read_idx(dir, name, 1, lshape, err, errlen);
    if (!labels) {
        free(images);
        return -1;
    }
    int n = (int)ishape[0], dim = (int)(ishape[1] * ishape[2]), bad = -1;
    for (int i = 0; i < (int)lshape[0] && bad < 0; i++)
        if (labels[i] > 9)
            bad = i;
    if (lshape[0] != ishape[0] || bad >= 0) {
        if (bad >= 0)
            snprintf(err, errlen,
                     "%s/%s-labels-idx1-ubyte: label %d of sample %d is not a class 0..9", dir,
                     prefix, labels[bad], bad);
        else
            snprintf(err, errlen, "%s: %u images but %u labels", dir, ishape[0], lshape[0]);
        free(images);
        free(labels);
        return -1;
    }
    d->x = malloc(sizeof(float) * (size_t)n * (size_t)dim);
    if (!d->x) {
        free(images);
        free(labels);
        return fail(err, errlen, dir, "out of memory");
    }
    for (size_t i = 0; i < (size_t)n * (size_t)dim; i++)
        d->x[i] = images[i] * (1.0f / 255.0f);
    free(images);
    d->y = labels;
    d->n = n;
    d->dim = dim;
    d->classes = 10;
    return 0;
}

/* One parsed line: label, and (index, value) pairs appended to the growing arrays. */
struct libsvm_rows {
    int n, cap, maxidx;
    int *label;
    size_t nnz, nnz_cap;
    int *row_end, *idx;
    float *val;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 1024;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int parse_libsvm_line(char *line, int lineno, struct libsvm_rows *t, const char *path,
                             char *err, size_t errlen)
{
    char *save, *tok = strtok_r(line, " \t\r\n", &save), *end;
    if (!tok)
        return 1; /* blank line */
    long label = strtol(tok, &end, 10);
    if (*end && strcmp(end, ".0") && strcmp(end, ".000000"))
        label = -1000;
    if (label == -1)
        label = 0;
    if (label < 0 || label > 255) {
        snprintf(err, errlen, "%s: line %d: label '%s' is not -1, +1 or a class 0..255", path,
                 lineno, tok);
        return -1;
    }
    size_t row_cap = (size_t)t->cap;
    if (grow((void **)&t->label, &row_cap, (size_t)t->n + 1, sizeof(int)))
        return -1;
    row_cap = (size_t)t->cap;
    if (grow((void **)&t->row_end, &row_cap, (size_t)t->n + 1, sizeof(int)))
        return -1;
    t->cap = (int)row_cap;
    t->label[t->n] = (int)label;
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        long index = strtol(tok, &end, 10);
        float value = *end == ':' ? strtof(end + 1, &end) : 0;
        if (index < 1 || index > 100000000 || *end || !strchr(tok, ':')) {
            snprintf(err, errlen, "%s: line %d: '%s' is not INDEX:VALUE with INDEX >= 1", path,
                     lineno, tok);
            return -1;
        }
        size_t cap = t->nnz_cap;
        if (grow((void **)&t->idx, &cap, t->nnz + 1, sizeof(int)))
            return -1;
        cap = t->nnz_cap;
        if (grow((void **)&t->val, &cap, t->nnz + 1, sizeof(float)))
            return -1;
        t->nnz_cap = cap;
        t->idx[t->nnz] = (int)index;
        t->val[t->nnz++] = value;
        t->maxidx = (int)index > t->maxidx ? (int)index : t->maxidx;
    }
    t->row_end[t->n++] = (int)t->nnz;
    return 0;
}

int dataset_load_libsvm(const char *path, int dim, struct dataset *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(err, errlen, path, "cannot open");
    struct libsvm_rows t = {0};
    char *line = NULL;
    size_t len = 0;
    int lineno = 0, rc = 0;
    while (rc >= 0 && getline(&line, &len, f) > 0)
        rc = parse_libsvm_line(line, ++lineno, &t, path, err, errlen);
    free(line);
    fclose(f);
    if (rc >= 0 && !t.n)
        rc = fail(err, errlen, path, "no samples");
    if (rc >= 0 && dim > 0 && t.maxidx > dim) {
        snprintf(err, errlen, "%s: feature index %d is beyond the %d features expected", path,
                 t.maxidx, dim);
        rc = -1;
    }
    int maxlabel = 0;
    for (int i = 0; rc >= 0 && i < t.n; i++)
        maxlabel = t.label[i] > maxlabel ? t.label[i] : maxlabel;
    if (rc >= 0) {
        d->dim = dim > 0 ? dim : t.maxidx;
        d->n = t.n;
        if (d->dim < 1)
            rc = fail(err, errlen, path, "no features in any sample");
    }
    if (rc >= 0 && (size_t)d->n * (size_t)d->dim > DATASET_MAX_VALUES) {
        snprintf(err, errlen,
                 "%s: %d samples of %d features are more than 2^28 values (1 GiB as floats)", path,
                 d->n, d->dim);
        rc = -1;
    }
    if (rc >= 0) {
        d->classes = maxlabel + 1 < 2 ? 2 : maxlabel + 1;
        d->x = calloc((size_t)d->n * (size_t)d->dim, sizeof(float));
        d->y = malloc((size_t)d->n);
        if (!d->x || !d->y)
            rc = fail(err, errlen, path, "out of memory");
    }
    for (int i = 0, k = 0; rc >= 0 && i < t.n; i++) {
        d->y[i] = (uint8_t)t.label[i];
        for (; k < t.row_end[i]; k++)
            d->x[(size_t)i * (size_t)d->dim + (size_t)(t.idx[k] - 1)] = t.val[k];
    }
    free(t.label), free(t.row_end), free(t.idx), free(t.val);
    if (rc < 0)
        dataset_free(d);
    return rc < 0 ? -1 : 0;
}

int dataset_synthetic(struct dataset *d, int n, int dim, int classes, uint64_t seed,
                      uint64_t stream)
{
    memset(d, 0, sizeof *d);
    float *proto = malloc(sizeof(float) * (size_t)classes * (size_t)dim);
    d->x = malloc(sizeof(float) * (size_t)n * (size_t)dim);
    d->y = malloc((size_t)n);
    if (!proto || !d->x || !d->y) {
        free(proto);
        dataset_free(d);
        return -1;
    }
    /* Not the seed's own stream: mlp_init draws the weights from it, and prototypes equal
     * to the first layer's rows would make the untrained model right from the start. */
    uint64_t s = seed ^ 0xd1b54a32d192ed03ull;
    for (size_t i = 0; i < (size_t)classes * (size_t)dim; i++)
        proto[i] = train_uniform(&s);
    s = seed ^ (0x9e3779b97f4a7c15ull * (stream + 1));
    for (int i = 0; i < n; i++) {
        int c = (int)(train_rand(&s) % (uint64_t)classes);
        d->y[i] = (uint8_t)c;
        for (int j = 0; j < dim; j++) {
            float v =
                proto[(size_t)c * (size_t)dim + (size_t)j] + 0.35f * (train_uniform(&s) - 0.5f);
            d->x[(size_t)i * (size_t)dim + (size_t)j] = v < 0 ? 0 : v > 1 ? 1 : v;
        }
    }
    free(proto);
    d->n = n;
    d->dim = dim;
    d->classes = classes;
    return 0;
}

void dataset_free(struct dataset *d)
{
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}

void dataset_shuffle(int *perm, int n, uint64_t seed, int epoch)
{
    uint64_t s = seed ^ (0x5bd1e995ull * (uint64_t)(epoch + 1));
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)(train_rand(&s) % (uint64_t)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}
