// SPDX-License-Identifier: GPL-2.0
/*
 * The signal calls libvmak interposes (lib/vma/sig.c) must look to the
 * program exactly as the C library's: the same old handlers, flags and
 * errors, SA_RESETHAND and siginterrupt() as libc does them, the handler
 * called with the kernel's siginfo and errno kept. A probe prints what
 * it sees; it runs once plain and once with LD_PRELOAD=libvmak.so, and
 * the two transcripts must be the same line for line.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

sighandler_t bsd_signal(int sig, sighandler_t fn);	/* no longer declared */
sighandler_t ssignal(int sig, sighandler_t fn);
sighandler_t __sysv_signal(int sig, sighandler_t fn);
int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact);

static volatile sig_atomic_t hits, info_ok;

static void h1(int sig)
{
	(void)sig;
	hits++;
	errno = EBADF;	/* left for the program, as the kernel leaves it */
}

static void h3(int sig, siginfo_t *si, void *uc)
{
	info_ok = uc && si->si_signo == sig && si->si_code == SI_TKILL &&
		  si->si_pid == getpid();
	hits++;
}

static const char *name(void (*fn)(int))
{
	return fn == SIG_DFL ? "DFL" : fn == SIG_IGN ? "IGN" :
	       fn == SIG_ERR ? "ERR" : fn == SIG_HOLD ? "HOLD" : fn == h1 ? "h1" :
	       (void *)fn == (void *)h3 ? "h3" : "other";
}

static void show(const char *what, int sig)
{
	struct sigaction o;

	if (sigaction(sig, NULL, &o))
		printf("%s: query failed %d\n", what, errno);
	else
		printf("%s: %s flags %#x\n", what, name(o.sa_handler),
		       (unsigned int)o.sa_flags);
}

/* Print a call's result and the errno it left. */
#define ERR(fmt, call) do {						\
	int __e;							\
	errno = 0;							\
	__typeof__(call) __r = (call);					\
	__e = errno;							\
	printf(fmt " errno %d\n", __r, __e);				\
} while (0)

static int probe(void)
{
	struct sigaction a = { .sa_handler = h1, .sa_flags = SA_RESTART }, o;
	int e;

	sigemptyset(&a.sa_mask);
	sigaddset(&a.sa_mask, SIGUSR2);
	printf("sigaction %d\n", sigaction(SIGUSR1, &a, &o));
	printf("old %s flags %#x\n", name(o.sa_handler), (unsigned int)o.sa_flags);
	sigaction(SIGUSR1, NULL, &o);
	printf("mask has USR2 %d\n", sigismember(&o.sa_mask, SIGUSR2));
	show("h1 restart", SIGUSR1);
	errno = 0;
	raise(SIGUSR1);
	e = errno;
	printf("hits %d errno %d\n", hits, e);

	a.sa_sigaction = h3;
	a.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
	sigaction(SIGUSR1, &a, &o);
	printf("old %s flags %#x\n", name(o.sa_handler), (unsigned int)o.sa_flags);
	show("h3 oneshot", SIGUSR1);
	raise(SIGUSR1);
	printf("hits %d info %d\n", hits, info_ok);
	show("after oneshot", SIGUSR1);

	a.sa_handler = h1;
	a.sa_flags = SA_RESETHAND;
	sigaction(SIGUSR1, &a, NULL);
	raise(SIGUSR1);
	show("after oneshot without SA_SIGINFO", SIGUSR1);

	printf("signal %s\n", name(signal(SIGUSR2, h1)));
	show("signal", SIGUSR2);
	printf("signal %s\n", name(signal(SIGUSR2, SIG_IGN)));
	show("ignored", SIGUSR2);
	printf("bsd_signal %s\n", name(bsd_signal(SIGUSR2, h1)));
	printf("siginterrupt %d\n", siginterrupt(SIGUSR2, 1));
	show("interrupting", SIGUSR2);
	printf("signal %s\n", name(signal(SIGUSR2, h1)));
	show("signal after siginterrupt", SIGUSR2);
	printf("siginterrupt %d\n", siginterrupt(SIGUSR2, 0));
	show("restarting", SIGUSR2);
	printf("sysv_signal %s\n", name(sysv_signal(SIGHUP, h1)));
	show("sysv", SIGHUP);
	printf("sigset %s\n", name(sigset(SIGHUP, SIG_HOLD)));
	printf("sigset %s\n", name(sigset(SIGHUP, SIG_HOLD)));
	printf("sigset %s\n", name(sigset(SIGHUP, h1)));
	show("sigset", SIGHUP);
	/* the C library's other names for these */
	printf("ssignal %s\n", name(ssignal(SIGHUP, h1)));
	show("ssignal", SIGHUP);
	printf("__sysv_signal %s\n", name(__sysv_signal(SIGHUP, h1)));
	show("__sysv_signal", SIGHUP);
	printf("__sigaction %d\n", __sigaction(SIGHUP, &a, &o));
	printf("old %s flags %#x\n", name(o.sa_handler), (unsigned int)o.sa_flags);
	show("__sigaction", SIGHUP);

	ERR("SIGKILL %d", sigaction(SIGKILL, &a, NULL));
	ERR("SIGSTOP %s", name(signal(SIGSTOP, h1)));
	ERR("0 %d", sigaction(0, &a, NULL));
	ERR("65 %d", sigaction(65, NULL, &o));
	ERR("signal(0) %s", name(signal(0, h1)));
	ERR("signal(SIG_ERR) %s", name(signal(SIGUSR1, SIG_ERR)));
	ERR("siginterrupt(99) %d", siginterrupt(99, 1));
	ERR("sigset(-1) %s", name(sigset(-1, h1)));
	ERR("32 %d", sigaction(32, &a, NULL));
	fflush(stdout);
	return 0;
}

/* The probe's transcript, run with LD_PRELOAD=preload (NULL: plain). */
static char *transcript(const char *preload)
{
	static char exe[4096];
	char *buf = calloc(1, 65536);
	ssize_t n, len = 0;
	int p[2];
	pid_t pid;

	if (!buf || readlink("/proc/self/exe", exe, sizeof(exe) - 1) < 0 || pipe(p))
		return NULL;
	pid = fork();
	if (!pid) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		execl(exe, exe, "probe", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], buf + len, 65535 - len)) > 0)
		len += n;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return buf;
}

TEST(preloaded_signal_calls_look_like_the_c_library)
{
	char lib[4200], *slash, *plain, *pre;

	ASSERT_GT(readlink("/proc/self/exe", lib, 4096), 0);
	lib[4096] = 0;
	slash = strrchr(lib, '/');	/* build/unit/x -> build/libvmak.so */
	ASSERT_NE(NULL, slash);
	*slash = 0;
	slash = strrchr(lib, '/');
	ASSERT_NE(NULL, slash);
	strcpy(slash, "/libvmak.so");
	ASSERT_EQ(0, access(lib, R_OK)) TH_LOG("%s: build the library first", lib);
	plain = transcript(NULL);
	pre = transcript(lib);
	ASSERT_NE(NULL, plain);
	ASSERT_NE(NULL, pre);
	ASSERT_NE(NULL, strstr(plain, "32 ")) TH_LOG("probe incomplete:\n%s", plain);
	EXPECT_STREQ(plain, pre);
	free(plain);
	free(pre);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "probe"))
		return probe();
	return test_harness_run(argc, argv);
}
