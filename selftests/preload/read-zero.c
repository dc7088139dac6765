// SPDX-License-Identifier: GPL-2.0
/*
 * M9: read() or readv() of zero bytes from a UDP socket returns 0 at once
 * and consumes nothing (the socket's read_iter sees an empty iterator);
 * recv() of zero bytes does take a datagram. SO_RCVTIMEO of 1 s bounds a
 * wrong wait.
 */
#include <sys/uio.h>

#include "pt.h"

static void zero_reads(int s)
{
	struct iovec iov = { NULL, 0 };
	char b[16];
	int64_t t0 = pt_now_ms();

	PT_SHOW("  read(fd, b, 0)", read(s, b, 0));
	PT_SHOW("  readv(fd, {b, 0}, 1)", readv(s, &iov, 1));
	PT_SHOW("  readv(fd, iov, 0)", readv(s, &iov, 0));
	printf("  returned within 500 ms: %s\n", pt_now_ms() - t0 < 500 ? "yes" : "no");
}

int main(void)
{
	struct timeval tv = { 1, 0 };
	struct sockaddr_in a;
	char b[16];
	int s;

	pt_init(20);
	s = pt_udp(&a);
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		pt_die("SO_RCVTIMEO");
	printf("nothing queued:\n");
	zero_reads(s);
	pt_send(&a, "abc");
	printf("one datagram queued:\n");
	zero_reads(s);
	PT_SHOW("recv", recv(s, b, sizeof(b), MSG_DONTWAIT));
	pt_send(&a, "abc");
	PT_SHOW("recv(fd, b, 0, 0)", recv(s, b, 0, 0));
	PT_SHOW("recv (the zero-byte recv took it)", recv(s, b, sizeof(b), MSG_DONTWAIT));
	return 0;
}
