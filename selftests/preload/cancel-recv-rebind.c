// SPDX-License-Identifier: GPL-2.0
/*
 * M4: a thread blocked in recv() is cancelled (recv is a cancellation
 * point) and joined; the socket is closed, and its port bound again. The
 * cancelled call leaks nothing, so the port is free.
 */
#include <pthread.h>

#include "pt.h"

static int s;
static pid_t tid;

static void *receiver(void *arg)
{
	char b[16];

	(void)arg;
	pt_tid_publish(&tid);
	recv(s, b, sizeof(b), 0);
	return (void *)1;	/* not reached: cancelled */
}

int main(void)
{
	struct sockaddr_in a;
	pthread_t t;
	void *res;
	int s2;

	pt_init(10);
	s = pt_udp(&a);
	if (pthread_create(&t, NULL, receiver, NULL))
		pt_die("pthread_create");
	pt_wait_blocked(pt_tid_await(&tid));
	printf("pthread_cancel = %d\n", pthread_cancel(t));
	pthread_join(t, &res);
	printf("the receiver was cancelled: %s\n",
	       res == PTHREAD_CANCELED ? "yes" : "no");
	PT_SHOW("close", close(s));
	s2 = socket(AF_INET, SOCK_DGRAM, 0);
	PT_SHOW("bind(the same port)", bind(s2, (struct sockaddr *)&a, sizeof(a)));
	return 0;
}
