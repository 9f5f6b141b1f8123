/* status.c - names and messages of collie_status, and the library version. */
#include "collie.h"

#define COLLIE_STR2(x) #x
#define COLLIE_STR(x) COLLIE_STR2(x)

static const char *const status_message[] = {
    [COLLIE_OK] = "success",
    [COLLIE_ERR_INVALID_ARG] = "invalid argument: collie_last_error() names the argument and "
                               "the allowed range",
    [COLLIE_ERR_SYSTEM] = "a system call failed: collie_last_error() names the call and errno",
    [COLLIE_ERR_TIMEOUT] = "timed out waiting for a peer: check that every rank makes the same "
                           "calls, or raise COLLIE_TIMEOUT if the job is only slow",
    [COLLIE_ERR_PEER_LOST] = "a peer rank exited or became unreachable: look at that rank's "
                             "output (collie_last_error() names it)",
    [COLLIE_ERR_MISMATCH] = "ranks called different collectives, or the same one with different "
                            "count/dtype/op/root: collie_last_error() shows both sides",
    [COLLIE_ERR_NOMEM] = "out of memory",
    [COLLIE_ERR_AUTH] = "authentication failed: a peer could not prove it knows COLLIE_TOKEN",
    [COLLIE_ERR_UNSUPPORTED] = "not supported by this build or configuration: "
                               "collie_last_error() says what is missing",
    [COLLIE_ERR_INTERNAL] = "internal error in collie: please report it with the output of "
                            "COLLIE_DEBUG=INFO",
};

static const char *const status_name[] = {
    [COLLIE_OK] = "COLLIE_OK",
    [COLLIE_ERR_INVALID_ARG] = "COLLIE_ERR_INVALID_ARG",
    [COLLIE_ERR_SYSTEM] = "COLLIE_ERR_SYSTEM",
    [COLLIE_ERR_TIMEOUT] = "COLLIE_ERR_TIMEOUT",
    [COLLIE_ERR_PEER_LOST] = "COLLIE_ERR_PEER_LOST",
    [COLLIE_ERR_MISMATCH] = "COLLIE_ERR_MISMATCH",
    [COLLIE_ERR_NOMEM] = "COLLIE_ERR_NOMEM",
    [COLLIE_ERR_AUTH] = "COLLIE_ERR_AUTH",
    [COLLIE_ERR_UNSUPPORTED] = "COLLIE_ERR_UNSUPPORTED",
    [COLLIE_ERR_INTERNAL] = "COLLIE_ERR_INTERNAL",
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
