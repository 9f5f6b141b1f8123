/* SPDX-License-Identifier: BSD-3-Clause */
/* hosts.c - host lists and remote command lines for `collie run -H` (hosts.h). */
#define _GNU_SOURCE
#include "hosts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_local(const char *name)
{
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    return !strcmp(name, "localhost") || !strcmp(name, "127.0.0.1") || !strcmp(name, me);
}

static int add(struct host_list *l, const char *name, size_t len, int slots, const char *where)
{
    if (!len || len >= sizeof l->host->name || slots < 1 || slots > 4096) {
        fprintf(stderr, "collie run: bad host '%.*s' with %d slot(s) in %s\n", (int)len, name,
                slots, where);
        return -1;
    }
    struct host *h = realloc(l->host, sizeof *h * (size_t)(l->n + 1));
    if (!h)
        return -1;
    l->host = h;
    h = &l->host[l->n++];
    memcpy(h->name, name, len);
    h->name[len] = 0;
    h->slots = slots;
    h->local = is_local(h->name);
    l->total_slots += slots;
    return 0;
}

/* "name" or "name:N" */
static int add_item(struct host_list *l, const char *item, size_t len, const char *where)
{
    const char *colon = memchr(item, ':', len);
    int slots = 1;
    if (colon) {
        char *end;
        slots = (int)strtol(colon + 1, &end, 10);
        if (end != item + len)
            slots = -1;
    }
    return add(l, item, colon ? (size_t)(colon - item) : len, slots, where);
}

int hosts_parse_list(struct host_list *l, const char *spec)
{
    while (*spec) {
        size_t len = strcspn(spec, ",");
        if (add_item(l, spec, len, "-H") != 0)
            return -1;
        spec += len + (spec[len] == ',');
    }
    return 0;
}

int hosts_parse_file(struct host_list *l, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "collie run: cannot read hostfile %s\n", path);
        return -1;
    }
    char line[512];
    int rc = 0, lineno = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            continue;
        size_t len = strcspn(p, " \t\r\n");
        char where[600];
        snprintf(where, sizeof where, "%s line %d", path, lineno);
        const char *slots = strstr(p + len, "slots=");
        if (slots) {
            char *end;
            long n = strtol(slots + 6, &end, 10);
            rc = add(l, p, len, end == slots + 6 ? -1 : (int)n, where);
        } else {
            rc = add_item(l, p, len, where);
        }
    }
    fclose(f);
    if (rc == 0 && !l->n) {
        fprintf(stderr, "collie run: hostfile %s names no host\n", path);
        rc = -1;
    }
    return rc;
}

int hosts_of_rank(const struct host_list *l, int r)
{
    for (int h = 0; h < l->n; h++) {
        if (r < l->host[h].slots)
            return h;
        r -= l->host[h].slots;
    }
    return -1;
}

void hosts_free(struct host_list *l)
{
    free(l->host);
    *l = (struct host_list){0};
}

/* Appends s single-quoted for sh. */
static int quote(char *buf, size_t len, size_t *at, const char *s)
{
    if (*at + 3 > len)
        return -1;
    buf[(*at)++] = '\'';
    for (; *s; s++) {
        const char *piece = *s == '\'' ? "'\\''" : NULL;
        size_t n = piece ? 4 : 1;
        if (*at + n + 2 > len)
            return -1;
        memcpy(buf + *at, piece ? piece : s, n);
        *at += n;
    }
    buf[(*at)++] = '\'';
    buf[*at] = 0;
    return 0;
}

static int append(char *buf, size_t len, size_t *at, const char *s)
{
    size_t n = strlen(s);
    if (*at + n + 1 > len)
        return -1;
    memcpy(buf + *at, s, n + 1);
    *at += n;
    return 0;
}

int hosts_remote_command(char *buf, size_t len, const char *dir, char *const *env, int nenv,
                         char *const *argv)
{
    size_t at = 0;
    if (append(buf, len, &at, "exec 3<&0; cd ") || quote(buf, len, &at, dir) ||
        append(buf, len, &at, " 2>/dev/null; env"))
        return -1;
    for (int i = 0; i < nenv; i++)
        if (append(buf, len, &at, " ") || quote(buf, len, &at, env[i]))
            return -1;
    for (int i = 0; argv[i]; i++)
        if (append(buf, len, &at, " ") || quote(buf, len, &at, argv[i]))
            return -1;
    /*
     * The rank runs in the background; when the launcher's end of stdin closes, it is
     * stopped.  (sh gives background commands /dev/null as stdin: hence stdin kept as fd 3.)
     */
    return append(buf, len, &at,
                  " </dev/null 3<&- & p=$!; (cat <&3 >/dev/null; kill -TERM $p 2>/dev/null) & "
                  "w=$!; wait $p; s=$?; kill $w 2>/dev/null; exit $s");
}
