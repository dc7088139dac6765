// SPDX-License-Identifier: GPL-2.0
/*
 * M15: socket(), close() and poll() are async-signal-safe. The main thread
 * creates UDP sockets in a loop for 2 s and hands each to a 10 kHz SIGALRM
 * handler, which closes it and polls another socket (the SIGTERM handler
 * that closes sockets, the heartbeat that polls). Both make progress. The
 * work runs in a child, watched for 5 s.
 */
#include <poll.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "pt.h"

struct progress {
	long made, closed, polled;
};

static struct progress *pg;
static volatile sig_atomic_t handed = -1;
static int watched;

static void tick(int sig)
{
	struct pollfd p = { .fd = watched, .events = POLLIN };
	int e = errno, fd = handed;

	(void)sig;
	if (fd >= 0) {
		handed = -1;
		if (!close(fd))
			pg->closed++;
	}
	if (poll(&p, 1, 0) >= 0)
		pg->polled++;
	errno = e;
}

static void work(void)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct sigaction sa = { .sa_handler = tick, .sa_flags = SA_RESTART };
	struct sockaddr_in a;
	int64_t end;
	sigset_t m, old;
	int s;

	watched = pt_udp(&a);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		pt_die("setup");
	sigemptyset(&m);
	sigaddset(&m, SIGALRM);
	end = pt_now_ms() + 2000;
	while (pt_now_ms() < end) {
		s = socket(AF_INET, SOCK_DGRAM, 0);
		if (s < 0)
			continue;
		pg->made++;
		/* hand it over unless the handler has not taken the last */
		sigprocmask(SIG_BLOCK, &m, &old);
		if (handed < 0) {
			handed = s;
			s = -1;
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (s >= 0)
			close(s);
	}
	it = (struct itimerval){ 0 };
	setitimer(ITIMER_REAL, &it, NULL);
}

int main(void)
{
	struct pollfd p;
	pid_t pid;
	int st = -1;

	pt_init(20);
	pg = mmap(NULL, sizeof(*pg), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pg == MAP_FAILED)
		pt_die("mmap");
	pid = fork();	/* before any socket: a child with nothing inherited */
	if (pid < 0)
		pt_die("fork");
	if (!pid) {
		alarm(0);
		work();
		_exit(0);
	}
	p = (struct pollfd){ .fd = pidfd_open(pid, 0), .events = POLLIN };
	if (p.fd < 0)
		pt_die("pidfd_open");
	if (poll(&p, 1, 5000) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pt_ok(false, "still running after 5 s: a call in the handler deadlocked (%ld sockets made, %ld closed and %ld polls in the handler)",
		      pg->made, pg->closed, pg->polled);
		return 0;
	}
	waitpid(pid, &st, 0);
	pt_ok(!st && pg->made > 1000 && pg->closed > 100 && pg->polled > 1000,
	      "2 s of socket() in a loop, close() and poll() in a 10 kHz handler: exit status %#x, progress in each: %s",
	      st, pg->made > 1000 && pg->closed > 100 && pg->polled > 1000 ?
	      "yes" : "no");
	return 0;
}
