// SPDX-License-Identifier: GPL-2.0
/*
 * H1: a copy of an epoll fd (dup, dup2, dup3, F_DUPFD, F_DUPFD_CLOEXEC) is
 * the same epoll instance: a wait on it reports the data the program
 * registered through the original.
 */
#include <fcntl.h>

#include "pt.h"

static void wait_on(const char *how, int fd)
{
	struct epoll_event ev[4];
	int n;

	if (fd < 0) {
		printf("%s: %s\n", how, pt_ename(errno));
		return;
	}
	n = epoll_wait(fd, ev, 4, 1000);
	pt_show_wait(how, n, ev);
	close(fd);
}

int main(void)
{
	struct sockaddr_in a;
	int s, ep, spare;

	pt_init(10);
	s = pt_udp(&a);
	ep = pt_epoll_42(s);
	pt_send(&a, "abc");
	spare = open("/dev/null", O_RDONLY);	/* a number to dup onto */
	if (spare < 0)
		pt_die("/dev/null");
	wait_on("dup", dup(ep));
	wait_on("dup2", dup2(ep, spare));
	spare = open("/dev/null", O_RDONLY);
	if (spare < 0)
		pt_die("/dev/null");
	wait_on("dup3", dup3(ep, spare, O_CLOEXEC));
	wait_on("F_DUPFD", fcntl(ep, F_DUPFD, 0));
	wait_on("F_DUPFD_CLOEXEC", fcntl(ep, F_DUPFD_CLOEXEC, 0));
	wait_on("the original", ep);
	return 0;
}
