/* SPDX-License-Identifier: BSD-3-Clause */
/* sock.c - TCP helpers for the bootstrap: connect with retry, I/O under a deadline. */
#define _GNU_SOURCE
#include "sock.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

int collie__sock_wait(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = collie__now_ns();
        if (now >= deadline_ns) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, events, 0};
        int r = poll(&p, 1, collie__poll_ms(now, deadline_ns, 60000));
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

static void tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static struct addrinfo *resolve(const char *host, int port, int passive, char *err, size_t errlen)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = passive ? AI_PASSIVE : 0};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(rc));
        errno = EINVAL;
        return NULL;
    }
    return res;
}

int collie__sock_listen(const char *host, int port, int *fd, char *err, size_t errlen)
{
    struct addrinfo *res = resolve(host, port, 1, err, errlen), *ai;
    if (!res)
        return -1;
    int saved = 0;
    for (ai = res; ai; ai = ai->ai_next) {
        int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (s < 0) {
            saved = errno; /* out of descriptors: say so, not "Success" */
            continue;
        }
        int one = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(s, ai->ai_addr, ai->ai_addrlen) == 0 && listen(s, 1024) == 0) {
            freeaddrinfo(res);
            *fd = s;
            return 0;
        }
        saved = errno;
        close(s);
    }
    freeaddrinfo(res);
    snprintf(err, errlen, "cannot listen on %s:%d: %s", host, port, strerror(saved));
    errno = saved;
    return -1;
}

static int connect_once(const struct addrinfo *ai, uint64_t deadline_ns)
{
    int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (s < 0)
        return -1;
    if (connect(s, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS || collie__sock_wait(s, POLLOUT, deadline_ns) != 0) {
            int e = errno;
            close(s);
            errno = e;
            return -1;
        }
        int soerr = 0;
        socklen_t len = sizeof soerr;
        getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &len);
        if (soerr) {
            close(s);
            errno = soerr;
            return -1;
        }
    }
    fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
    tune(s);
    return s;
}

int collie__sock_connect(const char *host, int port, uint64_t deadline_ns, int *fd, char *err,
                         size_t errlen)
{
    struct addrinfo *res = resolve(host, port, 0, err, errlen);
    if (!res)
        return -1;
    /* Rank 0 may start last: retry refused connections with a growing pause. */
    uint64_t pause_ns = 1000000;
    int last = ETIMEDOUT;
    while (collie__now_ns() < deadline_ns) {
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
            int s = connect_once(ai, deadline_ns);
            if (s >= 0) {
                freeaddrinfo(res);
                *fd = s;
                return 0;
            }
            last = errno;
        }
        struct timespec ts = {0, (long)pause_ns};
        nanosleep(&ts, NULL);
        if (pause_ns < 100000000)
            pause_ns *= 2;
    }
    freeaddrinfo(res);
    snprintf(err, errlen, "cannot reach %s:%d before COLLIE_TIMEOUT: %s", host, port,
             strerror(last));
    errno = ETIMEDOUT;
    return -1;
}

int collie__sock_connect_once(const char *host, int port, uint64_t deadline_ns, int *fd)
{
    char err[256];
    struct addrinfo *res = resolve(host, port, 0, err, sizeof err);
    if (!res) {
        errno = EINVAL;
        return -1;
    }
    int s = connect_once(res, deadline_ns), saved = errno;
    freeaddrinfo(res);
    if (s < 0) {
        errno = saved;
        return -1;
    }
    *fd = s;
    return 0;
}

/* "address:port" of one end of fd: the other (peer) or this one. */
static void end_name(int fd, int peer, char *name, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
    if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&ss, &sl) == 0)
        getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(name, len, "%s:%s", host, port);
}

void collie__sock_peer_name(int fd, char *name, size_t len) { end_name(fd, 1, name, len); }

void collie__sock_local_name(int fd, char *name, size_t len) { end_name(fd, 0, name, len); }

int collie__sock_accept_ready(int listen_fd, int *fd)
{
    for (;;) {
        int s = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (s >= 0) {
            tune(s);
            *fd = s;
            return 0;
        }
        if (errno == ECONNABORTED || errno == EINTR)
            continue; /* that one is gone; there may be another */
        return -1;
    }
}

int collie__sock_send(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
    const char *p = buf;
    while (len) {
        if (collie__sock_wait(fd, POLLOUT, deadline_ns) != 0)
            return -1;
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            if (errno == EPIPE)
                errno = ECONNRESET;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int collie__sock_recv(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
    char *p = buf;
    while (len) {
        if (collie__sock_wait(fd, POLLIN, deadline_ns) != 0)
            return -1;
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int collie__sock_if_addr(const char *prefix, char *host, size_t len, char *names, size_t names_len)
{
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0)
        return -1;
    size_t used = 0;
    names[0] = 0;
    for (i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        int match = *prefix ? !strncmp(i->ifa_name, prefix, strlen(prefix))
                            : (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK);
        if (match) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, host,
                      (socklen_t)len);
            freeifaddrs(ifs);
            return 0;
        }
        if (used < names_len)
            used += (size_t)snprintf(names + used, names_len - used, "%s%s", used ? ", " : "",
                                     i->ifa_name);
    }
    freeifaddrs(ifs);
    return -1;
}

int collie__sock_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char port[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
        getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, port, sizeof port, NI_NUMERICSERV) != 0)
        return -1;
    return atoi(port);
}
