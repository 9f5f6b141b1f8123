/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * run.c - `collie run -n N [--tag-output] [--] PROGRAM [ARGS...]`: starts N
 * ranks of PROGRAM on this host with COLLIE_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE/
 * ADDR set, forwards SIGINT/SIGTERM/SIGHUP to them, and when one fails
 * (non-zero exit or a signal) stops the others: SIGTERM, then SIGKILL after
 * a grace period.  Exits with the first failing rank's status.
 *
 * Each rank runs in its own process group, so a terminal's Ctrl-C reaches
 * the ranks once (forwarded by us) and stopping a rank stops what it spawned.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hosts.h"
#include "tools.h"

#define GRACE_MS 3000 /* SIGTERM to SIGKILL */
#define DRAIN_MS 1000 /* output still open after every rank exited */

struct stream {
    int fd;  /* read end of the rank's pipe, -1 when closed */
    int out; /* where its lines go: 1 or 2 */
    char buf[8192];
    size_t len;
};

struct rank {
    pid_t pid;
    int running;
    int status;
    struct stream streams[2];
    char tag[300]; /* "[rank N] ", or "[rank N@host] " across hosts */
    int stdin_fd;  /* remote ranks: our end of their stdin (they stop when it closes), or -1 */
};

struct job {
    int n, tag;
    int bind;               /* --bind auto (1) or none (0): see bind_rank */
    struct host_list hosts; /* -H / --hostfile; empty: every rank here */
    const char *rsh;        /* how to reach a remote host: "ssh -o BatchMode=yes", --rsh */
    char addr[300];         /* rank 0's rendezvous, host:port */
    int master_port;        /* torchrun's MASTER_PORT beside it (torch.distributed's store) */
    struct rank *ranks;
    int live;
    int failed_rank; /* first rank that failed, -1 if none */
    int exit_code;
    int stopping;      /* SIGTERM sent to everyone */
    int keep_going;    /* a failing rank does not stop the others (--keep-going) */
    long long kill_at; /* when to escalate to SIGKILL (ms), 0: not scheduled */
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: collie run [-n N] [-H HOST:SLOTS,... | --hostfile FILE] [options] [--] PROGRAM "
            "[ARGS...]\n"
            "  -n, --np N          number of ranks (default 1; with hosts: every slot)\n"
            "  -H, --hosts LIST    hosts and their slots, e.g. node1:4,node2:4; ranks fill\n"
            "                      hosts in order; remote ones start over ssh\n"
            "  --hostfile FILE     one host per line: 'node1 slots=4' or 'node1:4'\n"
            "  --rsh CMD           how to reach a host (default $COLLIE_RSH, else\n"
            "                      'ssh -o BatchMode=yes'); run as CMD HOST COMMAND\n"
            "  --port P            rank 0's rendezvous port (default: a free one)\n"
            "  --keep-going        a rank that fails does not stop the others (a job that\n"
            "                      shrinks and goes on: collie_comm_shrink); exits 0 when\n"
            "                      some rank exited 0 and none with an error\n"
            "  --tag-output        prefix every output line with [rank R] (across hosts:\n"
            "                      [rank R@host], always on)\n"
            "  --bind auto|none    auto (default, or $COLLIE_BIND): when this host's ranks\n"
            "                      outnumber the CPUs collie run may use by a whole multiple,\n"
            "                      pin them in blocks (local rank i on CPU i*CPUs/ranks);\n"
            "                      otherwise, and with none, leave placement to the kernel\n"
            "Each rank gets COLLIE_RANK, COLLIE_SIZE, COLLIE_LOCAL_RANK, COLLIE_LOCAL_SIZE,\n"
            "COLLIE_ADDR, COLLIE_HOST (across hosts) and a random COLLIE_TOKEN (unless one is\n"
            "set; remote ranks read it from standard input, never from a command line). Other\n"
            "COLLIE_* variables are passed on to remote ranks. Remote ranks run the program\n"
            "at the path it has here, in the same directory. If a rank fails, the others are\n"
            "stopped (SIGTERM, then SIGKILL after %d s) and collie run exits with that rank's\n"
            "status.\n",
            GRACE_MS / 1000);
}

