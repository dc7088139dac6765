// SPDX-License-Identifier: GPL-2.0
/*
 * A feed handler's nested epoll sets: an inner set holds a UDP socket,
 * the outer set holds the inner one. A datagram makes both ready; once
 * the inner set is drained (the datagram read), the outer set reports
 * nothing and its wait returns 0 at its timeout.
 */
#include "pt.h"

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 }, out[4];
	struct sockaddr_in a;
	int s, in, outer, n, round;
	char b[16];

	pt_init(10);
	s = pt_udp(&a);
	in = pt_epoll_42(s);
	outer = epoll_create1(0);
	if (outer < 0 || epoll_ctl(outer, EPOLL_CTL_ADD, in, &ev))
		pt_die("outer set");
	n = epoll_wait(outer, out, 4, 0);
	pt_show_wait("outer, nothing queued", n, out);
	for (round = 0; round < 3; round++) {
		pt_send(&a, "abc");
		n = epoll_wait(outer, out, 4, 1000);
		pt_show_wait("outer, one queued", n, out);
		n = epoll_wait(in, out, 4, 0);
		pt_show_wait("inner", n, out);
		PT_SHOW("recv", recv(s, b, sizeof(b), 0));
		n = epoll_wait(in, out, 4, 0);
		pt_show_wait("inner, drained", n, out);
		n = epoll_wait(outer, out, 4, 200);
		pt_show_wait("outer, after the inner set drained", n, out);
	}
	return 0;
}
