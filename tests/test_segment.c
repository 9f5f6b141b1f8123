/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_segment.c - the host's shared segments (core/segment.c): a segment
 * made in one process and mapped in another holds the same bytes both
 * ways; its size is sealed; a segment that is gone, too short or not
 * reachable fails with the errno the callers name in their messages.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/segment.h"
#include "test_util.h"

#define BYTES 12345u

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31u + seed);
}

static long mismatches(const unsigned char *p, size_t n, unsigned seed)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (unsigned char)(i * 31u + seed);
    return bad;
}

/* A segment of this process, reached again through /proc as a peer would. */
static void own_process(void)
{
    struct collie__seg a = COLLIE__SEG_NONE, b;
    CHECK(collie__seg_create("collie-test", BYTES, &a) == 0, "create: %s", strerror(errno));
    CHECK(a.base && a.fd >= 0 && a.bytes == BYTES && a.file_size == BYTES && a.ino,
          "created: base %p fd %d bytes %zu", a.base, a.fd, a.bytes);
    long nonzero = 0;
    for (size_t i = 0; i < BYTES; i++)
        nonzero += ((unsigned char *)a.base)[i] != 0;
    CHECK(nonzero == 0, "a new segment has %ld non-zero bytes", nonzero);

    CHECK(collie__seg_open_peer(getpid(), a.fd, &b) == 0, "open through /proc");
    CHECK(b.file_size == BYTES && b.ino == a.ino && !b.base, "opened: %zu bytes, ino %llu vs %llu",
          b.file_size, (unsigned long long)b.ino, (unsigned long long)a.ino);
    /* Nobody may shrink or grow it under a peer's mapping (a shrink would be a SIGBUS there). */
    CHECK(ftruncate(b.fd, 0) == -1 && errno == EPERM, "a shrink was not refused: %s",
          strerror(errno));
    CHECK(ftruncate(b.fd, 2 * BYTES) == -1 && errno == EPERM, "a growth was not refused");
    CHECK(collie__seg_map(&b, BYTES, 1) == 0 && b.fd == -1 && b.bytes == BYTES, "map");
    fill(a.base, BYTES, 7);
    CHECK(mismatches(b.base, BYTES, 7) == 0, "bytes written in one mapping differ in the other");
    fill(b.base, BYTES, 9);
    CHECK(mismatches(a.base, BYTES, 9) == 0, "and back");
    collie__seg_close(&b);
    CHECK(!b.base && b.fd == -1, "closed: base %p fd %d", b.base, b.fd);
    collie__seg_close(&b); /* twice is harmless */

    /* Read-only, and a part. */
    CHECK(collie__seg_open_peer(getpid(), a.fd, &b) == 0, "open again");
    CHECK(collie__seg_map(&b, 100, 0) == 0 && mismatches(b.base, 100, 9) == 0, "read-only map");
    collie__seg_close(&b);

    /* Longer than the file: EINVAL, and the fd is closed all the same. */
    CHECK(collie__seg_open_peer(getpid(), a.fd, &b) == 0, "open for a long map");
    CHECK(collie__seg_map(&b, BYTES + 1, 1) == EINVAL && b.fd == -1 && !b.base,
          "a map past the end: fd %d base %p", b.fd, b.base);
    CHECK(collie__seg_open_peer(getpid(), a.fd, &b) == 0, "open for an empty map");
    CHECK(collie__seg_map(&b, 0, 1) == EINVAL && b.fd == -1, "an empty map");

    /* Gone: an fd this process does not hold, a pid that is no process. */
    int fd = a.fd;
    collie__seg_close(&a);
    CHECK(collie__seg_open_peer(getpid(), fd, &b) == ENOENT, "a closed fd");
    CHECK(collie__seg_open_peer(0, 3, &b) == EINVAL && collie__seg_open_peer(1, -1, &b) == EINVAL,
          "bad pid or fd");
    char path[COLLIE__SEG_PATH_LEN];
    collie__seg_path(123, 45, path);
    CHECK(!strcmp(path, "/proc/123/fd/45"), "path %s", path);
}

/* A child makes the segment, the parent maps it: bytes travel both ways. */
static void two_processes(void)
{
    int to_parent[2], to_child[2];
    CHECK(pipe(to_parent) == 0 && pipe(to_child) == 0, "pipes");
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0) {
        struct collie__seg s;
        int fd = collie__seg_create("collie-test-child", BYTES, &s) == 0 ? s.fd : -1;
        if (fd >= 0)
            fill(s.base, BYTES, 3);
        char go;
        if (write(to_parent[1], &fd, sizeof fd) != sizeof fd || fd < 0 ||
            read(to_child[0], &go, 1) != 1)
            _exit(2);
        _exit(mismatches(s.base, BYTES, 5) == 0 ? 0 : 3);
    }
    int fd = -1;
    CHECK(read(to_parent[0], &fd, sizeof fd) == sizeof fd && fd >= 0, "the child's segment");
    struct collie__seg s;
    CHECK(collie__seg_open_peer(child, fd, &s) == 0, "open the child's segment: %s",
          strerror(errno));
    CHECK(collie__seg_map(&s, BYTES, 1) == 0, "map the child's segment");
    CHECK(mismatches(s.base, BYTES, 3) == 0, "the child's bytes");
    fill(s.base, BYTES, 5);
    CHECK(write(to_child[1], "g", 1) == 1, "go");
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the child saw the parent's bytes: status %d", status);
    /* The mapping outlives the process that made the segment. */
    CHECK(mismatches(s.base, BYTES, 5) == 0, "after the child left");
    collie__seg_close(&s);
    CHECK(collie__seg_open_peer(child, fd, &s) != 0, "a segment of a process that left");
}

int main(void)
{
    own_process();
    two_processes();
    printf("segment: ok\n");
    return 0;
}