/* A free loopback port for rank 0's rendezvous. */
static int pick_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    close(s);
    return ntohs(a.sin_port);
}

/* A fresh random COLLIE_TOKEN for the job (one given by the user is kept). */
static int set_token(void)
{
    const char *given = getenv("COLLIE_TOKEN");
    if (given && *given)
        return 0;
    unsigned char raw[32];
    char hex[2 * sizeof raw + 1];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return -1;
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    return setenv("COLLIE_TOKEN", hex, 1);
}

/* Rank r's place on its host: its local rank and the host's rank count; its host's name or NULL. */
static const char *local_place(const struct job *job, int r, int *local_rank, int *local_size)
{
    *local_rank = r;
    *local_size = job->n;
    if (!job->hosts.n)
        return NULL;
    int h = hosts_of_rank(&job->hosts, r), first = 0;
    for (int i = 0; i < h; i++)
        first += job->hosts.host[i].slots;
    *local_rank = r - first;
    *local_size =
        job->n - first < job->hosts.host[h].slots ? job->n - first : job->hosts.host[h].slots;
    return job->hosts.host[h].name;
}

/*
 * --bind auto, in a rank forked here: when the host's ranks outnumber the
 * CPUs collie run may use by a whole multiple k, local rank i is pinned to
 * CPU i / k of them.  Unpinned, the balancer moves ranks that hand a CPU
 * back and forth mid-run, and runs of one job differ: 4 ranks on 2 CPUs, ten
 * runs each, 8-byte allreduce 2.97-5.26 us unpinned, 2.87-3.28 pinned.
 * With a CPU or more per rank nothing is pinned: a rank's compute pool needs those cores, and the waiting moves a rank that
 * keeps sharing one (shm_wait.c).  Nor with an uneven split: a CPU holding
 * one rank more than another would pace the whole job.
 */
static void bind_rank(int local_rank, int local_size)
{
    cpu_set_t mine, one;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return;
    int cpus = CPU_COUNT(&mine);
    if (cpus < 1 || local_size <= cpus || local_size % cpus)
        return;
    int want = local_rank / (local_size / cpus), seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &mine) && seen++ == want) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            if (sched_setaffinity(0, sizeof one, &one) != 0)
                fprintf(stderr, "collie run: cannot pin local rank %d to CPU %d: %s\n", local_rank,
                        cpu, strerror(errno));
            return;
        }
}

/* The variables rank r gets, as NAME=VALUE strings in env[0..5]; returns how many. */
#define RANK_ENV_MAX 12 /* what rank_env sets */

static int rank_env(const struct job *job, int r, char env[][320])
{
    int n = 0, local_rank, local_size;
    const char *host = local_place(job, r, &local_rank, &local_size);
    snprintf(env[n++], 320, "COLLIE_RANK=%d", r);
    snprintf(env[n++], 320, "COLLIE_SIZE=%d", job->n);
    snprintf(env[n++], 320, "COLLIE_LOCAL_RANK=%d", local_rank);
    snprintf(env[n++], 320, "COLLIE_LOCAL_SIZE=%d", local_size);
    snprintf(env[n++], 320, "COLLIE_ADDR=%s", job->addr);
    if (host)
        snprintf(env[n++], 320, "COLLIE_HOST=%s", host);
    /* torchrun's variables too, so that torch.distributed's env:// works under collie run. */
    snprintf(env[n++], 320, "RANK=%d", r);
    snprintf(env[n++], 320, "WORLD_SIZE=%d", job->n);
    snprintf(env[n++], 320, "LOCAL_RANK=%d", local_rank);
    snprintf(env[n++], 320, "LOCAL_WORLD_SIZE=%d", local_size);
    snprintf(env[n++], 320, "MASTER_ADDR=%.*s", (int)(strrchr(job->addr, ':') - job->addr),
             job->addr);
    snprintf(env[n++], 320, "MASTER_PORT=%d", job->master_port);
    return n;
}

