/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * machine.c - cost.h's machine description: its defaults, and the file that
 * `collie bench --tune` writes and COLLIE_MACHINE and `collie sim --machine`
 * read.  One table names every key, its unit and its meaning.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../transport/shm.h"
#include "cost.h"

/*
 * The development machine (2 vCPUs, in its fast state): the
 * sync and switch as `collie bench --tune` measured them, the rates fitted to
 * its 64 MiB rows; COLLIE_MACHINE or `collie sim` give others.
 */
#define HOST_ALPHA_S 0.28e-6
#define HOST_SWITCH_S 1.8e-6
/*
 * A sync whose call rides in the flags' lines (a oneshot of up to 24 bytes):
 * measured at 2 ranks, 4-24 B took 0.68-0.78x the time they took through a
 * slot.
 */
#define HOST_CARRY_S 0.2e-6
/*
 * A sync's line from each further peer: 2 cores cannot measure it; on 16
 * vCPUs of a Xeon (cpu2cpu 74-121 ns), 4-byte calls of 16 ranks took 0.9-1.3
 * us more than of 2.
 */
#define HOST_PEER_S 0.07e-6
#define HOST_BETA_BPS 14.5e9
#define HOST_CACHE_BETA_BPS 60e9 /* fitted to 2 ranks' 64 MiB allgather and alltoall */
/*
 * The user's buffers while the host's fit in half its cache, and a core's
 * gain with its neighbour idle: fitted together to 2 ranks' oneshot,
 * twoshot and direct reduce and allreduce at 16 KiB-4 MiB, near state.
 */
#define HOST_RESIDENT_BETA_BPS 28e9
#define HOST_ALONE_GAIN 2.0
/*
 * Cross-memory attach between two ranks: of memory, fitted to 2 ranks' 64
 * MiB direct allreduce; in cache, and the call's own
 * cost, as `collie bench --tune` measured them (1.12-1.75 us in every
 * state).  The rate in cache was 18.8-20.4 GB/s in the near
 * state; this machine now spends most of its time in a middle one, where
 * it measured 7.1-13.3 GB/s (median 11, 2026-11-28).  The near state's
 * rate kept the window off sizes where it measured faster in the middle
 * one (2 ranks: an allgather of 32 KiB blocks 1.4x, a reduce of 256 KiB
 * 1.4x), though slower where the CPUs share no cache.  Where the window and the single
 * copies come close, `adaptive` times both in the call (select.c).
 */
#define HOST_CACHE_BYTES (32u << 20)
/*
 * An exchange of two ranks (cost.c's collie__cost_pair): a core's own
 * cache, and the rates fitted to 2 ranks' forced oneshot and twoshot
 * allreduce at 4-256 KiB, near state, 3 rounds each: within 11% of every
 * median, the two crossing at 53 KiB where they crossed at 52 measured
 * (the resident rate had them cross at 8 KiB, both 1.1-1.5x slow from 64
 * KiB); the pair's rate also prices two ranks' staged copies, within 12% of
 * forced staged allgather and alltoall from 64 KiB to 4 MiB.
 */
#define HOST_CORE_CACHE_BYTES (2u << 20)
#define HOST_PAIR_BETA_BPS 48e9
#define HOST_PAIR_RAMP_S 0.5e-6
#define HOST_PAIR_RAMP_BYTES (10u << 10)
/*
 * A broadcast of two ranks near each other whose call fits in a core's own
 * cache: the other rank reads every byte just after the root's core wrote
 * it, a line at a time, as the root runs ahead into its next call.  Fitted
 * to 2 ranks' forced staged broadcast of 16-256 KiB on the EPYC near
 * (cpu2cpu 40-46 ns, 3 rounds): 1.94-2.49, 3.54-3.75, 6.55-7.01, 13.6-13.8
 * and 26.6-27.6 us, a sync and each byte at 9.8 GB/s within 10% of every
 * median, where the resident and cache rates said 2.3x faster.
 */
#define HOST_PAIR_FRESH_BETA_BPS 9.8e9
#define HOST_ATTACH_BETA_BPS 11e9
#define HOST_ATTACH_MEM_BETA_BPS 4.7e9
#define HOST_ATTACH_CALL_S 1.4e-6
/*
 * Where the host runs the vCPUs on cores that share no cache: the staging
 * slots' rate, fitted to 2 ranks' 16 and 64 MiB twoshot allreduce there
 * (9.8 and 38.9 ms: both give 6.7 GB/s), and the sync that tells it, per
 * peer: adaptive.c's fastest sync of 2 ranks took 40-60 ns with the vCPUs
 * near (cpu2cpu 39-42 ns) and 140-290 ns far (161-163).
 */
