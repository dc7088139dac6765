// SPDX-License-Identifier: GPL-2.0
/*
 * M10: readiness through the checked forms that -D_FORTIFY_SOURCE=2 makes
 * of poll() and ppoll() when the count is known only at run time: nothing
 * queued, one datagram queued, and a sleeper woken by a datagram sent
 * from another thread.
 * Calls: __poll_chk __ppoll_chk
 */
#include <poll.h>
#include <pthread.h>

#include "pt.h"

static struct sockaddr_in a;
static pid_t tid;

static void *sender(void *arg)
{
	(void)arg;
	pt_wait_blocked(tid);
	pt_send(&a, "late");
	return NULL;
}

static void sleeper(const char *what, struct pollfd *p, nfds_t n, bool pp)
{
	struct timespec t = { 3, 0 };
	pthread_t th;
	int r;

	tid = pt_gettid();
	if (pthread_create(&th, NULL, sender, NULL))
		pt_die("pthread_create");
	r = pp ? ppoll(p, n, &t, NULL) : poll(p, n, 3000);
	printf("%s, woken by a datagram: %d revents %#x\n", what, r, p[0].revents);
	pthread_join(th, NULL);
}

int main(int argc, char **argv)
{
	struct timespec zero = { 0, 0 }, one = { 1, 0 };
	struct pollfd p[4];
	nfds_t n = (nfds_t)argc;	/* 1, known at run time only */
	char b[16];
	int s;

	(void)argv;
	pt_init(20);
	s = pt_udp(&a);
	p[0] = (struct pollfd){ .fd = s, .events = POLLIN };
	printf("poll, nothing queued: %d\n", poll(p, n, 0));
	printf("ppoll, nothing queued: %d\n", ppoll(p, n, &zero, NULL));
	pt_send(&a, "abc");
	printf("poll, one queued: %d revents %#x\n", poll(p, n, 1000), p[0].revents);
	printf("ppoll, one queued: %d revents %#x\n", ppoll(p, n, &one, NULL),
	       p[0].revents);
	PT_SHOW("recv", recv(s, b, sizeof(b), 0));
	sleeper("poll", p, n, false);
	PT_SHOW("recv", recv(s, b, sizeof(b), 0));
	sleeper("ppoll", p, n, true);
	PT_SHOW("recv", recv(s, b, sizeof(b), 0));
	return 0;
}