/* Finds name in PATH as execvp would; 1 with its path in out, else 0. */
static int in_path(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, len, "%.*s/%s", (int)n, p, name);
        if (n && access(out, X_OK) == 0)
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

/*
 * Whether NAME=VALUE goes along to a remote rank: the user's COLLIE_*
 * settings do; the per-rank ones are set anew, the token goes through stdin,
 * and COLLIE_RSH is the launcher's own.
 */
static int travels(const char *var)
{
    static const char *const own[] = {
        "COLLIE_TOKEN=", "COLLIE_RANK=", "COLLIE_SIZE=", "COLLIE_LOCAL_",
        "COLLIE_ADDR=",  "COLLIE_HOST=", "COLLIE_RSH="};
    if (strncmp(var, "COLLIE_", 7))
        return 0;
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (!strncmp(var, own[i], strlen(own[i])))
            return 0;
    return 1;
}

/* Execs rank r on its remote host: RSH HOST 'read token; cd; env ... PROGRAM ARGS'. */
static void exec_remote(const struct job *job, int r, char **argv, char env[][320], int nenv)
{
    extern char **environ;
    char *vars[256], cwd[4096] = "/", prog[4096], *cmd = malloc(1 << 16), *words[64];
    int nv = 0, nw = 0;
    for (int i = 0; i < nenv; i++)
        vars[nv++] = env[i];
    for (char **e = environ; *e && nv < 250; e++)
        if (travels(*e))
            vars[nv++] = *e;
    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, "/");
    /* the program at the path it has here (found in PATH here, if it has no slash) */
    if (strchr(argv[0], '/') ? realpath(argv[0], prog) != NULL
                             : in_path(argv[0], prog, sizeof prog))
        argv[0] = prog;
    if (!cmd || hosts_remote_command(cmd, 1 << 16, cwd, vars, nv, argv) != 0) {
        fprintf(stderr, "collie run: the command line for rank %d is too long\n", r);
        _exit(127);
    }
    /* "read -r" the token first: it never appears in a command line on either host */
    size_t clen = strlen(cmd);
    char *full = malloc(clen + 64), *rsh = strdup(job->rsh);
    if (!full || !rsh) {
        fprintf(stderr, "collie run: out of memory starting rank %d\n", r);
        _exit(127);
    }
    snprintf(full, clen + 64, "read -r COLLIE_TOKEN && export COLLIE_TOKEN && %s", cmd);
    for (char *w = strtok(rsh, " \t"); w && nw < 60; w = strtok(NULL, " \t"))
        words[nw++] = w;
    words[nw++] = job->hosts.host[hosts_of_rank(&job->hosts, r)].name;
    words[nw++] = full;
    words[nw] = NULL;
    execvp(words[0], words);
    fprintf(stderr, "collie run: cannot start '%s' to reach host %s for rank %d: %s\n", words[0],
            words[nw - 2], r, strerror(errno));
    _exit(127);
}

static void child(const struct job *job, int r, int in_fd, int out_fd[2], int err_fd[2],
                  char **argv, const sigset_t *old_mask)
{
    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    if (job->tag) {
        dup2(out_fd[1], 1);
        dup2(err_fd[1], 2);
        close(out_fd[0]), close(out_fd[1]), close(err_fd[0]), close(err_fd[1]);
    }
    char env[RANK_ENV_MAX][320];
    int nenv = rank_env(job, r, env);
    if (in_fd >= 0) { /* a remote rank: stdin is our pipe, which carries the token first */
        dup2(in_fd, 0);
        close(in_fd);
        exec_remote(job, r, argv, env, nenv);
    }
    /* In its own process group a rank may not read the terminal; only rank 0 gets a piped stdin. */
    if (r != 0 || isatty(0)) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
    }
    for (int i = 0; i < nenv; i++)
        putenv(env[i]);
    if (job->bind) {
        int local_rank, local_size;
        local_place(job, r, &local_rank, &local_size);
        bind_rank(local_rank, local_size);
    }
    execvp(argv[0], argv);
    fprintf(stderr, "collie run: cannot start '%s' for rank %d: %s\n", argv[0], r, strerror(errno));
    _exit(127);
}

