/*
 * api.h - what the public calls of src/api/ share: the description of the
 * last failure that had no communicator to hold it.
 */
#ifndef COLLIE_API_INTERNAL_H
#define COLLIE_API_INTERNAL_H

#include "../core/comm.h"

/* Describes a failure without a communicator (collie_last_error(NULL) shows it). */
void collie__api_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
