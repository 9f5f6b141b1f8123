/* SPDX-License-Identifier: BSD-3-Clause */
/* free_port.c - prints a free TCP port on the loopback interface, for the shell tests. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) ||
        getsockname(s, (struct sockaddr *)&a, &len))
        return 1;
    printf("%d\n", ntohs(a.sin_port));
    close(s);
    return 0;
}
