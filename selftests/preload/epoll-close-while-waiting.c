// SPDX-License-Identifier: GPL-2.0
/*
 * H2: one thread waits in epoll_wait() on a set holding a UDP socket while
 * another closes the epoll fd, which Linux allows: the wait keeps the
 * epoll instance, and a datagram that arrives afterwards ends it with the
 * data registered. (The library freed its half of the set under the
 * waiter; the ASan run of `make asan` names the use after free.)
 */
#include <pthread.h>

#include "pt.h"

static int ep;
static pid_t tid;
static struct epoll_event ev[4];
static int n, err;

static void *waiter(void *arg)
{
	(void)arg;
	pt_tid_publish(&tid);
	n = epoll_wait(ep, ev, 4, 3000);
	err = errno;
	return NULL;
}

int main(void)
{
	struct sockaddr_in a;
	pthread_t t;
	int s;

	pt_init(10);
	s = pt_udp(&a);
	ep = pt_epoll_42(s);
	if (pthread_create(&t, NULL, waiter, NULL))
		pt_die("pthread_create");
	pt_wait_blocked(pt_tid_await(&tid));
	PT_SHOW("close(epfd) while waited on", close(ep));
	pt_send(&a, "abc");
	pthread_join(t, NULL);
	errno = err;
	pt_show_wait("the waiter's epoll_wait", n, ev);
	return 0;
}
