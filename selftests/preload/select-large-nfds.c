// SPDX-License-Identifier: GPL-2.0
/*
 * M10: select() and pselect() with nfds above FD_SETSIZE, on fd_set
 * arrays the program allocates itself (the kernel takes any nfds up to
 * RLIMIT_NOFILE): a UDP socket on fd 1500 is reported readable once a
 * datagram is queued.
 */
#include <sys/resource.h>
#include <sys/select.h>

#include "pt.h"

#define BIG	1500
#define WORD	(8 * sizeof(unsigned long))

static unsigned long set[2048 / WORD];

static void arm(void)
{
	memset(set, 0, sizeof(set));
	set[BIG / WORD] |= 1UL << (BIG % WORD);
}

static bool armed(void)
{
	return set[BIG / WORD] & 1UL << (BIG % WORD);
}

int main(void)
{
	struct rlimit rl = { 2048, 2048 };
	struct timespec ts = { 0, 0 };
	struct timeval tv = { 0, 0 };
	struct sockaddr_in a;
	int s;

	pt_init(10);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		pt_die("RLIMIT_NOFILE");
	s = pt_udp(&a);
	if (dup2(s, BIG) != BIG)
		pt_die("dup2");
	close(s);
	arm();
	printf("select, nothing queued: %d\n",
	       select(BIG + 1, (fd_set *)set, NULL, NULL, &tv));
	pt_send(&a, "abc");
	arm();
	tv.tv_sec = 1;
	printf("select, one queued: %d", select(BIG + 1, (fd_set *)set, NULL, NULL, &tv));
	printf(", fd %d set: %d\n", BIG, armed());
	arm();
	ts.tv_sec = 1;
	printf("pselect, one queued: %d",
	       pselect(BIG + 1, (fd_set *)set, NULL, NULL, &ts, NULL));
	printf(", fd %d set: %d\n", BIG, armed());
	return 0;
}
