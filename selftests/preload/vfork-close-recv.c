// SPDX-License-Identifier: GPL-2.0
/*
 * M5: what a vfork() child does to its own fds leaves the parent's alone.
 * A child that closes the socket before _exit(): the parent's epoll set
 * still reports the data registered, and its recv() still works. A child
 * that dup2()s the socket onto the number of the parent's pipe (as an
 * inetd-style spawn puts a socket on 0): the parent's pipe is a pipe.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "pt.h"

int main(void)
{
	struct epoll_event ev[4];
	struct sockaddr_in a;
	int s, ep, n, p[2];
	char b[16];
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
	waitpid(pid, NULL, 0);
	n = epoll_wait(ep, ev, 4, 1000);
	pt_show_wait("epoll_wait after the child closed the socket", n, ev);
	PT_SHOW("recv", recv(s, b, sizeof(b), MSG_DONTWAIT));
	pt_send(&a, "defg");
	PT_SHOW("recv", recv(s, b, sizeof(b), 0));

	s = pt_udp(&a);		/* a socket the first child did not touch */
	if (pipe2(p, O_NONBLOCK))
		pt_die("pipe");
	pid = vfork();
	if (pid < 0)
		pt_die("vfork");
	if (!pid) {
		dup2(s, p[1]);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	PT_SHOW("write(the parent's pipe)", write(p[1], "x", 1));
	PT_SHOW("read(the parent's pipe)", read(p[0], b, sizeof(b)));
	pt_send(&a, "hi");
	PT_SHOW("recv", recv(s, b, sizeof(b), 0));
	return 0;
}
