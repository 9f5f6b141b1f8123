/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uid.c - drawing unique ids (uid.h) and keeping their listeners until
 * rank 0 adopts them.
 */
#define _GNU_SOURCE
#include "uid.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "config.h"
#include "sock.h"

#define UID_MAGIC 0x434c5549u /* "CLUI" */
#define UID_VERSION 1

/* Listeners drawn in this process and not yet adopted, keyed by their token. */
struct held {
    unsigned char token[COLLIE_UID_TOKEN_BYTES];
    int fd;
    struct held *next;
};
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held *held;

/*
 * The tokens of the last SPENT_KEPT ids rank 0 used in this process, so a
 * stale id is refused; a ring, so a process that splits for ever holds no
 * more than this.
 */
#define SPENT_KEPT 256
static unsigned char spent[SPENT_KEPT][COLLIE_UID_TOKEN_BYTES];
static unsigned long nspent;

static int default_host(char *host, size_t len, char *err, size_t errlen)
{
    const char *ifname = collie__config_string(COLLIE_CFG_SOCKET_IFNAME);
    char names[256];
    if (!collie__sock_if_addr(ifname, host, len, names, sizeof names))
        return 0;
    if (*ifname) {
        snprintf(err, errlen,
                 "COLLIE_SOCKET_IFNAME='%s': no IPv4 interface of that name (there are: %s)",
                 ifname, names);
        return -1;
    }
    snprintf(host, len, "127.0.0.1"); /* no network: a job of this host only */
    return 0;
}

int collie__uid_draw(struct collie__uid *u, const char *host, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    u->magic = UID_MAGIC;
    u->version = UID_VERSION;
    if (host)
        snprintf(u->host, sizeof u->host, "%s", host);
    else if (default_host(u->host, sizeof u->host, err, errlen) != 0)
        return -1;
    if (getrandom(u->token, sizeof u->token, 0) != (ssize_t)sizeof u->token) {
        snprintf(err, errlen, "getrandom failed: no fresh secret for the id");
        return -1;
    }
    struct held *h = malloc(sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int port;
    if (collie__sock_listen(u->host, 0, &h->fd, err, errlen) != 0 ||
        (port = collie__sock_port(h->fd)) < 0) {
        free(h);
        return -1;
    }
    u->port = (uint16_t)port;
    memcpy(h->token, u->token, sizeof h->token);
    pthread_mutex_lock(&held_lock);
    h->next = held;
    held = h;
    pthread_mutex_unlock(&held_lock);
    return 0;
}

int collie__uid_valid(const struct collie__uid *u)
{
    return u->magic == UID_MAGIC && u->version == UID_VERSION && u->port &&
           memchr(u->host, 0, sizeof u->host) && u->host[0];
}

int collie__uid_take_listener(const struct collie__uid *u)
{
    int fd = -1;
    pthread_mutex_lock(&held_lock);
    for (unsigned long i = 0; i < nspent && i < SPENT_KEPT; i++)
        if (!memcmp(spent[i], u->token, sizeof u->token))
            fd = -2;
    struct held **p = &held;
    while (fd == -1 && *p && memcmp((*p)->token, u->token, sizeof u->token))
        p = &(*p)->next;
    if (fd == -1 && *p) { /* adopted: from now on it is spent */
        struct held *h = *p;
        *p = h->next;
        fd = h->fd;
        free(h);
    }
    if (fd != -2)
        memcpy(spent[nspent++ % SPENT_KEPT], u->token, sizeof u->token);
    pthread_mutex_unlock(&held_lock);
    return fd;
}

void collie__uid_token_text(const struct collie__uid *u, char *out, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (size_t i = 0; i < sizeof u->token && n + 2 < len; i++) {
        out[n++] = hex[u->token[i] >> 4];
        out[n++] = hex[u->token[i] & 15];
    }
    out[n] = 0;
}
