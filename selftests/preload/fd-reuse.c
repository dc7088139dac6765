// SPDX-License-Identifier: GPL-2.0
/*
 * H5, for every call that hands out a new fd: a UDP socket is closed
 * behind the C library's back (syscall(SYS_close)), the call takes the
 * freed number, and the new fd is what the call made: a write or read on
 * it does what it does on that kind of fd, never what a socket would.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "pt.h"

int open64(const char *path, int flags, ...);
int openat64(int dir, const char *path, int flags, ...);
int creat64(const char *path, mode_t mode);

static char path[64];

/* A socket at a number, closed behind our back: that number, free. */
static int hole(void)
{
	struct sockaddr_in a;
	int s = pt_udp(&a);

	syscall(SYS_close, s);
	return s;
}

static void show(const char *what, int want, int fd)
{
	char b[16] = "";
	long w, r;

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	errno = 0;
	w = write(fd, "x", 1);
	printf("%s: the freed number %s; write %ld (%s)", what,
	       fd == want ? "reused" : "not reused", w,
	       w < 0 ? pt_ename(errno) : "ok");
	errno = 0;
	r = read(fd, b, sizeof(b));
	printf(", read %ld (%s)\n", r, r < 0 ? pt_ename(errno) : "ok");
}

int main(void)
{
	int n, fd, p[2], l;
	struct sockaddr_in la = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(la);
	sigset_t m;

	pt_init(20);
	snprintf(path, sizeof(path), "/tmp/fd-reuse.%d", (int)getpid());
#define ONE(what, call) do { n = hole(); fd = (call); show(what, n, fd); \
		close(fd); } while (0)
	ONE("open", open(path, O_RDWR | O_CREAT, 0600));
	ONE("open64", open64(path, O_RDWR | O_CREAT, 0600));
	ONE("openat", openat(AT_FDCWD, path, O_RDWR));
	ONE("openat64", openat64(AT_FDCWD, path, O_RDWR));
	ONE("creat", creat(path, 0600));
	ONE("creat64", creat64(path, 0600));
	ONE("eventfd", eventfd(0, EFD_NONBLOCK));
	ONE("epoll_create", epoll_create(1));
	ONE("epoll_create1", epoll_create1(0));
	ONE("memfd_create", memfd_create("fd-reuse", 0));
	ONE("timerfd_create", timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	ONE("signalfd", signalfd(-1, &m, SFD_NONBLOCK));
	ONE("inotify_init", inotify_init());
	ONE("inotify_init1", inotify_init1(IN_NONBLOCK));
	n = hole();
	if (pipe(p))
		pt_die("pipe");
	show("pipe", n, p[0] == n ? p[0] : p[1]);
	close(p[0]);
	close(p[1]);
	n = hole();
	if (pipe2(p, O_NONBLOCK))
		pt_die("pipe2");
	show("pipe2", n, p[0] == n ? p[0] : p[1]);
	close(p[0]);
	close(p[1]);
	n = hole();
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, p))
		pt_die("socketpair");
	show("socketpair", n, p[0] == n ? p[0] : p[1]);
	close(p[0]);
	close(p[1]);
	/* accept: a TCP connection to ourselves */
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&la, sizeof(la)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&la, &len))
		pt_die("listen");
	for (int i = 0; i < 2; i++) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

		if (connect(c, (struct sockaddr *)&la, sizeof(la)) && errno != EINPROGRESS)
			pt_die("connect");
		pt_sleep_ms(50);
		n = hole();
		fd = i ? accept4(l, NULL, NULL, SOCK_NONBLOCK) :
			 accept(l, NULL, NULL);
		if (!i)
			fcntl(fd, F_SETFL, O_NONBLOCK);
		show(i ? "accept4" : "accept", n, fd);
		close(fd);
		close(c);
	}
	close(l);
	unlink(path);
	return 0;
}
