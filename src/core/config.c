/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - parses the configuration table (config.h) once per process.
 * With identity.c (the launchers' variables, COLLIE_RANK/SIZE/... among
 * them), the only place in libcollie that reads the environment.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

enum config_type { INT, SIZE, SECONDS, STRING, LEVEL };

struct config_entry {
    const char *name;
    enum config_type type;
    const char *def;
    const char *doc;
};

static const struct config_entry table[COLLIE_CFG_COUNT] = {
#define COLLIE_CONFIG_ROW(id, type, def, doc) [COLLIE_CFG_##id] = {"COLLIE_" #id, type, def, doc},
    COLLIE_CONFIG_TABLE(COLLIE_CONFIG_ROW)
#undef COLLIE_CONFIG_ROW
};

static struct {
    const char *raw[COLLIE_CFG_COUNT]; /* the environment's text, or the default */
    int set[COLLIE_CFG_COUNT];         /* the environment gave it */
    long long i[COLLIE_CFG_COUNT];
    double d[COLLIE_CFG_COUNT];
    char error[256];
    int failed;
} cfg;

static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

static int parse_int(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* "4096", "256K", "1M", "2G" (powers of 1024). */
static int parse_size(const char *s, long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v > (1ull << 40) >> shift)
        return -1;
    *out = (long long)(v << shift);
    return 0;
}

static int parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || (*end && strcmp(end, "s")) || !(v > 0) || isinf(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_level(const char *s, long long *out)
{
    static const char *const names[] = {"NONE", "WARN", "INFO", "TRACE"};
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(s, names[i])) {
            *out = i;
            return 0;
        }
    return -1;
}

int collie__config_parse(enum collie__config_id id, const char *text, long long *i, double *d)
{
    *i = -1;
    *d = 0;
    if ((unsigned)id >= COLLIE_CFG_COUNT)
        return -1;
    if (!*text)
        return 0; /* unset identity entries */
    switch (table[id].type) {
    case INT: return parse_int(text, i);
    case SIZE: return parse_size(text, i);
    case SECONDS: return parse_seconds(text, d);
    case LEVEL: return parse_level(text, i);
    case STRING: return 0;
    }
    return -1;
}

static int parse_entry(int id, const char *s)
{
    return collie__config_parse((enum collie__config_id)id, s, &cfg.i[id], &cfg.d[id]);
}

static const char *type_hint(enum config_type t)
{
    switch (t) {
    case INT: return "an integer";
    case SIZE: return "a byte count such as 4096, 256K or 1M";
    case SECONDS: return "a positive number of seconds";
    case LEVEL: return "one of NONE, WARN, INFO, TRACE";
    case STRING: return "a string";
    }
    return "?";
}

/*
 * COLLIE_* variables that belong to the `collie` command (tools/), not to the
 * library: a rank started by `collie run` inherits them, and must not warn.
 */
static const char *const tool_variables[] = {
    "COLLIE_RSH",              /* collie run -H: how to reach a host */
    "COLLIE_BIND",             /* collie run --bind: pin ranks that outnumber the CPUs */
    "COLLIE_LIBRARY",          /* python/collie: the libcollie.so to load */
    "COLLIE_PYTHON",           /* collie bench --baseline torch: the interpreter */
    "COLLIE_BENCH_GLOO_STORE", /* collie bench --baseline gloo: the rendezvous files */
    "COLLIE_BENCH_PEERS",      /* collie bench --baseline impi,mpich,ompi5: where they are */
    "COLLIE_TORCH_ENV",        /* scripts/torch_env.sh: where the torch 2.x environment is */
};

static int is_tool_variable(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof tool_variables / sizeof tool_variables[0]; i++)
        if (strlen(tool_variables[i]) == len && !strncmp(tool_variables[i], name, len))
            return 1;
    /* COLLIE_TEST_* belongs to the test suite. */
    return !strncmp(name, "COLLIE_TEST_", 12);
}

