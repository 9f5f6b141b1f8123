/* SPDX-License-Identifier: BSD-3-Clause */
/* status.h - collie_status for logs (the public header has the messages). */
#ifndef COLLIE_STATUS_H
#define COLLIE_STATUS_H

#include "collie.h"

/* "COLLIE_ERR_TIMEOUT", ...: the enumerator's name, for logs; never NULL. */
const char *collie__status_name(collie_status status);

#endif
