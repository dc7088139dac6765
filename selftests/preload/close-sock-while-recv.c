// SPDX-License-Identifier: GPL-2.0
/*
 * close() of a UDP socket while another thread is blocked in recv() on
 * it: the call in progress keeps the socket, so a datagram sent to its
 * port afterwards ends the recv(). Sent from the next socket the program
 * makes, which gets the closed number (the lowest free fd), as it would
 * in any program that goes on opening sockets. Then the port is free.
 */
#include <pthread.h>

#include "pt.h"

static int s;
static pid_t tid;
static long r;
static int err;
static char b[16];

static void *receiver(void *arg)
{
	(void)arg;
	pt_tid_publish(&tid);
	r = recv(s, b, sizeof(b), 0);
	err = errno;
	return NULL;
}

int main(void)
{
	struct timespec until;
	struct sockaddr_in a;
	pthread_t t;
	int s2;

	pt_init(10);
	s = pt_udp(&a);
	if (pthread_create(&t, NULL, receiver, NULL))
		pt_die("pthread_create");
	pt_wait_blocked(pt_tid_await(&tid));
	PT_SHOW("close(sock) while a recv() waits", close(s));
	s2 = socket(AF_INET, SOCK_DGRAM, 0);
	printf("the next socket gets the closed number: %s\n", s2 == s ? "yes" : "no");
	PT_SHOW("sendto(the closed socket's port)",
		sendto(s2, "abc", 3, 0, (struct sockaddr *)&a, sizeof(a)));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 3;
	if (pthread_timedjoin_np(t, NULL, &until)) {
		printf("the waiting recv: still blocked 3 s later\n");
		return 0;
	}
	errno = err;
	PT_SHOW("the waiting recv", r);
	close(s2);
	s2 = socket(AF_INET, SOCK_DGRAM, 0);
	PT_SHOW("bind(the same port)", bind(s2, (struct sockaddr *)&a, sizeof(a)));
	return 0;
}