static void warn_unknown(void)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "COLLIE_", 7))
            continue;
        size_t len = strcspn(*e, "=");
        int known = 0;
        for (int id = 0; id < COLLIE_CFG_COUNT && !known; id++)
            known = strlen(table[id].name) == len && !strncmp(table[id].name, *e, len);
        if (!known && !is_tool_variable(*e, len))
            COLLIE_WARN("config", "unknown variable %.*s is ignored (see `collie info --config`)",
                        (int)len, *e);
    }
}

static void load_once(void)
{
    for (int id = 0; id < COLLIE_CFG_COUNT; id++) {
        const char *env = getenv(table[id].name);
        cfg.set[id] = env != NULL;
        cfg.raw[id] = env ? env : table[id].def;
        if (parse_entry(id, cfg.raw[id]) == 0)
            continue;
        if (!cfg.failed)
            snprintf(cfg.error, sizeof cfg.error, "%s='%s' is not %s", table[id].name, cfg.raw[id],
                     type_hint(table[id].type));
        cfg.failed = 1;
        cfg.raw[id] = table[id].def;
        parse_entry(id, cfg.raw[id]);
    }
    collie__log_set_level((enum collie__log_level)cfg.i[COLLIE_CFG_DEBUG]);
    warn_unknown();
}

int collie__config_load(void)
{
    pthread_once(&cfg_once, load_once);
    return cfg.failed ? -1 : 0;
}

const char *collie__config_error(void)
{
    collie__config_load();
    return cfg.failed ? cfg.error : NULL;
}

long long collie__config_int(enum collie__config_id id)
{
    collie__config_load();
    return cfg.i[id];
}

double collie__config_double(enum collie__config_id id)
{
    collie__config_load();
    return cfg.d[id];
}

int collie__config_is_set(enum collie__config_id id)
{
    collie__config_load();
    return cfg.set[id];
}

const char *collie__config_string(enum collie__config_id id)
{
    collie__config_load();
    return cfg.raw[id];
}

static const char *type_name(enum config_type t)
{
    switch (t) {
    case INT: return "integer";
    case SIZE: return "bytes (K, M, G)";
    case SECONDS: return "seconds";
    case LEVEL: return "level";
    default: return "text";
    }
}

/* s for a Markdown table's cell: its bars escaped. */
static void markdown_cell(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', out);
        fputc(*s, out);
    }
}

void collie__config_print_markdown(FILE *out)
{
    fputs("# Configuration reference\n\n"
          "Every `COLLIE_*` variable libcollie reads, from its one configuration table\n"
          "(`src/core/config.h`). This page is generated by `collie info\n"
          "--config-markdown`, and the test `docs.config` fails when the two differ.\n"
          "`collie info --config` shows the values a process sees; a `COLLIE_*`\n"
          "variable that is not in the table is warned about. A process reads them all\n"
          "once, at its first call that needs one (`collie_init` at the latest): one\n"
          "set after that, as by `os.environ` in a running Python program, is not\n"
          "seen.\n\n"
          "| variable | type | default | meaning |\n"
          "| --- | --- | --- | --- |\n",
          out);
    for (int id = 0; id < COLLIE_CFG_COUNT; id++) {
        fprintf(out, "| `%s` | %s | ", table[id].name, type_name(table[id].type));
        if (*table[id].def) {
            fputc('`', out);
            markdown_cell(out, table[id].def);
            fputc('`', out);
        } else {
            fputs("(none)", out);
        }
        fputs(" | ", out);
        markdown_cell(out, table[id].doc);
        fputs(" |\n", out);
    }
}

void collie__config_print(FILE *out)
{
    collie__config_load();
    fprintf(out, "%-20s %-10s %-8s %s\n", "variable", "value", "default", "meaning");
    for (int id = 0; id < COLLIE_CFG_COUNT; id++)
        fprintf(out, "%-20s %-10s %-8s %s\n", table[id].name,
                !*cfg.raw[id]            ? "-"
                : id == COLLIE_CFG_TOKEN ? "(set)"
                                         : cfg.raw[id],
                *table[id].def ? table[id].def : "-", table[id].doc);
}
