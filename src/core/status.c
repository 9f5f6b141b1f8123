/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status.c - names and messages of collie_status (from COLLIE_STATUS_MAP),
 * the version and the clock: the calls that need no communicator.
 */
#include "clock.h"
#include "status.h"

#define COLLIE_STR2(x) #x
#define COLLIE_STR(x) COLLIE_STR2(x)

static const char *const status_message[] = {
#define COLLIE_STATUS_MESSAGE(name, message) [name] = message,
    COLLIE_STATUS_MAP(COLLIE_STATUS_MESSAGE)
#undef COLLIE_STATUS_MESSAGE
};

static const char *const status_name[] = {
#define COLLIE_STATUS_NAME(name, message) [name] = #name,
    COLLIE_STATUS_MAP(COLLIE_STATUS_NAME)
#undef COLLIE_STATUS_NAME
};

const char *collie__status_name(collie_status status)
{
    if ((unsigned)status >= sizeof status_name / sizeof status_name[0])
        return "COLLIE_ERR_?";
    return status_name[status];
}

const char *collie_strerror(collie_status status)
{
    if ((unsigned)status >= sizeof status_message / sizeof status_message[0])
        return "unknown collie_status value";
    return status_message[status];
}

const char *collie_version(void)
{
    return COLLIE_STR(COLLIE_VERSION_MAJOR) "." COLLIE_STR(COLLIE_VERSION_MINOR) "." COLLIE_STR(
        COLLIE_VERSION_PATCH);
}

double collie_wtime(void) { return collie__now_s(); }
