/* SPDX-License-Identifier: BSD-3-Clause */
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
 * receives, one message at a time.  In-neighbours on the same host skip the
 * messages for their deposits and gets: they write into, and read from, the
 * owner's segment in shared memory (window_shm.c).
 */
#ifndef COLLIE_WINDOW_H
#define COLLIE_WINDOW_H

#include <pthread.h>
#include <stdatomic.h>

#include "../core/op.h"
#include "../transport/wire.h"

enum collie__win_kind { COLLIE_WIN_PUT = 1, COLLIE_WIN_ACC, COLLIE_WIN_GET, COLLIE_WIN_FENCE };

#define COLLIE_WIN_MAGIC 0x57494e31u /* "WIN1" */

struct collie__win_msg {
    uint32_t magic, kind;
    double weight;  /* a deposit's (scaled) associated weight; a reply's published one */
    uint64_t count; /* of the window: both ends must agree */
    uint64_t pad;
};
_Static_assert(sizeof(struct collie__win_msg) == 32, "a window message header is 32 bytes");

/* A box of a window's segment: a value and its weight, under a lock between processes. */
struct collie__win_box {
    _Atomic uint32_t lock;
    uint32_t pad;
    uint64_t version; /* deposits so far */
    double weight;
    unsigned char pad2[40];
    /* the data follow */
};
_Static_assert(sizeof(struct collie__win_box) == 64, "a box's header is a cache line");

static inline unsigned char *collie__win_box_data(struct collie__win_box *b)
{
    return (unsigned char *)(b + 1);
}

struct collie__win_shm;

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
    /* Fixed at creation: the neighbours on other hosts, reached by messages. */
    int nremote_out, nremote_in;
    int *remote_out; /* their index k among the out-neighbours */
    int *remote_in;  /* their index d among the in-neighbours */
    /* The caller's scratch, one entry per neighbour: a call's peers, their weights, transfers. */
    int *peers;
    double *peer_w;
    double *ones; /* 1 per in-neighbour: collect's weights */
    struct collie__xfer *xfers;
    struct collie__win_msg *msgs;
    unsigned char *boxes; /* the front and back buffers of the in-neighbours on other hosts */
    struct collie__win_shm *shm; /* the published value, the local in-neighbours' boxes */

    /*
     * Under lock: the mailboxes of in-neighbours on other hosts, what the
     * thread saw.  A local in-neighbour's mailbox is its box (front[d] is
     * the box's data; its weight and count are the box's).
     */
    pthread_mutex_t lock;
    pthread_cond_t changed;        /* a fence marker arrived, or the thread stopped */
    unsigned char **front, **back; /* per in-neighbour: the mailbox, and the next deposit */
    double *front_p;
    unsigned long long *deposits, *fences;
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

/*
 * What every call checks (window.c): win given, not failed (the thread's
 * failure or the communicator's, sticky), buf given when needs_buf.
 */
collie_status collie__win_usable(collie_win *win, const char *call, const void *buf, int needs_buf);

/* Sets this rank's published value (buf, or zeros) with its weight. */
collie_status collie__win_publish(collie_win *win, const void *buf);

/*
 * Sends m to each of the n peers (window_data.c), with data after it for a
 * deposit (scaled by weights[k], NULL: as is); the messages of one batch
 * first, then its data, so that no ring holds parts of two messages.  Uses
 * the caller's scratch: the caller's thread only.
 */
collie_status collie__win_send(collie_win *win, const int *peers, int n, struct collie__win_msg *m,
                               const void *data, const double *weights);

/* Index of global rank r in list (n entries), or -1. */
int collie__win_find(const int *list, int n, int r);

/*
 * The segments (window_shm.c): collective over win->comm; maps this rank's
 * and its local neighbours'.  close is safe after a failed open.
 */
collie_status collie__win_shm_open(collie_win *win, const collie_topology *topo);
void collie__win_shm_close(collie_win *win);
/* This rank's published value. */
struct collie__win_box *collie__win_box_published(const collie_win *win);
/* In-neighbour d's box here; NULL when d is on another host. */
struct collie__win_box *collie__win_box_in(const collie_win *win, int d);
/* This rank's box at out-neighbour k; NULL when k is on another host. */
struct collie__win_box *collie__win_box_at(const collie_win *win, int k);
/* In-neighbour d's published value; NULL when d is on another host. */
struct collie__win_box *collie__win_box_theirs(const collie_win *win, int d);
/* Takes a box's lock within COLLIE_TIMEOUT (else fails win's communicator with TIMEOUT). */
collie_status collie__win_box_lock(collie_win *win, struct collie__win_box *b);
void collie__win_box_unlock(struct collie__win_box *b);

/* Starts the service thread (window_service.c); a failure to start is returned. */
collie_status collie__win_service_start(collie_win *win);

/* Stops it and waits for it (safe if it never started). */
void collie__win_service_stop(collie_win *win);

#endif
