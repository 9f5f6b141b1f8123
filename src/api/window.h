/*
 * window.h - a one-sided neighbour window (collie.h's collie_win): the
 * state its public calls (window.c) and its service thread
 * (window_service.c) share.
 *
 * Messages, all on the window's own communicator:
 * - a caller's deposit (put, accumulate), get request or fence marker: a
 *   struct collie__win_msg on the user channel, a deposit's data after it
 *   as a second message; the owner's service thread receives them;
 * - the reply to a get: the published value and its struct collie__win_msg
 *   as one message on the collective channel, from the service thread to
 *   the caller that asked.
 * On each pair, direction and channel only one thread sends and one
 * receives, one message at a time.
 */
#ifndef COLLIE_WINDOW_H
#define COLLIE_WINDOW_H

#include <pthread.h>
#include <stdatomic.h>

#include "../core/op.h"

enum collie__win_kind { COLLIE_WIN_PUT = 1, COLLIE_WIN_ACC, COLLIE_WIN_GET, COLLIE_WIN_FENCE };

#define COLLIE_WIN_MAGIC 0x57494e31u /* "WIN1" */

struct collie__win_msg {
    uint32_t magic, kind;
    double weight;  /* a deposit's (scaled) associated weight; a reply's published one */
    uint64_t count; /* of the window: both ends must agree */
    uint64_t pad;
};
_Static_assert(sizeof(struct collie__win_msg) == 32, "a window message header is 32 bytes");

struct collie_win {
    collie_comm *comm; /* the window's own */
    size_t count, bytes;
    collie_dtype dtype;
    int nin, nout, nlisten;
    int *in, *out; /* in- and out-neighbours (global ranks of comm) */
    int *listen;   /* whom the service thread hears: in- and out-neighbours, once each */
    double *in_w;  /* the topology's weights */
    double self_w;
    double p;             /* this rank's associated weight (the caller's) */
    unsigned char *stage; /* the caller's scaled deposit */
    unsigned char *boxes; /* the block of every front and back buffer */

    /* Under lock: the mailboxes, the published value, what the thread saw. */
    pthread_mutex_t lock;
    pthread_cond_t changed;        /* a fence marker arrived, or the thread stopped */
    unsigned char **front, **back; /* per in-neighbour: the mailbox, and the next deposit */
    double *front_p;
    unsigned long long *deposits, *fences;
    unsigned char *published;  /* count elements, then a struct collie__win_msg (get's reply) */
    unsigned long long fenced; /* fences this rank has made */
    collie_status failed;      /* the thread's, sticky */
    int running;               /* the thread is serving */

    pthread_t thread;
    int started;                /* the thread exists (the caller's) */
    _Atomic int stop;           /* the caller asks the thread to end */
    _Atomic int caller_waiting; /* the caller waits for the thread: it may poll */
};

/* The descriptors of a window's messages: headers, data, get replies. */
struct collie__op_desc collie__win_desc(const collie_win *win, int what);
enum { COLLIE_WIN_DESC_MSG, COLLIE_WIN_DESC_DATA, COLLIE_WIN_DESC_REPLY };

/* Index of global rank r in list (n entries), or -1. */
int collie__win_find(const int *list, int n, int r);

/* Starts the service thread (window_service.c); a failure to start is returned. */
collie_status collie__win_service_start(collie_win *win);

/* Stops it and waits for it (safe if it never started). */
void collie__win_service_stop(collie_win *win);

#endif