#define HOST_FAR_CACHE_BETA_BPS 6.7e9
/*
 * One rank's error-feedback work per byte of float32 in a call between 2
 * hosts: its residual added, its codes made, the owner's sum of 2 codes and
 * its code, every code decoded.  From the kernels' rates on one Xeon core
 * (1M elements, -O3): INT8 encode 6.1 GB/s, decode 13.4, decode-and-add 24;
 * SIGN 3.5, 9.2 and 13.2; an add 8.
 */
#define INT8_CODE_BETA_BPS 2.0e9
#define SIGN_CODE_BETA_BPS 1.35e9
#define HOST_FAR_SYNC_S 0.1e-6

enum kind { INT, SIZE, RATE, MICROS, GAIN /* a factor of 1 or more */ };

static const struct key {
    const char *name;
    enum kind kind;
    size_t offset;
    const char *meaning;
} keys[] = {
#define K(field, name, kind, meaning)                                                              \
    {                                                                                              \
        name, kind, offsetof(struct collie__machine, field), meaning                               \
    }
    K(ranks, "ranks", INT, "ranks in the job"),
    K(hosts, "hosts", INT, "hosts they span (0: ranks / ranks_per_host)"),
    K(ranks_per_host, "ranks_per_host", INT, "the most ranks on one host (0: ranks / hosts)"),
    K(cores, "cores", INT, "CPUs the ranks of one host may use"),
    K(slot_bytes, "slot_bytes", SIZE, "shared-memory staging slot (COLLIE_SHM_SLOT)"),
    K(ring_bytes, "ring_bytes", SIZE, "a pair's shared-memory ring (COLLIE_P2P_BUFFER, or less)"),
    K(attach, "attach", INT, "1: a host's ranks read each other's memory (cross-memory attach)"),
    K(host_alpha, "host_latency_us", MICROS, "one sync of a host's ranks that fit on its cores"),
    K(host_carry, "host_carry_us", MICROS,
      "the same, whose call rides in the sync's lines (a oneshot of up to 24 bytes)"),
    K(host_switch, "host_switch_us", MICROS, "added to a sync per rank beyond the cores"),
    K(host_peer, "host_peer_us", MICROS,
      "added to a sync per rank beyond two that fit on the cores; a crowded host's tree step"),
    K(host_beta, "host_bandwidth_gbs", RATE, "GB/s one core reads or writes of memory"),
    K(host_cache_beta, "host_cache_gbs", RATE, "GB/s one core reads or writes of the slots"),
    K(host_resident_beta, "host_resident_gbs", RATE,
      "GB/s one core reads or writes of the user's buffers while the host's fit in half "
      "its cache (below host_bandwidth_gbs: that)"),
    K(host_alone_gain, "host_alone_gain", GAIN,
      "times its share of the host's traffic one core gets while the others are idle"),
    K(host_cache_bytes, "host_cache_bytes", SIZE, "a host's last-level cache"),
    K(host_attach_beta, "host_attach_gbs", RATE,
      "GB/s one core copies to or from another rank "
      "(cross-memory attach), buffers in cache"),
    K(host_attach_mem_beta, "host_attach_memory_gbs", RATE, "the same, buffers in memory"),
    K(host_attach_call, "host_attach_call_us", MICROS, "one such copy's system call"),
    K(host_core_cache_bytes, "host_core_cache_bytes", SIZE, "one core's own cache (L2)"),
    K(host_pair_beta, "host_pair_gbs", RATE,
      "GB/s one core reads or writes of the user's buffers in an exchange of two ranks "
      "whose call fits in its own cache, and copies in two ranks' staged allgather and "
      "alltoall"),
    K(host_pair_ramp, "host_pair_ramp_us", MICROS,
      "added to each phase of such an exchange that reads lines the peer has just written, "
      "for its first host_pair_ramp_bytes (in proportion for fewer)"),
    K(host_pair_ramp_bytes, "host_pair_ramp_bytes", SIZE, "those first bytes"),
    K(host_pair_fresh_beta, "host_pair_fresh_gbs", RATE,
      "GB/s the other of two such ranks reads of a broadcast's bytes just after the root "
      "wrote them, the root running ahead (0: at the resident and slot rates)"),
    K(host_far_sync, "host_far_sync_us", MICROS,
      "a sync of the host's ranks slower than this per peer: their CPUs share no cache"),
    K(host_far_cache_beta, "host_far_cache_gbs", RATE, "host_cache_gbs while they share none"),
    K(link_alpha, "link_latency_us", MICROS, "one message between hosts"),
    K(link_beta, "link_bandwidth_gbs", RATE, "GB/s of one link, each way"),
    K(links, "links", INT, "links per host used at once"),
    K(shared_cores, "shared_cores", INT,
      "cores every host's ranks share: hosts on one machine (0: each host has its own)"),
    K(shared_tcp_beta, "shared_tcp_gbs", RATE,
      "GB/s one of them sends and receives at once over TCP (0: link_bandwidth_gbs)"),
    K(shared_tcp_alpha, "shared_tcp_us", MICROS,
      "one message's CPU time on one of them (0: link_latency_us)"),
    K(int8_code_beta, "int8_code_gbs", RATE,
      "GB/s of float32 one rank turns into INT8 error-feedback codes and back in a call"),
    K(sign_code_beta, "sign_code_gbs", RATE, "the same, of SIGN codes"),
#undef K
};
#define N_KEYS (sizeof keys / sizeof keys[0])

