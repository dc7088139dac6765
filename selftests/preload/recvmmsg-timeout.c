// SPDX-License-Identifier: GPL-2.0
/*
 * L3: recvmmsg() writes the time left back into its timeout only when it
 * returns datagrams. And it takes as many messages as asked: the kernel
 * caps sendmmsg() at UIO_MAXIOV (1024), not recvmmsg() (the review
 * thought otherwise; this is what Linux does).
 */
#include <sys/uio.h>

#include "pt.h"

#define MANY 1100

static struct mmsghdr v[MANY];
static struct iovec iov[MANY];
static char bufs[MANY][8];

static void show(const char *what, int r, const struct timespec *t)
{
	if (r < 0)
		printf("%s: -1 %s", what, pt_ename(errno));
	else
		printf("%s: %d", what, r);
	if (t->tv_sec == 1 && !t->tv_nsec)
		printf(", timeout unchanged\n");
	else if (!t->tv_sec && t->tv_nsec > 0)
		printf(", timeout: less than 1 s left\n");
	else
		printf(", timeout %ld s %ld ns\n", (long)t->tv_sec, t->tv_nsec);
}

int main(void)
{
	int s, r, i, big = 8 << 20;
	struct sockaddr_in a;
	struct timespec t;

	pt_init(10);
	for (i = 0; i < MANY; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
	}
	s = pt_udp(&a);
	t = (struct timespec){ 1, 0 };
	r = recvmmsg(s, v, 0, 0, &t);
	show("vlen 0", r, &t);
	t = (struct timespec){ 1, 0 };
	r = recvmmsg(s, v, 4, MSG_DONTWAIT, &t);
	show("nothing queued, MSG_DONTWAIT", r, &t);
	pt_send(&a, "one");
	pt_send(&a, "two");
	t = (struct timespec){ 1, 0 };
	r = recvmmsg(s, v, 4, MSG_WAITFORONE, &t);
	show("two queued, MSG_WAITFORONE", r, &t);

	/* more than UIO_MAXIOV queued (root may force the buffer) */
	if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	for (i = 0; i < MANY; i++)
		pt_send(&a, "x");
	r = recvmmsg(s, v, MANY, MSG_DONTWAIT, NULL);
	printf("%d queued, vlen %d: %d\n", MANY, MANY, r);
	return 0;
}
