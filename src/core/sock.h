/* SPDX-License-Identifier: BSD-3-Clause */
/* sock.h - blocking TCP helpers where every call has a deadline. */
#ifndef COLLIE_SOCK_H
#define COLLIE_SOCK_H

#include <stddef.h>
#include <stdint.h>

/*
 * Each returns 0, or -1 with errno set (ETIMEDOUT past deadline_ns,
 * ECONNRESET when the peer closed) and, where given, err describing the failure.
 */
int collie__sock_listen(const char *host, int port, int *fd, char *err, size_t errlen);
int collie__sock_connect(const char *host, int port, uint64_t deadline_ns, int *fd, char *err,
                         size_t errlen);
/*
 * One attempt, no retry: a refused connection fails at once with errno
 * ECONNREFUSED (nobody listens there: for a peer's listener, proof that its
 * process is gone), an unanswered one with ETIMEDOUT at deadline_ns.
 */
int collie__sock_connect_once(const char *host, int port, uint64_t deadline_ns, int *fd);
/*
 * Accepts one connection waiting on a non-blocking listener, without
 * waiting: 0 with *fd (blocking, close-on-exec, TCP_NODELAY), or -1 with
 * errno EAGAIN when none is waiting (gate.h waits on the listener).
 */
int collie__sock_accept_ready(int listen_fd, int *fd);
/* "address:port" of the other end of fd, or of this end, for logs. */
void collie__sock_peer_name(int fd, char *name, size_t len);
void collie__sock_local_name(int fd, char *name, size_t len);
/* Waits until fd is ready for events (POLLIN, POLLOUT): 0, or -1 (ETIMEDOUT past deadline_ns). */
int collie__sock_wait(int fd, short events, uint64_t deadline_ns);
int collie__sock_send(int fd, const void *buf, size_t len, uint64_t deadline_ns);
int collie__sock_recv(int fd, void *buf, size_t len, uint64_t deadline_ns);

/*
 * The first IPv4 address of the interface whose name starts with prefix, or
 * (prefix "") of the first interface that is up and not loopback, as
 * numeric text.  Returns 0, or -1 with the interfaces there are in names.
 */
int collie__sock_if_addr(const char *prefix, char *host, size_t len, char *names, size_t names_len);

/* The local port a socket is bound to, or -1. */
int collie__sock_port(int fd);

#endif