void collie__machine_default_rates(struct collie__machine *m)
{
    m->host_alpha = HOST_ALPHA_S;
    m->host_carry = HOST_CARRY_S;
    m->host_switch = HOST_SWITCH_S;
    m->host_peer = HOST_PEER_S;
    m->host_beta = HOST_BETA_BPS;
    m->host_cache_beta = HOST_CACHE_BETA_BPS;
    m->host_resident_beta = HOST_RESIDENT_BETA_BPS;
    m->host_alone_gain = HOST_ALONE_GAIN;
    m->attach = 1; /* what the kernel allows by default; the library probes its own */
    m->host_cache_bytes = HOST_CACHE_BYTES;
    m->host_attach_beta = HOST_ATTACH_BETA_BPS;
    m->host_attach_mem_beta = HOST_ATTACH_MEM_BETA_BPS;
    m->host_attach_call = HOST_ATTACH_CALL_S;
    m->host_core_cache_bytes = HOST_CORE_CACHE_BYTES;
    m->host_pair_beta = HOST_PAIR_BETA_BPS;
    m->host_pair_ramp = HOST_PAIR_RAMP_S;
    m->host_pair_ramp_bytes = HOST_PAIR_RAMP_BYTES;
    m->host_pair_fresh_beta = HOST_PAIR_FRESH_BETA_BPS;
    m->host_far_sync = HOST_FAR_SYNC_S;
    m->host_far_cache_beta = HOST_FAR_CACHE_BETA_BPS;
    m->far = 0; /* the rates of CPUs that share a cache; select.c costs the other placement */
    m->link_alpha = (double)collie__config_int(COLLIE_CFG_NET_LATENCY_US) * 1e-6;
    m->link_beta = (double)collie__config_int(COLLIE_CFG_NET_BANDWIDTH);
    m->links = 1;
    m->shared_cores = 0; /* hosts of their own */
    m->shared_tcp_beta = 0;
    m->shared_tcp_alpha = 0;
    m->int8_code_beta = INT8_CODE_BETA_BPS;
    m->sign_code_beta = SIGN_CODE_BETA_BPS;
}

static const struct key *find(const char *name, size_t len)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (strlen(keys[i].name) == len && !strncmp(keys[i].name, name, len))
            return &keys[i];
    return NULL;
}

static int set(struct collie__machine *m, const struct key *k, const char *value, char *err,
               size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    int whole = k->kind == INT || k->kind == SIZE;
    int zero_ok = k->offset == offsetof(struct collie__machine, ranks_per_host) ||
                  k->offset == offsetof(struct collie__machine, hosts) ||
                  k->offset == offsetof(struct collie__machine, attach) ||
                  k->offset == offsetof(struct collie__machine, host_peer) ||
                  k->offset == offsetof(struct collie__machine, host_pair_ramp) ||
                  k->offset == offsetof(struct collie__machine, host_pair_fresh_beta) ||
                  k->offset == offsetof(struct collie__machine, shared_cores) ||
                  k->offset == offsetof(struct collie__machine, shared_tcp_beta) ||
                  k->offset == offsetof(struct collie__machine, shared_tcp_alpha);
    if (end == value || *end || errno || !isfinite(v) || v < 0 || (v == 0 && !zero_ok) ||
        v > 1e15 || (whole && (v != floor(v) || v > 1 << 30))) {
        snprintf(err, errlen, "%s = '%s': expected a positive %s%s", k->name, value,
                 whole ? "whole number" : "number", zero_ok ? ", or 0" : "");
        return -1;
    }
    if (k->kind == GAIN && v < 1) {
        snprintf(err, errlen, "%s = '%s': expected 1 or more", k->name, value);
        return -1;
    }
    void *field = (char *)m + k->offset;
    switch (k->kind) {
    case INT: *(int *)field = (int)v; break;
    case SIZE: *(size_t *)field = (size_t)v; break;
    case RATE: *(double *)field = v * 1e9; break;
    case MICROS: *(double *)field = v * 1e-6; break;
    case GAIN: *(double *)field = v; break;
    }
    return 0;
}

