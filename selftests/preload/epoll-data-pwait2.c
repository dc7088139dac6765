// SPDX-License-Identifier: GPL-2.0
/*
 * H1: epoll_pwait2() (glibc 2.35 on; systemd's sd-event waits with it)
 * reports the data the program registered for a UDP socket, as
 * epoll_wait() does.
 */
#include "pt.h"

int main(void)
{
	struct timespec t = { 1, 0 };
	struct epoll_event ev[4];
	struct sockaddr_in a;
	int s, ep, n;

	pt_init(10);
	s = pt_udp(&a);
	ep = pt_epoll_42(s);
	pt_send(&a, "abc");
	n = epoll_pwait2(ep, ev, 4, &t, NULL);
	pt_show_wait("epoll_pwait2", n, ev);
	n = epoll_wait(ep, ev, 4, 1000);
	pt_show_wait("epoll_wait", n, ev);
	return 0;
}
