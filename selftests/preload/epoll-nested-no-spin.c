// SPDX-License-Identifier: GPL-2.0
/*
 * A feed handler's nested epoll sets must not spin: after the inner set
 * (holding two UDP sockets) was drained, a 500 ms wait on the outer set
 * sleeps (under 100 ms of CPU) and returns 0, and a wait without timeout
 * on the outer set sleeps until a datagram arrives 300 ms later.
 */
#include <pthread.h>

#include "pt.h"

static struct sockaddr_in a;

static int64_t cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void *late(void *arg)
{
	(void)arg;
	pt_sleep_ms(300);
	pt_send(&a, "late");
	return NULL;
}

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 }, out[4];
	struct sockaddr_in a2;
	int s, s2, in, outer, n;
	int64_t c0, t0;
	pthread_t t;
	char b[16];

	pt_init(10);
	s = pt_udp(&a);
	s2 = pt_udp(&a2);
	in = pt_epoll_42(s);
	if (epoll_ctl(in, EPOLL_CTL_ADD, s2, &ev))
		pt_die("inner set");
	outer = epoll_create1(0);
	if (outer < 0 || epoll_ctl(outer, EPOLL_CTL_ADD, in, &ev))
		pt_die("outer set");
	pt_send(&a, "abc");
	pt_send(&a2, "abc");
	epoll_wait(outer, out, 4, 1000);
	epoll_wait(in, out, 4, 0);
	if (recv(s, b, sizeof(b), 0) < 0 || recv(s2, b, sizeof(b), 0) < 0)
		pt_die("recv");

	c0 = cpu_ms();
	t0 = pt_now_ms();
	n = epoll_wait(outer, out, 4, 500);
	pt_ok(n == 0 && pt_now_ms() - t0 >= 450 && cpu_ms() - c0 < 100,
	      "a 500 ms wait on the outer set after the inner set drained: returned %d after %lld ms, %lld ms of CPU",
	      n, (long long)(pt_now_ms() - t0), (long long)(cpu_ms() - c0));

	if (pthread_create(&t, NULL, late, NULL))
		pt_die("pthread_create");
	c0 = cpu_ms();
	t0 = pt_now_ms();
	n = epoll_wait(outer, out, 4, -1);
	pt_ok(n == 1 && pt_now_ms() - t0 >= 250 && cpu_ms() - c0 < 100,
	      "a wait without timeout on the outer set: returned %d after %lld ms (the datagram came at 300), %lld ms of CPU",
	      n, (long long)(pt_now_ms() - t0), (long long)(cpu_ms() - c0));
	pthread_join(t, NULL);
	return 0;
}