static void signal_all(struct job *job, int sig)
{
    for (int r = 0; r < job->n; r++)
        if (job->ranks[r].running)
            killpg(job->ranks[r].pid, sig);
}

static void stop_all(struct job *job)
{
    if (job->stopping)
        return;
    job->stopping = 1;
    signal_all(job, SIGTERM);
    job->kill_at = now_ms() + GRACE_MS;
}

static void describe(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

static void reap(struct job *job)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int r = 0; r < job->n; r++) {
            struct rank *k = &job->ranks[r];
            if (k->pid != pid || !k->running)
                continue;
            k->running = 0;
            k->status = status;
            job->live--;
            int failed = WIFSIGNALED(status) || WEXITSTATUS(status) != 0;
            if (failed && job->keep_going) {
                char how[96];
                describe(status, how, sizeof how);
                if (job->failed_rank < 0)
                    job->failed_rank = r;
                fprintf(stderr,
                        "collie run: rank %d (pid %d) %s; the other %d go on (--keep-going)\n", r,
                        (int)pid, how, job->live);
            } else if (failed && job->failed_rank < 0) {
                char how[96];
                describe(status, how, sizeof how);
                job->failed_rank = r;
                job->exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
                if (job->live > 0 && !job->stopping)
                    fprintf(stderr,
                            "collie run: rank %d (pid %d) %s; stopping the other %d "
                            "rank(s)\n",
                            r, (int)pid, how, job->live);
                else
                    fprintf(stderr, "collie run: rank %d (pid %d) %s\n", r, (int)pid, how);
                stop_all(job);
            }
        }
    }
}

static void emit(struct stream *s, const char *tag, size_t upto)
{
    FILE *out = s->out == 1 ? stdout : stderr;
    fputs(tag, out);
    fwrite(s->buf, 1, upto, out);
    if (upto == 0 || s->buf[upto - 1] != '\n')
        fputc('\n', out);
    fflush(out);
    memmove(s->buf, s->buf + upto, s->len - upto);
    s->len -= upto;
}

/* Reads what the pipe has; prints whole lines (or a full buffer) tagged with the rank. */
static void pump(struct stream *s, const char *r)
{
    ssize_t n = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
    if (n <= 0) {
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return;
        if (s->len)
            emit(s, r, s->len);
        close(s->fd);
        s->fd = -1;
        return;
    }
    s->len += (size_t)n;
    char *nl;
    while (s->len && (nl = memchr(s->buf, '\n', s->len)))
        emit(s, r, (size_t)(nl - s->buf) + 1);
    if (s->len == sizeof s->buf)
        emit(s, r, s->len);
}

static int open_streams(const struct job *job)
{
    int open = 0;
    for (int r = 0; r < job->n; r++)
        open += (job->ranks[r].streams[0].fd >= 0) + (job->ranks[r].streams[1].fd >= 0);
    return open;
}

/*
 * --keep-going: the job succeeded if some rank exited 0 and none exited
 * with an error; ranks lost to signals are the failures it was meant to
 * survive.  Else the first error, or the first signal if no rank exited.
 */
static int survivors_status(const struct job *job)
{
    int ok = 0, signalled = 0;
    for (int r = 0; r < job->n; r++) {
        int st = job->ranks[r].status;
        if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
            return WEXITSTATUS(st);
        ok += WIFEXITED(st);
        if (WIFSIGNALED(st) && !signalled)
            signalled = 128 + WTERMSIG(st);
    }
    return ok ? 0 : signalled;
}

