/* SPDX-License-Identifier: BSD-3-Clause */
/* checkpoint.c - the training state as one blob, and its file (checkpoint.h). */
#define _POSIX_C_SOURCE 200809L
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define MAGIC "COLLIECK"
#define VERSION 1u

struct file_header {
    char magic[8];
    uint32_t version, crc; /* crc: CRC-32 of the blob */
    uint64_t bytes;        /* of the blob */
};

static size_t moments(const struct optim *o) { return o->kind == OPTIM_ADAM ? 2 : 1; }

size_t ckpt_bytes(const struct mlp *m, const struct optim *o)
{
    return sizeof(struct train_state) + sizeof(float) * m->nparams * (1 + moments(o));
}

void ckpt_pack(void *buf, const struct train_state *st, const struct mlp *m, const struct optim *o)
{
    char *p = buf;
    size_t n = sizeof(float) * m->nparams;
    memcpy(p, st, sizeof *st);
    memcpy(p += sizeof *st, m->params, n);
    memcpy(p += n, o->m, n);
    if (moments(o) == 2)
        memcpy(p + n, o->v, n);
}

void ckpt_unpack(const void *buf, struct train_state *st, struct mlp *m, struct optim *o)
{
    const char *p = buf;
    size_t n = sizeof(float) * m->nparams;
    memcpy(st, p, sizeof *st);
    memcpy(m->params, p += sizeof *st, n);
    memcpy(o->m, p += n, n);
    if (moments(o) == 2)
        memcpy(o->v, p + n, n);
    m->rng = st->rng;
    o->t = st->optim_t;
}

static uint32_t crc_of(const void *blob, size_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t off = 0; off < len;) { /* crc32 takes at most a uInt at a time */
        size_t chunk = len - off < (1u << 30) ? len - off : (1u << 30);
        crc = crc32(crc, (const Bytef *)blob + off, (uInt)chunk);
        off += chunk;
    }
    return (uint32_t)crc;
}

static int write_all(int fd, const void *buf, size_t len)
{
    for (const char *p = buf; len;) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w, len -= (size_t)w;
    }
    return 0;
}

int ckpt_write(const char *path, const void *blob, size_t len, char *err, size_t errlen)
{
    char tmp[4096], dir[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    snprintf(dir, sizeof dir, "%s", path);
    struct file_header h = {MAGIC, VERSION, crc_of(blob, len), len};
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write_all(fd, &h, sizeof h) || write_all(fd, blob, len) || fsync(fd)) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        return -1;
    }
    if (close(fd) || rename(tmp, path)) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the rename, durable */
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

int ckpt_read(const char *path, void *blob, size_t len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    struct file_header h;
    const char *why = NULL;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, MAGIC, sizeof h.magic))
        why = "not a collie train checkpoint";
    else if (h.version != VERSION)
        why = "a checkpoint of another version of collie train";
    else if (h.bytes != len)
        why = "a checkpoint of another model or optimizer (its size differs)";
    else if (fread(blob, 1, len, f) != len || crc_of(blob, len) != h.crc)
        why = "damaged: truncated, or its CRC-32 does not match";
    fclose(f);
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    return 0;
}
