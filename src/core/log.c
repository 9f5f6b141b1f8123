/* SPDX-License-Identifier: BSD-3-Clause */
/* log.c - leveled logging; one line per message, written with a single write(2). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int log_rank = -1;
static enum collie__log_level log_level = COLLIE_LOG_WARN;

void collie__log_set_rank(int rank) { log_rank = rank; }

void collie__log_set_level(enum collie__log_level level) { log_level = level; }

int collie__log_enabled(enum collie__log_level level) { return level <= log_level; }

void collie__log(enum collie__log_level level, const char *subsys, const char *fmt, ...)
{
    static const char *const names[] = {"NONE", "WARN", "INFO", "TRACE"};
    if (!collie__log_enabled(level))
        return;
    char line[1024];
    int n =
        snprintf(line, sizeof line, "collie[rank %d] %-5s %s: ", log_rank, names[level], subsys);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    /* One write keeps lines from different ranks whole on a shared terminal. */
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
    (void)ignored;
}