static int supervise(struct job *job, int sfd)
{
    struct pollfd *p = calloc((size_t)job->n * 2 + 1, sizeof *p);
    struct stream **who = calloc((size_t)job->n * 2 + 1, sizeof *who);
    int *whose = calloc((size_t)job->n * 2 + 1, sizeof *whose);
    long long drain_until = 0;
    while (job->live > 0 || (open_streams(job) && now_ms() < drain_until)) {
        int np = 0;
        p[np++] = (struct pollfd){sfd, POLLIN, 0};
        for (int r = 0; r < job->n; r++)
            for (int k = 0; k < 2; k++)
                if (job->ranks[r].streams[k].fd >= 0) {
                    who[np] = &job->ranks[r].streams[k];
                    whose[np] = r;
                    p[np++] = (struct pollfd){job->ranks[r].streams[k].fd, POLLIN, 0};
                }
        int timeout = job->kill_at ? (int)(job->kill_at - now_ms()) : -1;
        if (job->live == 0)
            timeout = (int)(drain_until - now_ms());
        if (timeout < 0 && (job->kill_at || job->live == 0))
            timeout = 0;
        int ready = poll(p, (nfds_t)np, timeout);
        if (ready < 0 && errno != EINTR)
            break;
        if (ready > 0 && (p[0].revents & POLLIN)) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                if (si.ssi_signo == SIGCHLD)
                    continue; /* reaped below */
                if (job->stopping) {
                    signal_all(job, SIGKILL); /* asked twice: no more grace */
                } else {
                    fprintf(stderr, "collie run: got %s; forwarding it to %d rank(s)\n",
                            strsignal((int)si.ssi_signo), job->live);
                    signal_all(job, (int)si.ssi_signo);
                    job->stopping = 1;
                    job->kill_at = now_ms() + GRACE_MS;
                    if (!job->exit_code)
                        job->exit_code = 128 + (int)si.ssi_signo;
                }
            }
        }
        for (int i = 1; i < np; i++)
            if (p[i].revents & (POLLIN | POLLHUP | POLLERR))
                pump(who[i], job->ranks[whose[i]].tag);
        int before = job->live;
        reap(job);
        if (before > 0 && job->live == 0)
            drain_until = now_ms() + DRAIN_MS;
        if (job->kill_at && job->live > 0 && now_ms() >= job->kill_at) {
            fprintf(stderr,
                    "collie run: %d rank(s) still running %d s after SIGTERM; killing "
                    "them\n",
                    job->live, GRACE_MS / 1000);
            signal_all(job, SIGKILL);
            job->kill_at = 0;
        }
    }
    free(p);
    free(who);
    free(whose);
    return job->keep_going && !job->exit_code ? survivors_status(job) : job->exit_code;
}

/*
 * How many ranks, where rank 0 listens, and whether output is tagged.  One
 * host: every rank here, rendezvous on loopback.  Across hosts: ranks fill the
 * hosts in order, rank 0 listens on the first host, by its name.
 */
static int place(struct job *job, int port)
{
    if (!job->hosts.n) {
        if (!job->n)
            job->n = 1;
        if (port < 0)
            port = pick_port();
        if (port < 0) {
            fprintf(stderr, "collie run: cannot find a free loopback port: %s\n", strerror(errno));
            return -1;
        }
        snprintf(job->addr, sizeof job->addr, "127.0.0.1:%d", port);
        job->master_port = pick_port();
        if (job->master_port < 0 || job->master_port == port)
            job->master_port = port < 65535 ? port + 1 : port - 1;
        return 0;
    }
    if (!job->n)
        job->n = job->hosts.total_slots;
    if (job->n > job->hosts.total_slots) {
        fprintf(stderr, "collie run: %d ranks asked for, but the hosts have %d slot(s)\n", job->n,
                job->hosts.total_slots);
        return -1;
    }
    const struct host *first = &job->hosts.host[0];
    int remote = 0;
    for (int h = 0; h <= hosts_of_rank(&job->hosts, job->n - 1); h++)
        remote |= !job->hosts.host[h].local;
    if (remote && (!strcmp(first->name, "localhost") || !strcmp(first->name, "127.0.0.1"))) {
        fprintf(stderr,
                "collie run: rank 0 would listen on '%s', which the other hosts cannot "
                "reach: name this host by an address they can reach\n",
                first->name);
        return -1;
    }
    if (port < 0) /* a free port here, if rank 0 runs here; else one left to chance */
        port = first->local ? pick_port() : 20000 + (int)(getpid() % 20000);
    snprintf(job->addr, sizeof job->addr, "%s:%d",
             first->local && !remote ? "127.0.0.1" : first->name, port);
    job->master_port = port < 65535 ? port + 1 : port - 1;
    job->tag = 1;
    return 0;
}

