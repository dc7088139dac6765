// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The program's signal handlers, interposed (lib/vma/sig.c sees them).
 */
#include "entry.h"

/*
 * Signal handlers go behind the library's trampolines (lib/vma/sig.c),
 * from the first one on, offloaded sockets or not: a receive must know
 * whether the handler that woke it had SA_RESTART.
 */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact);
sighandler_t bsd_signal(int sig, sighandler_t fn);

VMAK_API int sigaction(int sig, const struct sigaction *act,
		       struct sigaction *oact)
{
	return vsig_action(sig, act, oact);
}

VMAK_API int __sigaction(int sig, const struct sigaction *act,
			 struct sigaction *oact)
{
	return vsig_action(sig, act, oact);
}

VMAK_API sighandler_t signal(int sig, sighandler_t fn)
{
	return vsig_signal(sig, fn);
}

VMAK_API sighandler_t bsd_signal(int sig, sighandler_t fn)
{
	return vsig_signal(sig, fn);
}

VMAK_API sighandler_t ssignal(int sig, sighandler_t fn)
{
	return vsig_signal(sig, fn);
}

VMAK_API sighandler_t sysv_signal(int sig, sighandler_t fn)
{
	return vsig_sysv_signal(sig, fn);
}

VMAK_API sighandler_t __sysv_signal(int sig, sighandler_t fn)
{
	return vsig_sysv_signal(sig, fn);
}

VMAK_API sighandler_t sigset(int sig, sighandler_t fn)
{
	return vsig_sigset(sig, fn);
}

VMAK_API int siginterrupt(int sig, int flag)
{
	return vsig_siginterrupt(sig, flag);
}
