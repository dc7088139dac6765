// SPDX-License-Identifier: GPL-2.0
/*
 * H1 (and M5): a vfork() child closes its copy of the socket before
 * _exit(), as a child does before exec. The child has its own fd table:
 * the parent's socket and epoll set are untouched, so the parent's wait
 * reports the data it registered.
 */
#include <sys/wait.h>

#include "pt.h"

int main(void)
{
	struct epoll_event ev[4];
	struct sockaddr_in a;
	int s, ep, n, st;
	pid_t pid;

	pt_init(10);
	s = pt_udp(&a);
	ep = pt_epoll_42(s);
	pt_send(&a, "abc");
	pid = vfork();
	if (pid < 0)
		pt_die("vfork");
	if (!pid) {
		close(s);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		pt_die("waitpid");
	printf("child exit status %d\n", st);
	n = epoll_wait(ep, ev, 4, 1000);
	pt_show_wait("parent's epoll_wait", n, ev);
	return 0;
}
