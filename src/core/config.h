/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h - the one configuration table: every COLLIE_* variable, its type,
 * default and meaning.  Read once per process, printed by `collie info`.
 */
#ifndef COLLIE_CONFIG_H
#define COLLIE_CONFIG_H

#include <stdio.h>

/* X(id, type, default, meaning).  The variable is "COLLIE_" #id. */
#define COLLIE_CONFIG_TABLE(X)                                                                     \
    X(RANK, INT, "",                                                                               \
      "this process's rank; set by `collie run` (else RANK, "                                      \
      "OMPI_COMM_WORLD_RANK or SLURM_PROCID are read)")                                            \
    X(SIZE, INT, "",                                                                               \
      "number of ranks in the job; set by `collie run` (else WORLD_SIZE, "                         \
      "OMPI_COMM_WORLD_SIZE or SLURM_NTASKS)")                                                     \
    X(LOCAL_RANK, INT, "",                                                                         \
      "rank within its host; informational, collie derives it from "                               \
      "COLLIE_HOST at init and warns on disagreement")                                             \
    X(LOCAL_SIZE, INT, "", "ranks on this host; informational, derived like COLLIE_LOCAL_RANK")    \
    X(ADDR, STRING, "",                                                                            \
      "host:port where rank 0 listens for the rendezvous (else "                                   \
      "MASTER_ADDR:MASTER_PORT, else the launcher's PMIx, PMI-2 or PMI-1 store, else Slurm's "     \
      "step)")                                                                                     \
    X(HOST, STRING, "",                                                                            \
      "host identity: ranks with the same value share memory (default: "                           \
      "hostname and kernel boot id)")                                                              \
    X(TOKEN, STRING, "",                                                                           \
      "shared secret every rank proves it knows before it may join (HMAC "                         \
      "challenge-response); `collie run` sets a random one; never printed")                        \
    X(ENCRYPT, INT, "0",                                                                           \
      "1: every byte between hosts is encrypted and authenticated (AES-256-GCM, keys from "        \
      "COLLIE_TOKEN's handshake; needs a token); the same value on every rank")                    \
    X(SOCKET_IFNAME, STRING, "",                                                                   \
      "network interface whose address ranks listen on for each "                                  \
      "other (default: the one that reaches the rendezvous)")                                      \
    X(TCP_STREAMS, INT, "-1",                                                                      \
      "TCP connections per pair of ranks on different hosts; large "                               \
      "messages are striped over them (-1: 4)")                                                    \
    X(NET_LATENCY_US, INT, "20",                                                                   \
      "one message's latency between hosts, for the cost model that "                              \
      "chooses algorithms across hosts (unset: measured, COLLIE_NET_PROBE)")                       \
    X(NET_BANDWIDTH, SIZE, "1G",                                                                   \
      "bytes per second of one host's link, for that cost model (unset: measured)")                \
    X(NET_PROBE, INT, "1",                                                                         \
      "1: a communicator across hosts measures the latency and bandwidth between "                 \
      "its first two hosts when it is created (about 10-20 ms) for the cost model, "               \
      "where COLLIE_NET_LATENCY_US, COLLIE_NET_BANDWIDTH and COLLIE_MACHINE leave "                \
      "them open; 0: never (their defaults stand)")                                                \
    X(MACHINE, STRING, "",                                                                         \
      "machine description for the cost model (`collie bench --tune FILE` writes one): "           \
      "its rates replace the defaults and COLLIE_NET_*; the same file on every host")              \
    X(TIMEOUT, SECONDS, "300",                                                                     \
      "seconds any wait may last (rendezvous, collective, send, recv) "                            \
      "before the call fails with COLLIE_ERR_TIMEOUT")                                             \
    X(DEBUG, LEVEL, "WARN", "log level on stderr: NONE, WARN, INFO or TRACE")                      \
    X(ALGO, STRING, "",                                                                            \
      "force algorithms: NAME, or COLL:NAME[,COLL:NAME...] "                                       \
      "(e.g. allreduce:twoshot); `collie info` lists them")                                        \
    X(SHM_SLOT, SIZE, "512K",                                                                      \
      "bytes of each rank's shared-memory staging buffer (two per rank); "                         \
      "the chunk that large collectives pipeline through cache")                                   \
    X(P2P_BUFFER, SIZE, "256K",                                                                    \
      "bytes of the shared-memory ring of each ordered pair of ranks "                             \
      "for send/recv")                                                                             \
    X(P2P_PIECE, SIZE, "4M",                                                                       \
      "bytes per piece of a point-to-point reduction step (ring, recursive "                       \
      "doubling and halving, across hosts): a received piece is combined while "                   \
      "the next is on the wire (0: a step moves its whole range at once)")                         \
    X(SPIN_US, INT, "-1",                                                                          \
      "microseconds a waiting rank polls before yielding the CPU (not at all "                     \
      "when the awaited rank shares its CPU); -1: 50 when ranks <= cores "                         \
      "on the host, else 0")                                                                       \
    X(YIELD_US, INT, "-1",                                                                         \
      "microseconds a waiting rank calls sched_yield before it sleeps (on a "                      \
      "futex; for another host, in poll() after a look at its sockets each "                       \
      "time); -1: 1000 when ranks <= cores, else 2000")                                            \
    X(MOVE, INT, "1",                                                                              \
      "1: when the host has a CPU for every rank and the scheduler keeps two "                     \
      "ranks on one of them, the higher rank moves itself to another CPU of "                      \
      "its affinity mask (which it leaves as it was); 0: never")                                   \
    X(SHM_KEEP, INT, "2",                                                                          \
      "host segments of finalized communicators a process keeps mapped (at most 4), for a "        \
      "later one of the same ranks (a dup, a split made again) to reuse instead of mapping a "     \
      "new one; all are unmapped when its last communicator is finalized; 0: none")                \
    X(CMA, INT, "1",                                                                               \
      "1: ranks of one host may read each other's buffers directly (Linux "                        \
      "cross-memory attach, where the kernel allows it: probed at init), one "                     \
      "copy where staging takes two, when the cost model finds it faster; 0: never")               \
    X(RING_HEAD, INT, "-1",                                                                        \
      "1: loops of messages of 512 B-4 KiB between two ranks of a host keep to the first 16 KiB "  \
      "of their ring, in the cores' first-level caches; 0: they walk the whole ring; -1: 1 on "    \
      "AMD CPUs, 0 on others (local rank 0's value holds for the host)")                           \
    X(NT_MIN, SIZE, "8M",                                                                          \
      "outputs of at least this many bytes are written with non-temporal "                         \
      "stores, which bypass the caches (0: never)")                                                \
    X(STAGE_STREAM, INT, "-1",                                                                     \
      "how ranks write the shared-memory staging slots of allgather, alltoall, broadcast and "     \
      "reduce_scatter: 1 with non-temporal stores, so that their readers take them from "          \
      "memory, 0 through the cache, -1: non-temporal where more than 2 ranks share the host and "  \
      "the adaptive algorithm finds their CPUs share no cache")                                    \
    X(FUSION_BYTES, SIZE, "64M",                                                                   \
      "between collie_group_start and collie_group_end, consecutive "                              \
      "allreduces of one dtype and op are fused into buffers of at most "                          \
      "this many bytes, one allreduce each (0: never fuse)")                                       \
    X(TIMELINE, STRING, "",                                                                        \
      "write a Chrome trace (chrome://tracing, Perfetto) of every operation "                      \
      "to FILE.rankN.json; `collie timeline FILE` merges the ranks' files")                        \
    X(MPI, INT, "1",                                                                               \
      "libcollie-mpi.so, the MPI interposer: 1 runs MPI's collectives on collie where it "         \
      "can honour them exactly; 0 leaves every call to MPI")                                       \
    X(EF_CODES, STRING, "auto",                                                                    \
      "where collie_allreduce_ef codes: auto (between hosts, where the cost model says the "       \
      "links' time saved beats the codes' work; a host's ranks first reduce exactly), hosts "      \
      "(between hosts, always), all (every rank, one host too), off (never: exact)")

