/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * segment.h - memory that the ranks of one host map from each other: a
 * memfd that its owner keeps open, reached by a peer through
 * /proc/<pid>/fd/<fd>.  The host's transport segment, collie_mem_alloc's
 * buffers and their table, and the windows' boxes are all made here.
 */
#ifndef COLLIE_SEGMENT_H
#define COLLIE_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

struct collie__seg {
    void *base;       /* the mapping, or NULL */
    size_t bytes;     /* mapped bytes */
    size_t file_size; /* the file's size when it was made or opened */
    uint64_t ino;     /* the file's inode: tells a segment from a later one in the same fd slot */
    int fd;           /* open descriptor, or -1 */
};

#define COLLIE__SEG_NONE ((struct collie__seg){.fd = -1})
/* Room for "/proc/<pid>/fd/<fd>" and its NUL. */
#define COLLIE__SEG_PATH_LEN 48

/*
 * Creates a zeroed segment of `bytes`, mapped read-write, its size sealed
 * (no process can shrink it under a peer's mapping), its fd kept open for
 * peers to reach.  `name` shows in /proc/<pid>/fd.  Returns 0, or an errno
 * value with nothing left open and *seg unchanged.
 */
int collie__seg_create(const char *name, size_t bytes, struct collie__seg *seg);

/*
 * Opens the segment that process pid holds as fd: on success seg->fd,
 * file_size and ino are set and nothing is mapped yet.  Returns 0, or an
 * errno value (ENOENT: the process or the fd is gone; EACCES: another
 * user's, or another PID namespace's) with nothing left open.
 */
int collie__seg_open_peer(int pid, long long fd, struct collie__seg *seg);

/*
 * Maps the first `bytes` of an opened segment, read-write or read-only, and
 * closes its fd: the mapping keeps the memory.  Returns 0, or an errno value
 * with the fd closed and nothing mapped (EINVAL when the file is shorter
 * than `bytes`).
 */
int collie__seg_map(struct collie__seg *seg, size_t bytes, int writable);

/* Unmaps and closes whatever *seg holds, and leaves it COLLIE__SEG_NONE. */
void collie__seg_close(struct collie__seg *seg);

/* "/proc/<pid>/fd/<fd>", for messages. */
void collie__seg_path(int pid, long long fd, char path[COLLIE__SEG_PATH_LEN]);

#endif
