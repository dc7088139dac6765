// SPDX-License-Identifier: GPL-2.0
/*
 * H2's second window: sockets are added to an epoll set, sent to and
 * closed by one thread while another waits on the set in a loop. Every
 * event the waiter gets carries data that was registered (1000 + the
 * round), and the waiter ends normally. Under ASan (make asan) a member
 * freed while a wait still used it is reported.
 */
#include <pthread.h>

#include "pt.h"

#define ROUNDS 300

static int ep;
static int stop;
static long events, foreign;

static void *waiter(void *arg)
{
	struct epoll_event out[8];
	int n, i;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		n = epoll_wait(ep, out, 8, 5);
		for (i = 0; i < n; i++) {
			events++;
			if (out[i].data.u64 < 1000 || out[i].data.u64 >= 1000 + ROUNDS)
				foreign++;
		}
	}
	return NULL;
}

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sockaddr_in a;
	pthread_t t;
	int i, s;

	pt_init(20);
	ep = epoll_create1(0);
	if (ep < 0 || pthread_create(&t, NULL, waiter, NULL))
		pt_die("setup");
	for (i = 0; i < ROUNDS; i++) {
		s = pt_udp(&a);
		ev.data.u64 = 1000 + (uint64_t)i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev))
			pt_die("epoll_ctl");
		pt_send(&a, "abc");
		if (i % 3)
			pt_sleep_ms(1);
		close(s);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("%d sockets added, sent to and closed while a thread waited\n", ROUNDS);
	printf("events with data never registered: %ld\n", foreign);
	printf("the waiter saw events: %s\n", events > 0 ? "yes" : "no");
	return 0;
}