/*
 * The options into job and *port; returns the index of the program in argv,
 * or -1 with the exit code in *code (0 after --help).
 */
static int parse(int argc, char **argv, struct job *job, int *port, int *code)
{
    int i = 1;
    *port = -1;
    job->rsh = getenv("COLLIE_RSH") && *getenv("COLLIE_RSH") ? getenv("COLLIE_RSH")
                                                             : "ssh -o BatchMode=yes";
    const char *bind =
        getenv("COLLIE_BIND") && *getenv("COLLIE_BIND") ? getenv("COLLIE_BIND") : "auto";
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--np") || !strcmp(a, "-np")) {
            char *end;
            long n = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || *end || n < 1 || n > 4096) {
                fprintf(stderr, "collie run: %s needs a number of ranks from 1 to 4096\n", a);
                return *code = 2, -1;
            }
            job->n = (int)n;
            i++;
        } else if ((!strcmp(a, "-H") || !strcmp(a, "--hosts") || !strcmp(a, "--hostfile") ||
                    !strcmp(a, "--rsh") || !strcmp(a, "--port") || !strcmp(a, "--bind")) &&
                   i + 1 >= argc) {
            fprintf(stderr, "collie run: %s needs a value\n", a);
            return *code = 2, -1;
        } else if (!strcmp(a, "-H") || !strcmp(a, "--hosts")) {
            if (hosts_parse_list(&job->hosts, argv[++i]) != 0)
                return *code = 2, -1;
        } else if (!strcmp(a, "--hostfile")) {
            if (hosts_parse_file(&job->hosts, argv[++i]) != 0)
                return *code = 2, -1;
        } else if (!strcmp(a, "--rsh")) {
            job->rsh = argv[++i];
        } else if (!strcmp(a, "--port")) {
            char *end;
            *port = (int)strtol(argv[++i], &end, 10);
            if (*end || *port < 1 || *port > 65535) {
                fprintf(stderr, "collie run: --port needs a port number, not '%s'\n", argv[i]);
                return *code = 2, -1;
            }
        } else if (!strcmp(a, "--bind")) {
            bind = argv[++i];
        } else if (!strcmp(a, "--tag-output")) {
            job->tag = 1;
        } else if (!strcmp(a, "--keep-going")) {
            job->keep_going = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            *code = 0;
            return -1;
        } else {
            fprintf(stderr, "collie run: unknown option '%s'\n", a);
            usage(stderr);
            return *code = 2, -1;
        }
    }
    if (strcmp(bind, "auto") && strcmp(bind, "none")) {
        fprintf(stderr, "collie run: --bind (or COLLIE_BIND) is auto or none, not '%s'\n", bind);
        return *code = 2, -1;
    }
    job->bind = !strcmp(bind, "auto");
    if (i >= argc) {
        fprintf(stderr, "collie run: no program to run\n");
        usage(stderr);
        return *code = 2, -1;
    }
    return i;
}

