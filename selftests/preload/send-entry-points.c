// SPDX-License-Identifier: GPL-2.0
/*
 * A datagram sent through each of the C library's send calls (send,
 * sendto, sendmsg, sendmmsg, write, writev) from a connected socket and,
 * where the call takes one, to an address; what arrives, in order. And
 * fcntl64(), the name fcntl() also has: flags and a copy.
 */
#include <fcntl.h>
#include <sys/uio.h>

#include "pt.h"

int fcntl64(int fd, int cmd, ...);

static int rx;

static void arrived(void)
{
	char b[64];
	long n;

	while ((n = recv(rx, b, sizeof(b) - 1, MSG_DONTWAIT)) >= 0) {
		b[n] = 0;
		printf("  arrived %ld: %s\n", n, b);
	}
}

int main(void)
{
	struct sockaddr_in a, b;
	struct iovec iov[2] = { { "wri", 3 }, { "tev", 3 } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	struct mmsghdr mm[2] = { { .msg_hdr = m }, { .msg_hdr = m } };
	int tx, cp, fl;

	pt_init(10);
	rx = pt_udp(&a);
	tx = pt_udp(&b);
	PT_SHOW("sendto", sendto(tx, "sendto", 6, 0, (struct sockaddr *)&a, sizeof(a)));
	m.msg_name = &a;
	m.msg_namelen = sizeof(a);
	PT_SHOW("sendmsg to", sendmsg(tx, &m, 0));
	PT_SHOW("sendmsg without an address", sendmsg(tx, &(struct msghdr){
		.msg_iov = iov, .msg_iovlen = 2 }, 0));
	PT_SHOW("send unconnected", send(tx, "send", 4, 0));
	pt_sleep_ms(50);
	arrived();
	PT_SHOW("connect", connect(tx, (struct sockaddr *)&a, sizeof(a)));
	PT_SHOW("send", send(tx, "send", 4, 0));
	PT_SHOW("write", write(tx, "write", 5));
	PT_SHOW("writev", writev(tx, iov, 2));
	fl = -1;	/* a count the compiler cannot see */
	if (getenv("PT_NEVER_SET"))
		fl = 2;
	PT_SHOW("writev of -1 vectors", writev(tx, iov, fl));
	PT_SHOW("sendmmsg of 2", sendmmsg(tx, mm, 2, 0));
	printf("  lengths %u %u\n", mm[0].msg_len, mm[1].msg_len);
	pt_sleep_ms(50);
	arrived();
	fl = fcntl64(tx, F_GETFL);
	PT_SHOW("fcntl64 F_SETFL O_NONBLOCK", fcntl64(tx, F_SETFL, fl | O_NONBLOCK));
	printf("  O_NONBLOCK now %s\n", fcntl64(tx, F_GETFL) & O_NONBLOCK ? "on" : "off");
	cp = fcntl64(tx, F_DUPFD_CLOEXEC, 0);
	printf("  F_DUPFD_CLOEXEC %s\n", cp >= 0 ? "made a copy" : pt_ename(errno));
	PT_SHOW("send on the copy", send(cp, "copy", 4, 0));
	close(tx);
	PT_SHOW("send on the copy, the original closed", send(cp, "copy2", 5, 0));
	pt_sleep_ms(50);
	arrived();
	return 0;
}