enum collie__config_id {
#define COLLIE_CONFIG_ENUM(id, type, def, doc) COLLIE_CFG_##id,
    COLLIE_CONFIG_TABLE(COLLIE_CONFIG_ENUM)
#undef COLLIE_CONFIG_ENUM
        COLLIE_CFG_COUNT
};

/*
 * Reads every COLLIE_* variable once (later calls are free).  Returns 0, or -1
 * with a message naming the variable and its bad value in collie__config_error().
 * Unknown COLLIE_* variables are warned about once.
 */
int collie__config_load(void);

/*
 * Parses one variable's text as its type says (the loader's own parser;
 * fuzzed by fuzz/config.c): 0 with *i (INT, SIZE, LEVEL; -1 when text is
 * empty) or *d (SECONDS) set, else -1.  A size is at most 2^40 bytes, a
 * number of seconds positive and finite.
 */
int collie__config_parse(enum collie__config_id id, const char *text, long long *i, double *d);

/* The message of the first parse failure, or NULL. */
const char *collie__config_error(void);

/* Values (loading the table on first use). Unset INT entries read as -1. */
long long collie__config_int(enum collie__config_id id);
double collie__config_double(enum collie__config_id id);
const char *collie__config_string(enum collie__config_id id); /* "" when unset */
/* Whether the environment set the variable (else its value is the default). */
int collie__config_is_set(enum collie__config_id id);

/* Prints the table (name, value, default, meaning) for `collie info --config`. */
void collie__config_print(FILE *out);
/*
 * Writes docs/CONFIGURATION.md, the configuration reference, from the table:
 * every variable with its type, default and meaning, whatever the
 * environment holds.  A test compares the page with this output.
 */
void collie__config_print_markdown(FILE *out);

#endif
