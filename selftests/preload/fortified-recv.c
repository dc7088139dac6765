// SPDX-License-Identifier: GPL-2.0
/*
 * A datagram received through the checked forms that -D_FORTIFY_SOURCE=2
 * makes of recv(), recvfrom() and read() when the length is known only at
 * run time: once queued, once blocked until another thread sends.
 * Calls: __recv_chk __recvfrom_chk __read_chk
 */
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

static void take(int s, int which, size_t len)
{
	struct sockaddr_in src = { 0 };
	socklen_t slen = sizeof(src);
	const char *name[] = { "recv", "recvfrom", "read" };
	char b[64] = "";
	long r;

	errno = 0;
	if (which == 0)
		r = recv(s, b, len, 0);
	else if (which == 1)
		r = recvfrom(s, b, len, 0, (struct sockaddr *)&src, &slen);
	else
		r = read(s, b, len);
	if (r < 0)
		printf("  %s: -1 %s\n", name[which], pt_ename(errno));
	else
		printf("  %s: %ld \"%.*s\"%s\n", name[which], r, (int)r, b,
		       src.sin_port ? " with an address" : "");
}

int main(int argc, char **argv)
{
	size_t len = 64 - (size_t)argc + 1;	/* 64, at run time */
	pthread_t t;
	int s, i;

	(void)argv;
	pt_init(20);
	s = pt_udp(&a);
	for (i = 0; i < 3; i++) {
		pt_send(&a, "queued");
		take(s, i, len);
		tid = pt_gettid();
		if (pthread_create(&t, NULL, sender, NULL))
			pt_die("pthread_create");
		take(s, i, len);
		pthread_join(t, NULL);
	}
	return 0;
}
