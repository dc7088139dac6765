// SPDX-License-Identifier: GPL-2.0
/*
 * H1: "bind, build the epoll set, then daemon()": the daemon waits on the
 * set it inherited, which is the same epoll instance, and must get the
 * data it registered.
 */
#include "pt.h"

int main(void)
{
	struct epoll_event ev[4];
	struct sockaddr_in a;
	int s, ep, n;

	pt_init(10);
	s = pt_udp(&a);
	ep = pt_epoll_42(s);
	pt_send(&a, "abc");
	printf("daemon\n");
	if (daemon(1, 1))	/* keep the directory and stdout */
		pt_die("daemon");
	alarm(10);		/* the guard is not inherited */
	n = epoll_wait(ep, ev, 4, 1000);
	pt_show_wait("daemon's epoll_wait", n, ev);
	return 0;
}
