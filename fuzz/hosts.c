/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hosts.c - `collie run`'s host list (-H) and hostfile (--hostfile), and
 * the shell command line that starts a rank on a remote host
 * (tools/hosts.c).  The first input byte picks list or file.
 *
 * The promises: a list that parses names hosts of 1..255 bytes with 1..4096
 * slots, which the ranks fill in order; and the remote command, read back
 * as sh reads single-quoted words, gives exactly the directory, environment
 * and arguments it was given (no host name or argument can inject a shell
 * command).
 */
#include <string.h>
#include <unistd.h>

#include "../tools/hosts.h"
#include "fuzz.h"

/* Reads one sh single-quoted word ('...' pieces joined by \') at *p into out. */
static int unquote(const char **p, char *out, size_t len)
{
    size_t n = 0;
    const char *s = *p;
    if (*s != '\'')
        return -1;
    for (;;) {
        s++; /* the opening quote */
        const char *close = strchr(s, '\'');
        if (!close || n + (size_t)(close - s) + 1 > len)
            return -1;
        memcpy(out + n, s, (size_t)(close - s));
        n += (size_t)(close - s);
        s = close + 1;
        if (strncmp(s, "\\''", 3))
            break;
        out[n++] = '\'';
        s += 2; /* \' then the next piece's opening quote */
    }
    out[n] = 0;
    *p = s;
    return 0;
}

static void remote_command(const struct host_list *l)
{
    char *args[8] = {0};
    int n = 0;
    for (int h = 0; h < l->n && n < 7; h++)
        args[n++] = l->host[h].name;
    static char buf[1 << 16], word[1 << 12];
    char *env[1] = {n ? args[0] : "X=1"};
    if (hosts_remote_command(buf, sizeof buf, n ? args[n - 1] : "/tmp", env, 1, args) != 0)
        return;
    const char *p = buf;
    FUZZ_ASSERT(!strncmp(p, "exec 3<&0; cd ", 14));
    p += 14;
    FUZZ_ASSERT(unquote(&p, word, sizeof word) == 0 && !strcmp(word, n ? args[n - 1] : "/tmp"));
    FUZZ_ASSERT(!strncmp(p, " 2>/dev/null; env ", 18));
    p += 18;
    FUZZ_ASSERT(unquote(&p, word, sizeof word) == 0 && !strcmp(word, env[0]));
    for (int i = 0; i < n; i++) {
        FUZZ_ASSERT(*p++ == ' ');
        FUZZ_ASSERT(unquote(&p, word, sizeof word) == 0 && !strcmp(word, args[i]));
    }
    FUZZ_ASSERT(!strncmp(p, " </dev/null 3<&- & ", 19));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    fuzz_quiet_stderr(); /* the parsers explain on stderr what they refuse */
    struct host_list l = {0};
    int rc;
    if (data[0] & 1) {
        char path[64];
        int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
        if (fd < 0)
            return 0;
        rc = hosts_parse_file(&l, path);
        close(fd);
    } else {
        char *spec = fuzz_string(data + 1, size - 1);
        if (!spec)
            return 0;
        rc = hosts_parse_list(&l, spec);
        free(spec);
    }
    if (rc == 0) {
        int total = 0;
        for (int h = 0; h < l.n; h++) {
            size_t len = strlen(l.host[h].name);
            FUZZ_ASSERT(len >= 1 && len < sizeof l.host[h].name);
            FUZZ_ASSERT(l.host[h].slots >= 1 && l.host[h].slots <= 4096);
            total += l.host[h].slots;
        }
        FUZZ_ASSERT(total == l.total_slots);
        FUZZ_ASSERT(!l.n || hosts_of_rank(&l, total - 1) == l.n - 1);
        FUZZ_ASSERT(hosts_of_rank(&l, total) == -1);
        remote_command(&l);
    }
    hosts_free(&l);
    return 0;
}
