// SPDX-License-Identifier: GPL-2.0
/*
 * H7: fork() in a multi-threaded program. One thread creates UDP sockets,
 * puts them in an epoll set, installs a handler and closes them, in a
 * loop; the main thread forks children that create and close a socket,
 * reset a handler and _exit(), as a child does before exec. Every child
 * must exit within 2 s, whatever the other thread held at the fork.
 * Argument: the number of forks (3,000).
 */
#include <poll.h>
#include <pthread.h>
#include <sys/pidfd.h>
#include <sys/wait.h>

#include "pt.h"

static int stop;

static void nop(int sig)
{
	(void)sig;
}

static void *churn(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sockaddr_in a;
	int ep = *(int *)arg, s;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		s = pt_udp(&a);
		epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
		signal(SIGUSR1, nop);
		close(s);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int i, forks = argc > 1 ? atoi(argv[1]) : 3000, ep, pfd, st;
	struct pollfd p;
	pthread_t t;
	pid_t pid;

	pt_init(120);
	ep = epoll_create1(0);
	if (ep < 0 || pthread_create(&t, NULL, churn, &ep))
		pt_die("setup");
	for (i = 0; i < forks; i++) {
		pid = fork();
		if (pid < 0)
			pt_die("fork");
		if (!pid) {
			close(socket(AF_INET, SOCK_DGRAM, 0));
			signal(SIGUSR1, SIG_DFL);
			_exit(0);
		}
		pfd = pidfd_open(pid, 0);
		if (pfd < 0)
			pt_die("pidfd_open");
		p = (struct pollfd){ .fd = pfd, .events = POLLIN };
		if (poll(&p, 1, 2000) != 1) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			pt_ok(false, "fork %d of %d: the child did not exit within 2 s",
			      i + 1, forks);
			break;
		}
		close(pfd);
		if (waitpid(pid, &st, 0) != pid || st) {
			pt_ok(false, "fork %d of %d: the child's exit status is %#x",
			      i + 1, forks, st);
			break;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	if (i == forks)
		pt_ok(true, "%d forks beside a socket-churning thread: every child exited within 2 s",
		      forks);
	return 0;
}
