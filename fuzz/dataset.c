/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataset.c - `collie train`'s data loaders (train/dataset.c): IDX files
 * (Fashion-MNIST's format, plain or gzip'd) and LIBSVM text.  The first
 * input byte picks the loader; for IDX the next two bytes split the rest
 * into the images file and the labels file.
 *
 * The promises: a set that loads has at least one sample and feature, a
 * label below its class count for every sample, and memory in proportion
 * to what it holds (a small file never makes the loader allocate
 * gigabytes: libFuzzer's -malloc_limit_mb enforces it); a file that does
 * not load says why.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../train/dataset.h"
#include "fuzz.h"

static int write_file(const char *dir, const char *name, const uint8_t *data, size_t size)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    ssize_t n = size ? write(fd, data, size) : 0;
    close(fd);
    return n == (ssize_t)size ? 0 : -1;
}

/* A directory of this process's, emptied at exit. */
static char dir[64];
static void remove_dir(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", dir);
    unlink(path);
    rmdir(dir);
}

static int idx(const uint8_t *data, size_t size, struct dataset *d, char *err, size_t errlen)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/collie-fuzz-XXXXXX");
        FUZZ_ASSERT(mkdtemp(dir));
        atexit(remove_dir);
    }
    if (size < 2)
        return -1;
    size_t split = ((size_t)data[0] << 8 | data[1]) % (size - 1);
    if (write_file(dir, "train-images-idx3-ubyte", data + 2, split) ||
        write_file(dir, "train-labels-idx1-ubyte", data + 2 + split, size - 2 - split))
        return -1;
    return dataset_load_idx(dir, 0, d, err, errlen);
}

static int libsvm(const uint8_t *data, size_t size, struct dataset *d, char *err, size_t errlen)
{
    if (size < 1)
        return -1;
    char path[64];
    int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
    if (fd < 0)
        return -1;
    int rc = dataset_load_libsvm(path, data[0] % 4 ? 0 : data[0], d, err, errlen);
    close(fd);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536) /* gzip: at most ~64 MiB of data */
        return 0;
    struct dataset d;
    char err[1024] = "";
    int rc = data[0] & 1 ? idx(data + 1, size - 1, &d, err, sizeof err)
                         : libsvm(data + 1, size - 1, &d, err, sizeof err);
    if (rc == 0) {
        FUZZ_ASSERT(d.n >= 1 && d.dim >= 1 && d.classes >= 2 && d.x && d.y);
        for (int i = 0; i < d.n; i++)
            FUZZ_ASSERT(d.y[i] < d.classes);
        dataset_free(&d);
    } else if (size > 2) {
        FUZZ_ASSERT(err[0]);
    }
    return 0;
}
