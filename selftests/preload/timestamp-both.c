// SPDX-License-Identifier: GPL-2.0
/*
 * L2: SO_TIMESTAMP and SO_TIMESTAMPNS are one mode in the kernel: with both
 * set a datagram carries one timestamp, of the kind set last; turning
 * either off turns both off.
 */
#include "pt.h"

static void show_opts(int s)
{
	int v1 = -1, v2 = -1;
	socklen_t l = sizeof(int);

	getsockopt(s, SOL_SOCKET, SO_TIMESTAMP, &v1, &l);
	l = sizeof(int);
	getsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &v2, &l);
	printf("  getsockopt SO_TIMESTAMP %d SO_TIMESTAMPNS %d\n", v1, v2);
}

static void one(int s, const struct sockaddr_in *a)
{
	union {
		char buf[512];
		struct cmsghdr align;
	} c;
	char b[16];
	struct iovec iov = { b, sizeof(b) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
	struct cmsghdr *cm;
	int n = 0;

	pt_send(a, "abc");
	PT_SHOW("  recvmsg", recvmsg(s, &m, 0));
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm), n++)
		printf("  cmsg level %d type %s len %zu\n", cm->cmsg_level,
		       cm->cmsg_type == SCM_TIMESTAMP ? "SCM_TIMESTAMP" :
		       cm->cmsg_type == SCM_TIMESTAMPNS ? "SCM_TIMESTAMPNS" : "other",
		       (size_t)cm->cmsg_len);
	printf("  %d cmsg, msg_flags %#x\n", n, m.msg_flags);
}

static void set(int s, int opt, int on)
{
	if (setsockopt(s, SOL_SOCKET, opt, &on, sizeof(on)))
		pt_die("setsockopt");
}

int main(void)
{
	struct sockaddr_in a;
	int s;

	pt_init(10);
	s = pt_udp(&a);
	printf("SO_TIMESTAMP, then SO_TIMESTAMPNS:\n");
	set(s, SO_TIMESTAMP, 1);
	set(s, SO_TIMESTAMPNS, 1);
	show_opts(s);
	one(s, &a);
	printf("then SO_TIMESTAMP off:\n");
	set(s, SO_TIMESTAMP, 0);
	show_opts(s);
	one(s, &a);
	printf("SO_TIMESTAMPNS, then SO_TIMESTAMP:\n");
	set(s, SO_TIMESTAMPNS, 1);
	set(s, SO_TIMESTAMP, 1);
	show_opts(s);
	one(s, &a);
	printf("then SO_TIMESTAMPNS off:\n");
	set(s, SO_TIMESTAMPNS, 0);
	show_opts(s);
	one(s, &a);
	return 0;
}
