// SPDX-License-Identifier: GPL-2.0
/*
 * M8: O_NONBLOCK belongs to the open file, which a fork() child shares. The
 * child sets it and exits; the parent's recv() then fails with EAGAIN at
 * once (within 100 ms; SO_RCVTIMEO of 1 s bounds a wrong wait). And the
 * other way: the child clears it, and the parent's recv() blocks.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "pt.h"

static void child_sets(int s, int flags)
{
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (!pid) {
		fcntl(s, F_SETFL, flags);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

int main(void)
{
	struct timeval tv = { 1, 0 };
	struct sockaddr_in a;
	char b[16];
	int64_t t0;
	int s;

	pt_init(10);
	s = pt_udp(&a);
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		pt_die("SO_RCVTIMEO");

	child_sets(s, fcntl(s, F_GETFL) | O_NONBLOCK);
	printf("parent sees O_NONBLOCK: %d\n", !!(fcntl(s, F_GETFL) & O_NONBLOCK));
	t0 = pt_now_ms();
	PT_SHOW("recv", recv(s, b, sizeof(b), 0));
	printf("returned within 100 ms: %s\n", pt_now_ms() - t0 < 100 ? "yes" : "no");

	child_sets(s, fcntl(s, F_GETFL) & ~O_NONBLOCK);
	printf("parent sees O_NONBLOCK: %d\n", !!(fcntl(s, F_GETFL) & O_NONBLOCK));
	t0 = pt_now_ms();
	PT_SHOW("recv", recv(s, b, sizeof(b), 0));
	printf("waited for SO_RCVTIMEO: %s\n", pt_now_ms() - t0 >= 900 ? "yes" : "no");
	return 0;
}
