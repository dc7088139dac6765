// SPDX-License-Identifier: GPL-2.0
/*
 * H1: a dup3() or dup2() onto the socket's number that fails closes
 * nothing: the socket stays in the epoll set with the data registered,
 * and still receives.
 */
#include <fcntl.h>

#include "pt.h"

int main(void)
{
	struct epoll_event ev[4];
	struct sockaddr_in a;
	int s, ep, n, closed;
	char b[16];

	pt_init(10);
	s = pt_udp(&a);
	ep = pt_epoll_42(s);
	pt_send(&a, "abc");
	PT_SHOW("dup3(0, sock, bad flags)", dup3(0, s, 0x4000));
	n = epoll_wait(ep, ev, 4, 1000);
	pt_show_wait("epoll_wait", n, ev);

	closed = open("/dev/null", O_RDONLY);
	if (closed < 0)
		pt_die("/dev/null");
	close(closed);
	PT_SHOW("dup2(closed fd, sock)", dup2(closed, s));
	n = epoll_wait(ep, ev, 4, 1000);
	pt_show_wait("epoll_wait", n, ev);
	PT_SHOW("recv", recv(s, b, sizeof(b), MSG_DONTWAIT));
	return 0;
}
