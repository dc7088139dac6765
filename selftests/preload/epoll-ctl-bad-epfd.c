// SPDX-License-Identifier: GPL-2.0
/*
 * L6: epoll_ctl() with a UDP socket's fd where the epoll fd belongs fails
 * (EINVAL) and changes nothing: the socket still receives, joins a real
 * epoll set with its data, and when everything is closed the process
 * holds no more fds than on kernel sockets. Twice: what a second round
 * leaves beyond the first is a leak (a first round may leave what the
 * library keeps for the process: a ring set's fd, waiting for the next
 * socket).
 */
#include <dirent.h>

#include "pt.h"

/* Open fds above stderr, other than the listing's own. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		pt_die("/proc/self/fd");
	while ((e = readdir(d)))
		if (atoi(e->d_name) > 2 && atoi(e->d_name) != dirfd(d))
			n++;
	closedir(d);
	return n;
}

static void round_trip(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 }, out[4];
	struct sockaddr_in a1, a2;
	int s1, s2, ep, n;
	char b[16];

	s1 = pt_udp(&a1);
	s2 = pt_udp(&a2);
	PT_SHOW("epoll_ctl(sock1, ADD, sock2)", epoll_ctl(s1, EPOLL_CTL_ADD, s2, &ev));
	PT_SHOW("epoll_wait(sock1)", epoll_wait(s1, out, 4, 0));
	pt_send(&a1, "abc");
	PT_SHOW("recv(sock1)", recv(s1, b, sizeof(b), 0));
	ep = pt_epoll_42(s1);
	pt_send(&a1, "abc");
	n = epoll_wait(ep, out, 4, 1000);
	pt_show_wait("sock1 in a real set", n, out);
	PT_SHOW("recv(sock1)", recv(s1, b, sizeof(b), 0));
	PT_SHOW("close(sock1)", close(s1));
	PT_SHOW("close(sock2)", close(s2));
	PT_SHOW("close(epfd)", close(ep));
}

int main(void)
{
	int after1;

	pt_init(10);
	round_trip();
	after1 = open_fds();
	round_trip();
	printf("fds open beyond those after the first round: %d\n",
	       open_fds() - after1);
	return 0;
}
