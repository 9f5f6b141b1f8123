/* SPDX-License-Identifier: BSD-3-Clause */
/* util.c - fuzz.h's helpers. */
#define _GNU_SOURCE /* memfd_create */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = 0;
    }
    return s;
}

int fuzz_file(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("collie-fuzz", 0);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

int fuzz_args(const uint8_t *data, size_t size, const char *prog, char **argv, int max, char **buf)
{
    *buf = malloc(size + 1);
    if (!*buf)
        return 0;
    memcpy(*buf, data, size);
    (*buf)[size] = 0;
    int argc = 0;
    argv[argc++] = (char *)prog;
    for (char *p = *buf; p < *buf + size && argc <= max;) {
        argv[argc++] = p;
        p += strlen(p) + 1;
    }
    argv[argc] = NULL;
    return argc;
}

void fuzz_quiet(void) { setenv("COLLIE_DEBUG", "NONE", 0); }

void fuzz_quiet_stderr(void)
{
    static FILE *null;
    if (!null && (null = fopen("/dev/null", "w")))
        stderr = null;
}
