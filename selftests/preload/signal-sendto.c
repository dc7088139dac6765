// SPDX-License-Identifier: GPL-2.0
/*
 * M15: sendto() is async-signal-safe. A 10 kHz SIGALRM handler sends on
 * socket B while the main thread sends on B in a loop for 2 s: both make
 * progress. The work runs in a child, watched for 5 s, whose counters are
 * shared with the parent so that a hung child still tells how far it got.
 * Argument: the sends each must pass (1,000; less where the machine is
 * slow: under TCG the handler takes most of the CPU).
 */
#include <poll.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "pt.h"

struct progress {
	long sent, handled;
	int failed;
};

static struct progress *pg;
static struct sockaddr_in to;
static int b;

static void tick(int sig)
{
	int e = errno;

	(void)sig;
	if (sendto(b, "h", 1, 0, (struct sockaddr *)&to, sizeof(to)) == 1)
		pg->handled++;
	else
		pg->failed = 1;
	errno = e;
}

static void work(void)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct sigaction sa = { .sa_handler = tick, .sa_flags = SA_RESTART };
	int64_t end;
	int r;

	r = pt_udp(&to);	/* where it all goes; never read */
	(void)r;
	b = socket(AF_INET, SOCK_DGRAM, 0);	/* its first send binds it */
	if (b < 0 || sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		pt_die("setup");
	end = pt_now_ms() + 2000;
	while (pt_now_ms() < end) {
		if (sendto(b, "m", 1, 0, (struct sockaddr *)&to, sizeof(to)) == 1)
			pg->sent++;
		else if (errno != EINTR)
			pg->failed = 1;
	}
	it = (struct itimerval){ 0 };
	setitimer(ITIMER_REAL, &it, NULL);
}

int main(int argc, char **argv)
{
	long least = argc > 1 ? atol(argv[1]) : 1000;
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
		pt_ok(false, "still running after 5 s: a send in the handler deadlocked (%ld sends from the loop, %ld from the handler)",
		      pg->sent, pg->handled);
		return 0;
	}
	waitpid(pid, &st, 0);
	pt_ok(!st && !pg->failed && pg->sent > least && pg->handled > least,
	      "2 s of sendto() in a loop and in a 10 kHz handler on one socket: exit status %#x, every send succeeded: %s, more than %ld from each (loop %s, handler %s)",
	      st, pg->failed ? "no" : "yes", least, pg->sent > least ? "yes" : "no",
	      pg->handled > least ? "yes" : "no");
	return 0;
}