int collie__machine_set(struct collie__machine *m, const char *key, const char *value, char *err,
                        size_t errlen)
{
    const struct key *k = find(key, strlen(key));
    if (!k) {
        size_t used = (size_t)snprintf(err, errlen, "unknown key '%s'; known:", key);
        for (size_t i = 0; i < N_KEYS && used < errlen; i++)
            used += (size_t)snprintf(err + used, errlen - used, " %s", keys[i].name);
        return -1;
    }
    return set(m, k, value, err, errlen);
}

/* One line: blank, "# comment", or "key = value  # comment". */
static int read_line(struct collie__machine *m, char *line, char *err, size_t errlen)
{
    line[strcspn(line, "#\n")] = '\0';
    char *key = line + strspn(line, " \t");
    if (!*key)
        return 0;
    char *eq = strchr(key, '=');
    if (!eq) {
        snprintf(err, errlen, "'%s': expected key = value", key);
        return -1;
    }
    char *key_end = eq;
    while (key_end > key && (key_end[-1] == ' ' || key_end[-1] == '\t'))
        key_end--;
    *key_end = '\0';
    char *value = eq + 1 + strspn(eq + 1, " \t");
    size_t vlen = strlen(value);
    while (vlen && (value[vlen - 1] == ' ' || value[vlen - 1] == '\t' || value[vlen - 1] == '\r'))
        value[--vlen] = '\0';
    return collie__machine_set(m, key, value, err, errlen);
}

int collie__machine_read(struct collie__machine *m, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "machine description %s: %s", path, strerror(errno));
        return -1;
    }
    char line[512], why[400];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(why, sizeof why, "a line longer than %zu bytes", sizeof line - 2);
            rc = -1;
        } else {
            rc = read_line(m, line, why, sizeof why);
        }
    }
    if (rc == 0 && ferror(f)) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc)
        snprintf(err, errlen, "machine description %s, line %d: %s", path, lineno, why);
    return rc;
}

double collie__machine_get(const struct collie__machine *m, const char *key)
{
    const struct key *k = find(key, strlen(key));
    if (!k)
        return NAN;
    const void *field = (const char *)m + k->offset;
    switch (k->kind) {
    case INT: return *(const int *)field;
    case SIZE: return (double)*(const size_t *)field;
    case RATE: return *(const double *)field / 1e9;
    case MICROS: return *(const double *)field * 1e6;
    case GAIN: return *(const double *)field;
    }
    return NAN;
}

void collie__machine_write(const struct collie__machine *m, FILE *out)
{
    fprintf(out,
            "# collie machine description: `collie sim --machine FILE`, COLLIE_MACHINE=FILE\n");
    int width = 0; /* the longest name's: the values and meanings line up */
    for (size_t i = 0; i < N_KEYS; i++)
        if ((int)strlen(keys[i].name) > width)
            width = (int)strlen(keys[i].name);
    for (size_t i = 0; i < N_KEYS; i++) {
        const void *field = (const char *)m + keys[i].offset;
        char value[64];
        switch (keys[i].kind) {
        case INT: snprintf(value, sizeof value, "%d", *(const int *)field); break;
        case SIZE: snprintf(value, sizeof value, "%zu", *(const size_t *)field); break;
        case RATE: snprintf(value, sizeof value, "%.15g", *(const double *)field / 1e9); break;
        case MICROS: snprintf(value, sizeof value, "%.15g", *(const double *)field * 1e6); break;
        case GAIN: snprintf(value, sizeof value, "%.15g", *(const double *)field); break;
        }
        fprintf(out, "%-*s = %-12s # %s\n", width, keys[i].name, value, keys[i].meaning);
    }
}

int collie__machine_check(struct collie__machine *m, char *err, size_t errlen)
{
    if (m->ranks < 1) {
        snprintf(err, errlen, "ranks = %d: a machine needs at least one rank", m->ranks);
        return -1;
    }
    if (m->hosts < 1) /* as many as ranks_per_host needs */
        m->hosts = m->ranks_per_host > 0
                       ? (int)(((int64_t)m->ranks + m->ranks_per_host - 1) / m->ranks_per_host)
                       : 1;
    if (m->hosts > m->ranks) {
        snprintf(err, errlen, "hosts = %d: more hosts than ranks (%d)", m->hosts, m->ranks);
        return -1;
    }
    int even = (int)(((int64_t)m->ranks + m->hosts - 1) / m->hosts);
    if ((int64_t)m->ranks_per_host * m->hosts < m->ranks) /* 64-bit: both may be near INT_MAX */
        m->ranks_per_host = even;
    if (m->ranks_per_host > m->ranks)
        m->ranks_per_host = m->ranks;
    if (m->cores < 1)
        m->cores = 1;
    if (!m->slot_bytes)
        m->slot_bytes = (size_t)collie__config_int(COLLIE_CFG_SHM_SLOT);
    if (!m->ring_bytes)
        m->ring_bytes = collie__shm_ring_bytes(m->ranks_per_host);
    if (m->links < 1)
        m->links = 1;
    return 0;
}
