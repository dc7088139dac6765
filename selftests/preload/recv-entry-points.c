// SPDX-License-Identifier: GPL-2.0
/*
 * A datagram received through each of the C library's receive calls:
 * recv, recvfrom, recvmsg, recvmmsg, read and readv, each once with a
 * datagram queued and once blocked until another thread sends one, and
 * each with a buffer too short (truncation as the kernel does it).
 */
#include <pthread.h>
#include <sys/uio.h>

#include "pt.h"

static struct sockaddr_in a, from_addr;
static pid_t tid;
static int from;

static void *sender(void *arg)
{
	(void)arg;
	pt_wait_blocked(tid);
	if (sendto(from, "late", 4, 0, (struct sockaddr *)&a, sizeof(a)) != 4)
		pt_die("sendto");
	return NULL;
}

static void put(const char *msg)
{
	if (sendto(from, msg, strlen(msg), 0, (struct sockaddr *)&a, sizeof(a)) < 0)
		pt_die("sendto");
}

/* Receive with entry point e into a buffer of len; print what came. */
static void take(int s, const char *e, size_t len)
{
	struct sockaddr_in src = { 0 };
	socklen_t slen = sizeof(src);
	char b[64] = "";
	struct iovec iov[2] = { { b, len / 2 }, { b + len / 2, len - len / 2 } };
	struct msghdr m = { .msg_name = &src, .msg_namelen = sizeof(src),
			    .msg_iov = iov, .msg_iovlen = 2 };
	struct mmsghdr mm = { .msg_hdr = m };
	long r;

	errno = 0;
	if (!strcmp(e, "recv")) {
		r = recv(s, b, len, 0);
	} else if (!strcmp(e, "recvfrom")) {
		r = recvfrom(s, b, len, 0, (struct sockaddr *)&src, &slen);
	} else if (!strcmp(e, "recvmsg")) {
		r = recvmsg(s, &m, 0);
		slen = m.msg_namelen;
	} else if (!strcmp(e, "recvmmsg")) {
		r = recvmmsg(s, &mm, 1, 0, NULL);
		if (r == 1)
			r = mm.msg_len;
		m.msg_flags = mm.msg_hdr.msg_flags;
		slen = mm.msg_hdr.msg_namelen;
	} else if (!strcmp(e, "read")) {
		r = read(s, b, len);
	} else {
		r = readv(s, iov, 2);
	}
	if (r < 0) {
		printf("  %s: -1 %s\n", e, pt_ename(errno));
		return;
	}
	printf("  %s: %ld \"%.*s\"", e, r, (int)(r < (long)len ? r : (long)len), b);
	if (src.sin_port)
		printf(" from the sender: %s, namelen %u",
		       src.sin_port == from_addr.sin_port ? "yes" : "no",
		       (unsigned int)slen);
	if (!strcmp(e, "recvmsg") || !strcmp(e, "recvmmsg"))
		printf(", msg_flags %#x", m.msg_flags);
	printf("\n");
}

int main(void)
{
	static const char *const eps[] = {
		"recv", "recvfrom", "recvmsg", "recvmmsg", "read", "readv",
	};
	pthread_t t;
	unsigned int i;
	int s;

	pt_init(20);
	s = pt_udp(&a);
	from = pt_udp(&from_addr);
	for (i = 0; i < ARRAY_SIZE(eps); i++) {
		printf("%s:\n", eps[i]);
		put("queued");
		take(s, eps[i], 64);
		put("truncated");
		take(s, eps[i], 4);
		tid = pt_gettid();
		if (pthread_create(&t, NULL, sender, NULL))
			pt_die("pthread_create");
		take(s, eps[i], 64);
		pthread_join(t, NULL);
	}
	return 0;
}
