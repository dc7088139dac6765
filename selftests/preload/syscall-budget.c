// SPDX-License-Identifier: GPL-2.0
/*
 * H8: with the module absent a UDP socket costs what a kernel socket
 * costs, give or take a one-time look for the module. Counted with
 * strace -f between two marker calls, plain and with this process's
 * LD_PRELOAD (the same run twice when there is none):
 * - 100 x socket/bind(0.0.0.0:0)/close + 100 x socket/connect/close:
 *   at most 1.1 x the plain count + 32, and at most one openat() of the
 *   module's sysfs family file in the whole run;
 * - a blocking recv() of 50 datagrams sent 2 ms apart: one system call
 *   per datagram (52 allowed);
 * - sendmmsg() of 32 datagrams and recvmmsg() of 32: one system call each.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "pt.h"

#define MARK(what) syscall(SYS_write, -1, "vmak-budget-" what, \
			   sizeof("vmak-budget-" what) - 1)
#define FAMILY_FILE "/sys/module/vmak/parameters/family"

static void churn(void)
{
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(9),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int i, s;

	MARK("begin");
	for (i = 0; i < 100; i++) {
		s = socket(AF_INET, SOCK_DGRAM, 0);
		bind(s, (struct sockaddr *)&any, sizeof(any));
		close(s);
	}
	for (i = 0; i < 100; i++) {
		s = socket(AF_INET, SOCK_DGRAM, 0);
		connect(s, (struct sockaddr *)&lo, sizeof(lo));
		close(s);
	}
	MARK("end");
}

static void recv50(void)
{
	struct sockaddr_in a;
	int s = pt_udp(&a), i;
	char b[64];
	pid_t pid;

	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (!pid) {
		pt_sleep_ms(50);
		for (i = 0; i < 50; i++) {
			pt_send(&a, "datagram");
			pt_sleep_ms(2);
		}
		_exit(0);
	}
	MARK("begin");
	for (i = 0; i < 50; i++)
		if (recv(s, b, sizeof(b), 0) < 0)
			pt_die("recv");
	MARK("end");
	waitpid(pid, NULL, 0);
}

static void mmsg(void)
{
	struct mmsghdr v[32];
	struct iovec iov[32];
	struct sockaddr_in a, d;
	int s = pt_udp(&a), r = pt_udp(&d), i;
	char b[32][16];

	if (connect(s, (struct sockaddr *)&d, sizeof(d)) ||
	    send(s, "warm", 4, 0) != 4 || recv(r, b[0], 16, 0) != 4)
		pt_die("warm-up");
	memset(v, 0, sizeof(v));
	for (i = 0; i < 32; i++) {
		iov[i] = (struct iovec){ b[i], sizeof(b[i]) };
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
	}
	MARK("begin");
	if (sendmmsg(s, v, 32, 0) != 32)
		pt_die("sendmmsg");
	MARK("middle");
	if (recvmmsg(r, v, 32, MSG_DONTWAIT, NULL) != 32)
		pt_die("recvmmsg");
	MARK("end");
}

struct count {
	long between[2];	/* system calls between the marks */
	long family;		/* openat()s of FAMILY_FILE */
};

/*
 * Lines of `strace -f -o` are "PID name(args) = result", a call that
 * blocks is split in "PID name(args <unfinished ...>" and
 * "PID <... name resumed>..."; signals and exits are "PID --- " and
 * "PID +++ ". Count each call once, at its start; only the marking
 * process's calls when mine is set (the sender of recv50 is another).
 */
static void count(const char *file, bool mine, struct count *c)
{
	char line[4096], *p;
	long pid, marker = -1;
	int zone = -1;
	FILE *f = fopen(file, "re");

	memset(c, 0, sizeof(*c));
	if (!f)
		pt_die("%s", file);
	while (fgets(line, sizeof(line), f)) {
		pid = strtol(line, &p, 10);
		while (*p == ' ')
			p++;
		if (!strncmp(p, "<...", 4) || !strncmp(p, "---", 3) ||
		    !strncmp(p, "+++", 3))
			continue;
		if (strstr(p, "openat(") && strstr(p, FAMILY_FILE))
			c->family++;
		if (strstr(p, "\"vmak-budget-")) {
			if (strstr(p, "-begin\""))
				zone = 0, marker = pid;
			else if (strstr(p, "-middle\""))
				zone = 1;
			else
				zone = -1;
			continue;
		}
		if (zone >= 0 && (!mine || pid == marker))
			c->between[zone]++;
	}
	fclose(f);
}

/* The workload under strace, with LD_PRELOAD=preload (NULL: none). */
static void trace(const char *exe, const char *work, const char *preload,
		  bool mine, struct count *c)
{
	char file[] = "/tmp/vmak-budget.XXXXXX", env[4200];
	int fd = mkstemp(file), st;
	pid_t pid;

	if (fd < 0)
		pt_die("mkstemp");
	close(fd);
	snprintf(env, sizeof(env), "LD_PRELOAD=%s", preload ? preload : "");
	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (!pid) {
		unsetenv("LD_PRELOAD");	/* for strace itself */
		if (preload)
			execlp("strace", "strace", "-f", "-qq", "-o", file,
			       "-E", env, exe, work, (char *)NULL);
		else
			execlp("strace", "strace", "-f", "-qq", "-o", file,
			       exe, work, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || st)
		pt_die("strace %s %s: status %#x", exe, work, st);
	count(file, mine, c);
	unlink(file);
}

int main(int argc, char **argv)
{
	const char *pre = pt_vmak_loaded() ? getenv("LD_PRELOAD") : NULL;
	struct count base, cand;
	char exe[4096];
	long budget;
	ssize_t n;

	if (argc > 1) {
		alarm(20);
		if (!strcmp(argv[1], "churn"))
			churn();
		else if (!strcmp(argv[1], "recv50"))
			recv50();
		else
			mmsg();
		return 0;
	}
	pt_init(60);
	if (system("strace -V > /dev/null 2>&1")) {
		pt_ok(true, "# SKIP strace is not installed (scripts/deps.sh installs it)");
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		pt_die("/proc/self/exe");
	exe[n] = 0;

	trace(exe, "churn", NULL, false, &base);
	cand = base;
	if (pre)
		trace(exe, "churn", pre, false, &cand);
	budget = base.between[0] * 11 / 10 + 32;
	pt_ok(cand.between[0] <= budget,
	      "100 x socket/bind/close + 100 x socket/connect/close: %ld system calls, %ld on kernel sockets (budget %ld)",
	      cand.between[0], base.between[0], budget);
	pt_ok(cand.family <= 1, "%ld openat() of " FAMILY_FILE " (at most 1)",
	      cand.family);

	trace(exe, "recv50", pre, true, &cand);
	pt_ok(cand.between[0] <= 52,
	      "a blocking recv() of 50 datagrams 2 ms apart: %ld system calls (at most 52)",
	      cand.between[0]);

	trace(exe, "mmsg", pre, true, &cand);
	pt_ok(cand.between[0] == 1, "sendmmsg() of 32: %ld system calls (1)",
	      cand.between[0]);
	pt_ok(cand.between[1] == 1, "recvmmsg() of 32: %ld system calls (1)",
	      cand.between[1]);
	return 0;
}
