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

#include "tools.h"

#define GRACE_MS 3000 /* SIGTERM to SIGKILL */
#define DRAIN_MS 1000 /* output still open after every rank exited */

struct stream {
    int fd;      /* read end of the rank's pipe, -1 when closed */
    int out;     /* where its lines go: 1 or 2 */
    char buf[8192];
    size_t len;
};

struct rank {
    pid_t pid;
    int running;
    int status;
    struct stream streams[2];
};

struct job {
    int n, tag;
    struct rank *ranks;
    int live;
    int failed_rank;   /* first rank that failed, -1 if none */
    int exit_code;
    int stopping;      /* SIGTERM sent to everyone */
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
    fprintf(out, "usage: collie run -n N [--tag-output] [--] PROGRAM [ARGS...]\n"
                 "  -n, --np N        number of ranks to start on this host\n"
                 "  --tag-output      prefix every output line with [rank R]\n"
                 "Each rank gets COLLIE_RANK, COLLIE_SIZE, COLLIE_LOCAL_RANK, COLLIE_LOCAL_SIZE\n"
                 "COLLIE_ADDR and a random COLLIE_TOKEN (unless one is set). If a rank fails, the others are stopped (SIGTERM, then\n"
                 "SIGKILL after %d s) and collie run exits with that rank's status.\n",
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

static void set_env_int(const char *name, int v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d", v);
    setenv(name, buf, 1);
}

static void child(const struct job *job, int r, int port, int out_fd[2], int err_fd[2],
                  char **argv, const sigset_t *old_mask)
{
    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    if (job->tag) {
        dup2(out_fd[1], 1);
        dup2(err_fd[1], 2);
        close(out_fd[0]), close(out_fd[1]), close(err_fd[0]), close(err_fd[1]);
    }
    /* In its own process group a rank may not read the terminal; only rank 0 gets a piped stdin. */
    if (r != 0 || isatty(0)) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
    }
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    set_env_int("COLLIE_RANK", r);
    set_env_int("COLLIE_SIZE", job->n);
    set_env_int("COLLIE_LOCAL_RANK", r);
    set_env_int("COLLIE_LOCAL_SIZE", job->n);
    setenv("COLLIE_ADDR", addr, 1);
    execvp(argv[0], argv);
    fprintf(stderr, "collie run: cannot start '%s' for rank %d: %s\n", argv[0], r,
            strerror(errno));
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
            if (failed && job->failed_rank < 0) {
                char how[96];
                describe(status, how, sizeof how);
                job->failed_rank = r;
                job->exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
                if (job->live > 0 && !job->stopping)
                    fprintf(stderr, "collie run: rank %d (pid %d) %s; stopping the other %d "
                                    "rank(s)\n", r, (int)pid, how, job->live);
                else
                    fprintf(stderr, "collie run: rank %d (pid %d) %s\n", r, (int)pid, how);
                stop_all(job);
            }
        }
    }
}

static void emit(struct stream *s, int r, size_t upto)
{
    char prefix[32];
    int plen = snprintf(prefix, sizeof prefix, "[rank %d] ", r);
    FILE *out = s->out == 1 ? stdout : stderr;
    fwrite(prefix, 1, (size_t)plen, out);
    fwrite(s->buf, 1, upto, out);
    if (upto == 0 || s->buf[upto - 1] != '\n')
        fputc('\n', out);
    fflush(out);
    memmove(s->buf, s->buf + upto, s->len - upto);
    s->len -= upto;
}

/* Reads what the pipe has; prints whole lines (or a full buffer) tagged with the rank. */
static void pump(struct stream *s, int r)
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
                pump(who[i], whose[i]);
        int before = job->live;
        reap(job);
        if (before > 0 && job->live == 0)
            drain_until = now_ms() + DRAIN_MS;
        if (job->kill_at && job->live > 0 && now_ms() >= job->kill_at) {
            fprintf(stderr, "collie run: %d rank(s) still running %d s after SIGTERM; killing "
                            "them\n", job->live, GRACE_MS / 1000);
            signal_all(job, SIGKILL);
            job->kill_at = 0;
        }
    }
    free(p);
    free(who);
    free(whose);
    return job->exit_code;
}

int collie_tool_run(int argc, char **argv)
{
    struct job job = {.n = 1, .failed_rank = -1};
    int i = 1;
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
                return 2;
            }
            job.n = (int)n;
            i++;
        } else if (!strcmp(a, "--tag-output")) {
            job.tag = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "collie run: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "collie run: no program to run\n");
        usage(stderr);
        return 2;
    }
    if (set_token() != 0) {
        fprintf(stderr, "collie run: cannot draw a random COLLIE_TOKEN: %s\n", strerror(errno));
        return 1;
    }
    int port = pick_port();
    if (port < 0) {
        fprintf(stderr, "collie run: cannot find a free loopback port: %s\n", strerror(errno));
        return 1;
    }
    sigset_t mask, old;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, &old);
    int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    job.ranks = calloc((size_t)job.n, sizeof *job.ranks);
    if (sfd < 0 || !job.ranks) {
        fprintf(stderr, "collie run: cannot set up: %s\n", strerror(errno));
        return 1;
    }
    fflush(NULL);
    for (int r = 0; r < job.n; r++) {
        struct rank *k = &job.ranks[r];
        int out_fd[2] = {-1, -1}, err_fd[2] = {-1, -1};
        k->streams[0].fd = k->streams[1].fd = -1;
        if (job.tag && (pipe2(out_fd, O_CLOEXEC) != 0 || pipe2(err_fd, O_CLOEXEC) != 0)) {
            fprintf(stderr, "collie run: pipe: %s\n", strerror(errno));
            stop_all(&job);
            break;
        }
        pid_t pid = fork();
        if (pid == 0)
            child(&job, r, port, out_fd, err_fd, argv + i, &old);
        if (pid < 0) {
            fprintf(stderr, "collie run: fork for rank %d: %s\n", r, strerror(errno));
            stop_all(&job);
            job.exit_code = 1;
            break;
        }
        setpgid(pid, pid); /* also here: no race with an early killpg */
        k->pid = pid;
        k->running = 1;
        job.live++;
        if (job.tag) {
            close(out_fd[1]);
            close(err_fd[1]);
            k->streams[0] = (struct stream){.fd = out_fd[0], .out = 1};
            k->streams[1] = (struct stream){.fd = err_fd[0], .out = 2};
        }
    }
    int code = supervise(&job, sfd);
    free(job.ranks);
    close(sfd);
    return code;
}
