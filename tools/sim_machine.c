/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_machine.c - the machine `collie sim` predicts: a description file
 * (--machine, as `collie bench --tune` writes it), then the options that
 * override it, whatever their order on the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* "25gbit", "100mbit", "3.2GB/s", "800MB/s", or bytes per second; into GB/s text. */
static int rate_text(const char *s, char *out, size_t len)
{
    char *end;
    double v = strtod(s, &end), scale = 1e-9; /* bytes per second -> GB/s */
    static const struct {
        const char *unit;
        double gbs;
    } units[] = {{"gbit", 1 / 8.0}, {"mbit", 1e-3 / 8}, {"kbit", 1e-6 / 8}, {"GB/s", 1},
                 {"MB/s", 1e-3},    {"KB/s", 1e-6},     {"GB", 1},          {"MB", 1e-3}};
    if (end == s || !(v > 0))
        return -1;
    if (*end) {
        size_t k = 0;
        while (k < sizeof units / sizeof units[0] && strcmp(end, units[k].unit))
            k++;
        if (k == sizeof units / sizeof units[0])
            return -1;
        scale = units[k].gbs;
    }
    snprintf(out, len, "%.17g", v * scale);
    return 0;
}

/* "5us", "0.2ms", "800ns", "1s", or microseconds; into microseconds text. */
static int latency_text(const char *s, char *out, size_t len)
{
    char *end;
    double v = strtod(s, &end), scale = 1;
    if (end == s || !(v >= 0))
        return -1;
    if (!strcmp(end, "ns"))
        scale = 1e-3;
    else if (!strcmp(end, "ms"))
        scale = 1e3;
    else if (!strcmp(end, "s"))
        scale = 1e6;
    else if (*end && strcmp(end, "us"))
        return -1;
    snprintf(out, len, "%.17g", v * scale);
    return 0;
}

static int set(struct collie__machine *m, const char *opt, const char *key, const char *value)
{
    char err[512];
    if (collie__tools_machine_set(m, key, value, err, sizeof err)) {
        fprintf(stderr, "collie sim: %s: %s\n", opt, err);
        return -1;
    }
    return 0;
}

/* --link RATE,LATENCY and --host RATE,LATENCY: either part may be left out ("25gbit", ",5us"). */
static int rate_and_latency(struct collie__machine *m, const char *opt, const char *v,
                            const char *rate_key, const char *latency_key)
{
    char rate[64] = "", latency[64] = "", text[128];
    const char *comma = strchr(v, ',');
    size_t rate_len = comma ? (size_t)(comma - v) : strlen(v);
    if (rate_len >= sizeof text) {
        fprintf(stderr, "collie sim: %s '%s': too long\n", opt, v);
        return -1;
    }
    memcpy(text, v, rate_len);
    text[rate_len] = '\0';
    if ((rate_len && rate_text(text, rate, sizeof rate)) ||
        (comma && latency_text(comma + 1, latency, sizeof latency)) || (!rate_len && !comma)) {
        fprintf(stderr,
                "collie sim: %s '%s': expected RATE[,LATENCY], e.g. 25gbit,5us or 10GB/s,0.5us\n",
                opt, v);
        return -1;
    }
    if (rate_len && set(m, opt, rate_key, rate))
        return -1;
    return comma ? set(m, opt, latency_key, latency) : 0;
}

/* --host: a sync that carries its call (host_carry_us) keeps its share of a sync. */
static int host_option(struct collie__machine *m, const char *opt, const char *v)
{
    double alpha = collie__tools_machine_get(m, "host_latency_us");
    double carry = collie__tools_machine_get(m, "host_carry_us");
    if (rate_and_latency(m, opt, v, "host_bandwidth_gbs", "host_latency_us"))
        return -1;
    double now = collie__tools_machine_get(m, "host_latency_us");
    char text[64];
    snprintf(text, sizeof text, "%.17g", alpha > 0 ? carry * now / alpha : now);
    return set(m, opt, "host_carry_us", text);
}

int sim_machine_options(struct collie__machine *m, int argc, char **argv, int *used)
{
    /* The file first, so that every other option overrides it. */
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--machine")) {
            char err[512];
            if (collie__tools_machine_read(m, argv[i + 1], err, sizeof err)) {
                fprintf(stderr, "collie sim: --machine: %s\n", err);
                return -1;
            }
        }
    static const struct {
        const char *opt, *key;
    } plain[] = {{"--ranks", "ranks"}, {"-n", "ranks"},
                 {"--hosts", "hosts"}, {"--cores", "cores"},
                 {"--links", "links"}, {"--ranks-per-host", "ranks_per_host"}};
    int placed = 0, per_host = 0, hosts = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int known = !strcmp(a, "--machine") || !strcmp(a, "--link") || !strcmp(a, "--host") ||
                    !strcmp(a, "--set");
        for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++)
            known |= !strcmp(a, plain[k].opt);
        if (!known)
            continue;
        if (!v) {
            fprintf(stderr, "collie sim: %s needs a value\n", a);
            return -1;
        }
        used[i] = used[i + 1] = 1;
        int rc = 0;
        if (!strcmp(a, "--link"))
            rc = rate_and_latency(m, a, v, "link_bandwidth_gbs", "link_latency_us");
        else if (!strcmp(a, "--host"))
            rc = host_option(m, a, v);
        else if (!strcmp(a, "--set")) {
            char key[64];
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || (size_t)(eq - v) >= sizeof key) {
                fprintf(stderr, "collie sim: --set '%s': expected KEY=VALUE\n", v);
                return -1;
            }
            memcpy(key, v, (size_t)(eq - v));
            key[eq - v] = '\0';
            rc = set(m, a, key, eq + 1);
        } else {
            for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++)
                if (!strcmp(a, plain[k].opt))
                    rc = set(m, a, plain[k].key, v);
        }
        if (rc)
            return -1;
        placed |= strcmp(a, "--ranks") && strcmp(a, "-n") && strcmp(a, "--hosts") ? 0 : 1;
        per_host |= !strcmp(a, "--ranks-per-host");
        hosts |= !strcmp(a, "--hosts");
        i++;
    }
    /* New ranks or hosts without --ranks-per-host: spread evenly, not as the file had them; */
    if (placed && !per_host)
        return set(m, "--hosts", "ranks_per_host", "0");
    /* --ranks-per-host without --hosts: as many hosts as that takes. */
    return per_host && !hosts ? set(m, "--ranks-per-host", "hosts", "0") : 0;
}

int sim_positive(const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x > 0) || x > 1e15)
        return -1;
    *out = x;
    return 0;
}

int sim_whole(const char *v, int *out)
{
    double x;
    if (sim_positive(v, &x) || x > 1 << 30 || x != (int)x)
        return -1;
    *out = (int)x;
    return 0;
}

int sim_machine_ready(struct collie__machine *m)
{
    char err[512];
    if (collie__tools_machine_check(m, err, sizeof err)) {
        fprintf(stderr, "collie sim: %s (give --ranks N, or --machine FILE)\n", err);
        return -1;
    }
    return 0;
}

void sim_machine_header(const struct collie__machine *m, FILE *out)
{
    fputs("# machine (collie sim --machine FILE reads it back):\n", out);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return;
    collie__tools_machine_write(m, mem);
    fclose(mem);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (line[0] != '#')
            fprintf(out, "#   %s\n", line);
    free(text);
}
