// SPDX-License-Identifier: GPL-2.0
/*
 * L1: SO_RCVTIMEO of 49.7 days (4,294,968 s; in ms, above 2^32) is a long
 * wait: a recv() is still blocked after 1 s and gets the datagram another
 * thread sends at 1.2 s.
 */
#include <pthread.h>

#include "pt.h"

static struct sockaddr_in a;

static void *late(void *arg)
{
	(void)arg;
	pt_sleep_ms(1200);
	pt_send(&a, "late");
	return NULL;
}

int main(void)
{
	struct timeval tv = { 4294968, 0 };
	socklen_t len = sizeof(tv);
	pthread_t t;
	char b[16];
	int64_t t0;
	int s;

	pt_init(10);
	s = pt_udp(&a);
	PT_SHOW("setsockopt(SO_RCVTIMEO, 4294968 s)",
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	tv = (struct timeval){ 0 };
	getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, &len);
	printf("getsockopt: %ld s %ld us\n", (long)tv.tv_sec, (long)tv.tv_usec);
	if (pthread_create(&t, NULL, late, NULL))
		pt_die("pthread_create");
	t0 = pt_now_ms();
	PT_SHOW("recv", recv(s, b, sizeof(b), 0));
	printf("blocked for 1 s or more: %s\n", pt_now_ms() - t0 >= 1000 ? "yes" : "no");
	pthread_join(t, NULL);
	return 0;
}
