// SPDX-License-Identifier: GPL-2.0
/*
 * Readiness of a UDP socket through each of the C library's calls: poll,
 * ppoll, select, pselect, epoll_wait, epoll_pwait and epoll_pwait2.
 * Nothing queued (0 at the timeout), one datagram queued, and a sleeper
 * woken by a datagram another thread sends; the events and data are
 * those registered.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/select.h>

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

/* Wait with entry point e up to ms; print what it says. */
static void wait_with(int e, int s, int ep, int ms)
{
	static const char *const name[] = {
		"poll", "ppoll", "select", "pselect", "epoll_wait",
		"epoll_pwait", "epoll_pwait2",
	};
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	struct pollfd p = { .fd = s, .events = POLLIN };
	struct epoll_event out[4];
	sigset_t m;
	fd_set r;
	int n;

	sigemptyset(&m);
	FD_ZERO(&r);
	FD_SET(s, &r);
	errno = 0;
	switch (e) {
	case 0:
		n = poll(&p, 1, ms);
		break;
	case 1:
		n = ppoll(&p, 1, &ts, &m);
		break;
	case 2:
		n = select(s + 1, &r, NULL, NULL, &tv);
		break;
	case 3:
		n = pselect(s + 1, &r, NULL, NULL, &ts, &m);
		break;
	case 4:
		n = epoll_wait(ep, out, 4, ms);
		break;
	case 5:
		n = epoll_pwait(ep, out, 4, ms, &m);
		break;
	default:
		n = epoll_pwait2(ep, out, 4, &ts, &m);
		break;
	}
	if (e >= 4) {
		pt_show_wait(name[e], n, out);
		return;
	}
	if (n < 0)
		printf("%s: -1 %s\n", name[e], pt_ename(errno));
	else if (e < 2)
		printf("%s: %d revents %#x\n", name[e], n, p.revents);
	else
		printf("%s: %d, fd set: %d\n", name[e], n, FD_ISSET(s, &r));
}

int main(void)
{
	pthread_t t;
	char b[16];
	int s, ep, e;

	pt_init(30);
	s = pt_udp(&a);
	ep = pt_epoll_42(s);
	for (e = 0; e < 7; e++) {
		wait_with(e, s, ep, 0);
		pt_send(&a, "abc");
		wait_with(e, s, ep, 1000);
		PT_SHOW("recv", recv(s, b, sizeof(b), 0));
		tid = pt_gettid();
		if (pthread_create(&t, NULL, sender, NULL))
			pt_die("pthread_create");
		wait_with(e, s, ep, 3000);
		pthread_join(t, NULL);
		PT_SHOW("recv", recv(s, b, sizeof(b), 0));
	}
	return 0;
}
