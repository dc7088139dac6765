// SPDX-License-Identifier: GPL-2.0
/*
 * H1: a fork() child waits on the epoll set it inherited (the same epoll
 * instance as its parent's) and must get the data the parent registered;
 * the parent's view must be unchanged afterwards.
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
	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (!pid) {
		alarm(10);
		n = epoll_wait(ep, ev, 4, 1000);
		pt_show_wait("child's epoll_wait", n, ev);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		pt_die("waitpid");
	printf("child exit status %d\n", st);
	n = epoll_wait(ep, ev, 4, 1000);
	pt_show_wait("parent's epoll_wait", n, ev);
	return 0;
}
