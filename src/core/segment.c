/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * segment.c - memfd segments shared between the processes of one host.
 */
#define _GNU_SOURCE
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int collie__seg_create(const char *name, size_t bytes, struct collie__seg *seg)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return errno;
    struct stat st;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)bytes) == 0 &&
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0 &&
        fstat(fd, &st) == 0)
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        close(fd);
        return err;
    }
    *seg = (struct collie__seg){
        .base = p, .bytes = bytes, .file_size = bytes, .ino = (uint64_t)st.st_ino, .fd = fd};
    return 0;
}

void collie__seg_path(int pid, long long fd, char path[COLLIE__SEG_PATH_LEN])
{
    snprintf(path, COLLIE__SEG_PATH_LEN, "/proc/%d/fd/%lld", pid, fd);
}

int collie__seg_open_peer(int pid, long long fd, struct collie__seg *seg)
{
    if (pid <= 0 || fd < 0)
        return EINVAL;
    char path[COLLIE__SEG_PATH_LEN];
    collie__seg_path(pid, fd, path);
    int f = open(path, O_RDWR | O_CLOEXEC);
    if (f < 0)
        return errno;
    struct stat st;
    if (fstat(f, &st) != 0) {
        int err = errno;
        close(f);
        return err;
    }
    *seg =
        (struct collie__seg){.file_size = (size_t)st.st_size, .ino = (uint64_t)st.st_ino, .fd = f};
    return 0;
}

int collie__seg_map(struct collie__seg *seg, size_t bytes, int writable)
{
    int err = 0;
    void *p = MAP_FAILED;
    if (bytes == 0 || bytes > seg->file_size)
        err = EINVAL;
    else {
        int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
        p = mmap(NULL, bytes, prot, MAP_SHARED, seg->fd, 0);
        if (p == MAP_FAILED)
            err = errno;
    }
    close(seg->fd);
    seg->fd = -1;
    if (err)
        return err;
    seg->base = p;
    seg->bytes = bytes;
    return 0;
}

void collie__seg_close(struct collie__seg *seg)
{
    if (seg->base)
        munmap(seg->base, seg->bytes);
    if (seg->fd >= 0)
        close(seg->fd);
    *seg = COLLIE__SEG_NONE;
}
