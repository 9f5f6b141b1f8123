/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * timeline.c - `collie timeline FILE`: merges the per-rank traces that
 * COLLIE_TIMELINE=FILE wrote (FILE.rank0.json, FILE.rank1.json, ...) into
 * FILE, one trace with a row per rank, for chrome://tracing or Perfetto.
 * Each rank's file is a JSON array of events whose closing bracket may be
 * missing (a rank that died): the merge takes the events between the
 * brackets of each and joins them into one array.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

/* The events of one rank's file: its text between the first '[' and the last ']', trimmed. */
static char *events_of(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    for (size_t got; text && (got = fread(text + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *grown = realloc(text, cap *= 2);
            if (!grown)
                free(text);
            text = grown;
        }
    }
    fclose(f);
    if (!text)
        return NULL;
    size_t lo = 0, hi = n;
    while (lo < n && text[lo] != '[')
        lo++;
    lo++;
    while (hi > lo && (text[hi - 1] == ']' || text[hi - 1] == '\n' || text[hi - 1] == ' ' ||
                       text[hi - 1] == ','))
        hi--;
    if (lo > n)
        lo = hi = n;
    memmove(text, text + lo, hi - lo);
    *len = hi - lo;
    return text;
}

int collie_tool_timeline(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(argc == 2 && !strcmp(argv[1], "-h") ? stdout : stderr,
                "usage: collie timeline FILE\n"
                "  merges FILE.rank*.json (written by a job run with COLLIE_TIMELINE=FILE) into\n"
                "  FILE, one Chrome trace for chrome://tracing or https://ui.perfetto.dev\n");
        return argc == 2 && !strcmp(argv[1], "-h") ? 0 : 2;
    }
    const char *file = argv[1];
    char pattern[4200];
    snprintf(pattern, sizeof pattern, "%s.rank*.json", file);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0 || !g.gl_pathc) {
        fprintf(stderr,
                "collie timeline: no file matches %s (run the job with COLLIE_TIMELINE=%s)\n",
                pattern, file);
        return 1;
    }
    FILE *out = fopen(file, "w");
    if (!out) {
        perror(file);
        globfree(&g);
        return 1;
    }
    fputs("[\n", out);
    int first = 1, ok = 1;
    size_t events = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t len = 0;
        char *text = events_of(g.gl_pathv[i], &len);
        if (!text) {
            fprintf(stderr, "collie timeline: cannot read %s\n", g.gl_pathv[i]);
            ok = 0;
            continue;
        }
        if (len) {
            fputs(first ? "" : ",\n", out);
            fwrite(text, 1, len, out);
            first = 0;
            for (size_t k = 0; k < len; k++)
                events += text[k] == '\n';
            events++;
        }
        free(text);
    }
    fputs("\n]\n", out);
    ok &= fclose(out) == 0;
    printf("collie timeline: %zu ranks' files, about %zu events, into %s\n", g.gl_pathc, events,
           file);
    globfree(&g);
    return ok ? 0 : 1;
}
