/* SPDX-License-Identifier: BSD-3-Clause */
/* log.h - leveled logging to stderr, filtered by COLLIE_DEBUG. */
#ifndef COLLIE_LOG_H
#define COLLIE_LOG_H

enum collie__log_level { COLLIE_LOG_NONE, COLLIE_LOG_WARN, COLLIE_LOG_INFO, COLLIE_LOG_TRACE };

/* Sets the rank shown in every line of this process ("-1" before init knows it). */
void collie__log_set_rank(int rank);

/*
 * Sets the level (config.c does, from COLLIE_DEBUG, before it warns about
 * anything).  Logging never reads the configuration itself: the
 * configuration logs while it loads.
 */
void collie__log_set_level(enum collie__log_level level);

/* Whether a message of this level would be printed. */
int collie__log_enabled(enum collie__log_level level);

/* Prints "collie[rank R] LEVEL subsys: message" to stderr when enabled. */
void collie__log(enum collie__log_level level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define COLLIE_WARN(subsys, ...) collie__log(COLLIE_LOG_WARN, subsys, __VA_ARGS__)
#define COLLIE_INFO(subsys, ...)                                                                   \
    do {                                                                                           \
        if (collie__log_enabled(COLLIE_LOG_INFO))                                                  \
            collie__log(COLLIE_LOG_INFO, subsys, __VA_ARGS__);                                     \
    } while (0)
#define COLLIE_TRACE(subsys, ...)                                                                  \
    do {                                                                                           \
        if (collie__log_enabled(COLLIE_LOG_TRACE))                                                 \
            collie__log(COLLIE_LOG_TRACE, subsys, __VA_ARGS__);                                    \
    } while (0)

#endif
