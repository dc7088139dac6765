// SPDX-License-Identifier: GPL-2.0
/*
 * L13: a bad user pointer makes the kernel return EFAULT, never SIGSEGV:
 * receive buffers, address lengths, iovecs, ioctl arguments, pollfd
 * arrays, fd_sets and epoll event arrays. Each case runs in a process of
 * its own (this program again, not a fork: a fork child is not the
 * library's full state), so a signal ends only that case.
 */
#include <poll.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "pt.h"

/* an address never mapped, which the compiler cannot see through */
static void *volatile bad = (void *)16;
#define BAD (bad)

extern char **environ;

static const char *const cases[] = {
	"recv", "recvfrom-addrlen", "readv-iov", "recvmsg-iov", "read",
	"ioctl-FIONBIO", "ioctl-FIONREAD", "poll", "select", "epoll_wait",
};

static long one(const char *c)
{
	struct epoll_event evs[1];
	struct sockaddr_in a, from;
	struct iovec iov = { NULL, 16 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct timeval tv = { 0, 0 };
	int s = pt_udp(&a), ep;
	char b[16];

	(void)evs;
	iov.iov_base = BAD;
	pt_send(&a, "abc");
	if (!strcmp(c, "recv"))
		return recv(s, BAD, 16, 0);
	if (!strcmp(c, "recvfrom-addrlen"))
		return recvfrom(s, b, sizeof(b), 0, (struct sockaddr *)&from, BAD);
	if (!strcmp(c, "readv-iov"))
		return readv(s, BAD, 1);
	if (!strcmp(c, "recvmsg-iov"))
		return recvmsg(s, &m, 0);
	if (!strcmp(c, "read"))
		return read(s, BAD, 16);
	if (!strcmp(c, "ioctl-FIONBIO"))
		return ioctl(s, FIONBIO, NULL);
	if (!strcmp(c, "ioctl-FIONREAD"))
		return ioctl(s, FIONREAD, NULL);
	if (!strcmp(c, "poll"))
		return poll(BAD, 1, 0);
	if (!strcmp(c, "select"))
		return select(s + 1, BAD, NULL, NULL, &tv);
	ep = pt_epoll_42(s);
	return epoll_wait(ep, BAD, 1, 0);
}

int main(int argc, char **argv)
{
	char exe[4096];
	unsigned int i;
	ssize_t n;
	pid_t pid;
	int st;

	if (argc > 1) {
		long r;

		alarm(5);
		setvbuf(stdout, NULL, _IOLBF, 0);
		errno = 0;
		r = one(argv[1]);
		if (r < 0)
			printf("%s: -1 %s\n", argv[1], pt_ename(errno));
		else
			printf("%s: %ld\n", argv[1], r);
		return 0;
	}
	pt_init(30);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		pt_die("/proc/self/exe");
	exe[n] = 0;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *av[] = { exe, (char *)cases[i], NULL };

		if (posix_spawn(&pid, exe, NULL, NULL, av, environ))
			pt_die("posix_spawn");
		waitpid(pid, &st, 0);
		if (WIFSIGNALED(st))
			printf("%s: killed by %s\n", cases[i], sigabbrev_np(WTERMSIG(st)));
	}
	return 0;
}
