/*
 * api.h - what the public calls of src/api/ share: the description of the
 * last failure that had no communicator to hold it.
 */
#ifndef COLLIE_API_INTERNAL_H
#define COLLIE_API_INTERNAL_H

#include "../core/comm.h"

/* Describes a failure without a communicator (collie_last_error(NULL) shows it). */
void collie__api_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Refuses a call with INVALID_ARG: on comm (its last error, "CALL on rank R:
 * why"), or without one (collie_last_error(NULL), "collie_CALL: why").
 */
collie_status collie__refuse(collie_comm *comm, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* collie_get_unique_id with rank 0 listening on host (NULL: the default address). */
collie_status collie__get_unique_id_at(collie_unique_id *id, const char *host);

#endif
