/* SPDX-License-Identifier: BSD-3-Clause */
/* launch.c - starting a job of `collie` ranks from a subcommand, and knowing when we are one. */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/tools_api.h"

int tools_in_a_job(void) { return collie__tools_in_a_job(); }

int tools_self_path(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return 0;
}

int tools_sibling_path(const char *name, char *buf, size_t len)
{
    if (tools_self_path(buf, len))
        return -1;
    char *slash = strrchr(buf, '/');
    size_t dir = slash ? (size_t)(slash - buf) + 1 : 0;
    if (dir + strlen(name) + 1 > len)
        return -1;
    strcpy(buf + dir, name);
    return 0;
}

static volatile sig_atomic_t job_pid, interrupted;

static void forward(int sig)
{
    interrupted = sig;
    if (job_pid > 0)
        kill((pid_t)job_pid, sig);
}

int tools_interrupted(void) { return interrupted; }

int tools_run_job(char **argv)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction fwd = {.sa_handler = forward}, old[3];
    sigemptyset(&fwd.sa_mask);
    if (interrupted)
        return -1; /* stopped before: start nothing more */
    fflush(NULL);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &fwd, &old[i]);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 3; i++)
            sigaction(sigs[i], &old[i], NULL);
        execvp(argv[0], argv);
        fprintf(stderr, "collie: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    job_pid = pid;
    if (pid > 0 && interrupted) /* came between the handler and the fork */
        kill(pid, interrupted);
    int status = 0, waited = -1;
    while (pid > 0 && (waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    job_pid = 0;
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    if (waited < 0)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 && !interrupted ? 0 : -1;
}