/* Forks rank r of the job running prog; 0, or -1 after stopping the ranks already started. */
static int start_rank(struct job *job, int r, char **prog, const sigset_t *old)
{
    struct rank *k = &job->ranks[r];
    int out_fd[2] = {-1, -1}, err_fd[2] = {-1, -1};
    k->streams[0].fd = k->streams[1].fd = -1;
    if (job->tag && (pipe2(out_fd, O_CLOEXEC) != 0 || pipe2(err_fd, O_CLOEXEC) != 0)) {
        fprintf(stderr, "collie run: pipe: %s\n", strerror(errno));
        stop_all(job);
        return -1;
    }
    int in_fd[2] = {-1, -1}, h = job->hosts.n ? hosts_of_rank(&job->hosts, r) : -1;
    if (h >= 0 && !job->hosts.host[h].local && pipe2(in_fd, O_CLOEXEC) != 0) {
        fprintf(stderr, "collie run: pipe: %s\n", strerror(errno));
        stop_all(job);
        return -1;
    }
    if (h >= 0)
        snprintf(k->tag, sizeof k->tag, "[rank %d@%s] ", r, job->hosts.host[h].name);
    else
        snprintf(k->tag, sizeof k->tag, "[rank %d] ", r);
    k->stdin_fd = in_fd[1];
    pid_t pid = fork();
    if (pid == 0) {
        if (in_fd[1] >= 0)
            close(in_fd[1]);
        child(job, r, in_fd[0], out_fd, err_fd, prog, old);
    }
    if (in_fd[0] >= 0)
        close(in_fd[0]);
    if (in_fd[1] >= 0) { /* the token, then nothing until we close it: see hosts.h */
        const char *token = getenv("COLLIE_TOKEN");
        if (write(in_fd[1], token, strlen(token)) < 0 || write(in_fd[1], "\n", 1) < 0)
            fprintf(stderr, "collie run: cannot hand rank %d its token\n", r);
    }
    if (pid < 0) {
        fprintf(stderr, "collie run: fork for rank %d: %s\n", r, strerror(errno));
        stop_all(job);
        job->exit_code = 1;
        return -1;
    }
    setpgid(pid, pid); /* also here: no race with an early killpg */
    k->pid = pid;
    k->running = 1;
    job->live++;
    if (job->tag) {
        close(out_fd[1]);
        close(err_fd[1]);
        k->streams[0] = (struct stream){.fd = out_fd[0], .out = 1};
        k->streams[1] = (struct stream){.fd = err_fd[0], .out = 2};
    }
    return 0;
}

static int run_cli(int argc, char **argv, struct job *job)
{
    int port, code;
    job->rsh = getenv("COLLIE_RSH") && *getenv("COLLIE_RSH") ? getenv("COLLIE_RSH")
                                                             : "ssh -o BatchMode=yes";
    int i = parse(argc, argv, job, &port, &code);
    if (i < 0)
        return code;
    if (set_token() != 0) {
        fprintf(stderr, "collie run: cannot draw a random COLLIE_TOKEN: %s\n", strerror(errno));
        return 1;
    }
    if (place(job, port) != 0)
        return 2;
    sigset_t mask, old;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, &old);
    int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    job->ranks = calloc((size_t)job->n, sizeof *job->ranks);
    if (sfd < 0 || !job->ranks) {
        fprintf(stderr, "collie run: cannot set up: %s\n", strerror(errno));
        return 1;
    }
    for (int r = 0; r < job->n; r++)
        job->ranks[r].stdin_fd = -1;
    fflush(NULL);
    for (int r = 0; r < job->n; r++)
        if (start_rank(job, r, argv + i, &old) != 0)
            break;
    code = supervise(job, sfd);
    for (int r = 0; r < job->n; r++)
        if (job->ranks[r].stdin_fd >= 0)
            close(job->ranks[r].stdin_fd);
    free(job->ranks);
    close(sfd);
    return code;
}

int collie_tool_run(int argc, char **argv)
{
    struct job job = {.n = 0, .failed_rank = -1};
    int code = run_cli(argc, argv, &job);
    hosts_free(&job.hosts);
    return code;
}
