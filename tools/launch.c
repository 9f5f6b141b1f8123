/* launch.c - starting a job of `collie` ranks from a subcommand, and knowing when we are one. */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
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

int tools_run_job(char **argv)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "collie: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
