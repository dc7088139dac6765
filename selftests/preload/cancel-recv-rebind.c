// SPDX-License-Identifier: GPL-2.0
/*
 * M4: a thread blocked in recv() is cancelled (recv is a cancellation
 * point) and joined; the socket is closed, and its port bound again. The
 * cancelled call leaks nothing, so the port is free. The same with
 * recvmmsg(), and both again on a socket an option keeps on the kernel
 * path for good (IP_RECVTTL) while an epoll set holds it, so that the
 * library keeps it and calls the kernel's recvmmsg() itself (a cancel
 * there left the socket held).
 */
#include <pthread.h>

#include "pt.h"

static int s, mode;	/* mode: 1 recvmmsg(), 2 IP_RECVTTL */
static pid_t tid;

static void *receiver(void *arg)
{
	char b[16];
	struct iovec iov = { b, sizeof(b) };
	struct mmsghdr mm = { .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };

	(void)arg;
	pt_tid_publish(&tid);
	if (mode & 1)
		recvmmsg(s, &mm, 1, 0, NULL);
	else
		recv(s, b, sizeof(b), 0);
	return (void *)1;	/* not reached: cancelled */
}

int main(void)
{
	struct sockaddr_in a;
	pthread_t t;
	void *res;
	int s2, ep, one = 1;

	pt_init(10);
	for (mode = 0; mode < 4; mode++) {
		printf("%s%s:\n", mode & 1 ? "recvmmsg" : "recv",
		       mode & 2 ? ", IP_RECVTTL" : "");
		s = pt_udp(&a);
		ep = -1;
		if (mode & 2) {
			ep = pt_epoll_42(s);
			PT_SHOW("IP_RECVTTL", setsockopt(s, IPPROTO_IP, IP_RECVTTL,
							 &one, sizeof(one)));
		}
		tid = 0;
		if (pthread_create(&t, NULL, receiver, NULL))
			pt_die("pthread_create");
		pt_wait_blocked(pt_tid_await(&tid));
		printf("pthread_cancel = %d\n", pthread_cancel(t));
		pthread_join(t, &res);
		printf("the receiver was cancelled: %s\n",
		       res == PTHREAD_CANCELED ? "yes" : "no");
		PT_SHOW("close", close(s));
		if (ep >= 0)
			close(ep);
		s2 = socket(AF_INET, SOCK_DGRAM, 0);
		PT_SHOW("bind(the same port)",
			bind(s2, (struct sockaddr *)&a, sizeof(a)));
		close(s2);
	}
	return 0;
}
