// SPDX-License-Identifier: GPL-2.0
/*
 * One UDP socket in two epoll sets, with different data (feed handlers
 * watch a socket from a reader set and a supervisor set): each set
 * reports its own data; closing one set, or deleting the socket from it,
 * leaves the other as it was.
 */
#include "pt.h"

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 }, out[4];
	struct sockaddr_in a;
	int s, ep1, ep2, n;
	char b[16];

	pt_init(10);
	s = pt_udp(&a);
	ep1 = pt_epoll_42(s);
	ep2 = epoll_create1(0);
	if (ep2 < 0 || epoll_ctl(ep2, EPOLL_CTL_ADD, s, &ev))
		pt_die("second set");
	pt_send(&a, "abc");
	n = epoll_wait(ep1, out, 4, 1000);
	pt_show_wait("set 1", n, out);
	n = epoll_wait(ep2, out, 4, 1000);
	printf("set 2: %d, data %llu\n", n, n > 0 ? (unsigned long long)out[0].data.u64 : 0ULL);
	PT_SHOW("EPOLL_CTL_DEL from set 2", epoll_ctl(ep2, EPOLL_CTL_DEL, s, NULL));
	n = epoll_wait(ep1, out, 4, 1000);
	pt_show_wait("set 1", n, out);
	PT_SHOW("EPOLL_CTL_ADD to set 2", epoll_ctl(ep2, EPOLL_CTL_ADD, s, &ev));
	PT_SHOW("close(set 1)", close(ep1));
	n = epoll_wait(ep2, out, 4, 1000);
	printf("set 2: %d, data %llu\n", n, n > 0 ? (unsigned long long)out[0].data.u64 : 0ULL);
	PT_SHOW("recv", recv(s, b, sizeof(b), 0));
	n = epoll_wait(ep2, out, 4, 0);
	printf("set 2, drained: %d\n", n);
	return 0;
}
