/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the host preload probes (selftests/preload/). Each probe runs
 * twice, on kernel sockets and with libvmak preloaded (selftests/preload/
 * run), and prints either a transcript, which must be the same in both runs
 * (so: no pointers, pids, fd numbers that the library could shift, or
 * timings; errno by name), or, for a property, lines that start with "ok"
 * or "not ok". Only the C library is used here: the probes are what an
 * unmodified program does.
 */
#ifndef PT_H
#define PT_H

#include <arpa/inet.h>

#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline const char *pt_ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

static inline void pt_die(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	fprintf(stderr, "probe setup failed: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", pt_ename(e));
	exit(2);
}

/*
 * Line-buffered stdout (a fork must not copy half a transcript) and a
 * guard: SIGALRM's default action ends a probe that hangs, and the runner
 * reports the signal.
 */
static inline void pt_init(unsigned int guard_s)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(guard_s);
}

/* Print a call's result: "what = n" or "what = -1 ENAME". */
#define PT_SHOW(what, call) do {					\
	errno = 0;							\
	long __r = (long)(call);					\
	int __e = errno;						\
	if (__r < 0)							\
		printf("%s = %ld %s\n", what, __r, pt_ename(__e));	\
	else								\
		printf("%s = %ld\n", what, __r);			\
} while (0)

static inline int64_t pt_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static inline void pt_sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/*
 * A UDP socket bound to 127.0.0.1 and an ephemeral port, its name in *a.
 * In the VM (selftests/64-preload-probes.sh) PT_ADDR names an address of
 * a device the module hooks instead: the socket then has a ring (which
 * stays empty: what it is sent from its own host comes through the
 * kernel socket), and the library's own machinery runs around it.
 */
static inline int pt_udp(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	const char *addr = getenv("PT_ADDR");

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (addr && inet_pton(AF_INET, addr, &a->sin_addr) != 1)
		pt_die("PT_ADDR");
	if (s < 0 || bind(s, (struct sockaddr *)a, sizeof(*a)) ||
	    getsockname(s, (struct sockaddr *)a, &len))
		pt_die("UDP socket on 127.0.0.1 (or PT_ADDR)");
	return s;
}

/* One datagram to a, from a socket of its own. */
static inline void pt_send(const struct sockaddr_in *a, const char *msg)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0 || sendto(s, msg, strlen(msg), 0, (const struct sockaddr *)a,
			    sizeof(*a)) != (ssize_t)strlen(msg))
		pt_die("send");
	close(s);
}

static inline pid_t pt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* A thread says who it is; another waits until it has. */
static inline void pt_tid_publish(pid_t *tid)
{
	__atomic_store_n(tid, pt_gettid(), __ATOMIC_RELEASE);
}

static inline pid_t pt_tid_await(pid_t *tid)
{
	pid_t t;

	while (!(t = __atomic_load_n(tid, __ATOMIC_ACQUIRE)))
		pt_sleep_ms(1);
	return t;
}

/*
 * Wait until thread tid sleeps in a system call other than a futex or a
 * sleep (so: in the receive or wait it was started for, whichever system
 * call the library makes of it), then give it 20 ms more.
 */
static inline void pt_wait_blocked(pid_t tid)
{
	char path[64], buf[512], *p;
	long nr;
	FILE *f;
	int i;

	for (i = 0; i < 5000; i++) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
		f = fopen(path, "re");
		if (!f)
			pt_die("%s", path);
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		p = p ? strrchr(buf, ')') : NULL;
		if (p && p[1] == ' ' && p[2] == 'S') {
			snprintf(path, sizeof(path),
				 "/proc/self/task/%d/syscall", tid);
			f = fopen(path, "re");
			if (!f)
				pt_die("%s", path);
			nr = fscanf(f, "%ld", &nr) == 1 ? nr : -1;
			fclose(f);
			if (nr >= 0 && nr != SYS_futex && nr != SYS_nanosleep &&
			    nr != SYS_clock_nanosleep) {
				pt_sleep_ms(20);
				return;
			}
		}
		pt_sleep_ms(1);
	}
	errno = ETIMEDOUT;
	pt_die("thread %d never blocked", tid);
}

/* An epoll set holding s for EPOLLIN with data.u64 = 42. */
static inline int pt_epoll_42(int s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 };
	int ep = epoll_create1(0);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev))
		pt_die("epoll set");
	return ep;
}

/* What an epoll wait returned, without the value of a wrong data. */
static inline void pt_show_wait(const char *what, int n,
				const struct epoll_event *ev)
{
	int i;

	if (n < 0) {
		printf("%s: %d %s\n", what, n, pt_ename(errno));
		return;
	}
	printf("%s: %d event%s\n", what, n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		if (ev[i].data.u64 == 42)
			printf("  events %#x data 42\n", ev[i].events);
		else
			printf("  events %#x data NOT 42 (not what was registered)\n",
			       ev[i].events);
	}
}

/* Is libvmak in this process (preloaded or linked)? */
static inline bool pt_vmak_loaded(void)
{
	return dlsym(RTLD_DEFAULT, "vmak_family") != NULL;
}

/* Property probes: one line each, as TAP. */
static int pt_failed __attribute__((unused));

static inline void pt_ok(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		pt_failed = 1;
}

#endif
