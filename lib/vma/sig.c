// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Signal handlers, seen through, so that a blocked receive is restarted
 * as the kernel restarts one.
 *
 * A receive on an offloaded socket sleeps in poll() (recv.c), and the
 * kernel never restarts poll(): a handler interrupts it with EINTR,
 * SA_RESTART or not. The kernel restarts a blocked recv() after a handler
 * with SA_RESTART unless the socket has SO_RCVTIMEO (signal(7)). To do
 * the same the library must know whether the handlers that ran during its
 * poll() had SA_RESTART. So every handler the program installs is
 * installed behind one of two trampolines, one for actions with
 * SA_RESTART and one for actions without: the trampoline notes in the
 * thread which kind ran, then calls the program's handler with the
 * arguments the kernel gave. The program sees its own handler and flags
 * when it asks (sigaction()'s old action, signal()'s return value).
 *
 * Per signal: the program's handler (ufn) and flags (uflags), written
 * before the action that points at a trampoline is installed and never
 * cleared, so a trampoline always finds a function. A handler that the
 * program installed without us (a raw syscall) is unknown: an EINTR after
 * it stays an EINTR.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "sys.h"
#include "sig.h"

typedef void (*vsig_fn3)(int, siginfo_t *, void *);

static void *ufn[_NSIG];
static int uflags[_NSIG];
/* the action in the kernel is one of ours (cleared when one is not) */
static bool wrapped[_NSIG];
/* siginterrupt(sig, 1) was called: signal() then installs without SA_RESTART */
static uint64_t intr_set;
static int update_lock;

__thread struct vsig_seen vsig_seen __attribute__((tls_model("initial-exec")));

static void tramp_call(int sig, siginfo_t *si, void *uc)
{
	void *fn = __atomic_load_n(&ufn[sig], __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&uflags[sig], __ATOMIC_RELAXED) & SA_SIGINFO)
		((vsig_fn3)fn)(sig, si, uc);
	else
		((vsig_handler)fn)(sig);
}

static void tramp_restart(int sig, siginfo_t *si, void *uc)
{
	vsig_seen.ran = 1;
	tramp_call(sig, si, uc);
}

static void tramp_intr(int sig, siginfo_t *si, void *uc)
{
	vsig_seen.ran = 1;
	vsig_seen.intr = 1;
	tramp_call(sig, si, uc);
}

static bool is_tramp(const struct sigaction *a)
{
	return a->sa_sigaction == tramp_restart || a->sa_sigaction == tramp_intr;
}

static bool is_handler(const struct sigaction *a)
{
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

/*
 * Two threads changing one signal's action at once: the one that got the
 * lock first finishes first. Signals are blocked meanwhile, so a handler
 * calling sigaction() (which may be called there) cannot spin on a lock
 * its own thread holds.
 */
static void update_begin(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
	while (__atomic_exchange_n(&update_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void update_end(const sigset_t *old)
{
	__atomic_store_n(&update_lock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* fork() while another thread changes an action: wait for it. */
static sigset_t fork_mask;

void vsig_atfork_prepare(void)
{
	update_begin(&fork_mask);
}

void vsig_atfork_parent(void)
{
	update_end(&fork_mask);
}

void vsig_atfork_child(void)
{
	update_end(&fork_mask);
}

/* What the kernel holds, as the program installed it. */
static void unwrap(struct sigaction *k, void *fn, int flags, bool was_wrapped)
{
	if (is_tramp(k)) {
		k->sa_sigaction = (vsig_fn3)fn;
	} else if (!was_wrapped || !(flags & SA_RESETHAND)) {
		return;
	}
	/*
	 * Ours, or ours until SA_RESETHAND put SIG_DFL in its place (the
	 * kernel keeps the flags): SA_SIGINFO only if the program set it.
	 */
	k->sa_flags = (k->sa_flags & ~SA_SIGINFO) | (flags & SA_SIGINFO);
}

int vsig_action(int sig, const struct sigaction *act, struct sigaction *oact)
{
	struct sigaction k, ko;
	sigset_t mask;
	void *ofn;
	int oflags, rc, err;
	bool owrapped;

	if (sig <= 0 || sig >= _NSIG)
		return vmak_sys_sigaction(sig, act, oact);
	update_begin(&mask);
	ofn = ufn[sig];
	oflags = uflags[sig];
	owrapped = wrapped[sig];
	if (act && is_handler(act)) {
		k = *act;
		__atomic_store_n(&uflags[sig], act->sa_flags, __ATOMIC_RELAXED);
		__atomic_store_n(&ufn[sig], (void *)act->sa_sigaction,
				 __ATOMIC_RELEASE);
		k.sa_sigaction = act->sa_flags & SA_RESTART ? tramp_restart :
							      tramp_intr;
		k.sa_flags |= SA_SIGINFO;
		rc = vmak_sys_sigaction(sig, &k, &ko);
	} else {
		rc = vmak_sys_sigaction(sig, act, &ko);
	}
	err = errno;
	if (rc) {
		/* refused: the old handler stays, and its flags */
		__atomic_store_n(&uflags[sig], oflags, __ATOMIC_RELAXED);
		__atomic_store_n(&ufn[sig], ofn, __ATOMIC_RELEASE);
	} else if (act) {
		wrapped[sig] = is_handler(act);
	}
	update_end(&mask);
	if (!rc && oact) {
		unwrap(&ko, ofn, oflags, owrapped);
		*oact = ko;
	}
	errno = err;
	return rc;
}

/*
 * The C library's signal(): BSD semantics (SA_RESTART unless
 * siginterrupt() said otherwise, the signal blocked in its handler).
 */
vsig_handler vsig_signal(int sig, vsig_handler fn)
{
	struct sigaction a = { .sa_handler = fn }, o;

	if (fn == SIG_ERR || sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&a.sa_mask);
	sigaddset(&a.sa_mask, sig);
	if (!(__atomic_load_n(&intr_set, __ATOMIC_RELAXED) &
	      (1ULL << (sig - 1))))
		a.sa_flags = SA_RESTART;
	return vsig_action(sig, &a, &o) ? SIG_ERR : o.sa_handler;
}

/* System V's: once (SA_RESETHAND), not blocked in its handler, no restart. */
vsig_handler vsig_sysv_signal(int sig, vsig_handler fn)
{
	struct sigaction a = { .sa_handler = fn,
			       .sa_flags = SA_RESETHAND | SA_NODEFER }, o;

	if (fn == SIG_ERR || sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&a.sa_mask);
	return vsig_action(sig, &a, &o) ? SIG_ERR : o.sa_handler;
}

/* System V's sigset(): SIG_HOLD blocks; anything else installs and unblocks. */
vsig_handler vsig_sigset(int sig, vsig_handler fn)
{
	struct sigaction a = { .sa_handler = fn }, o;
	sigset_t one, old;

	if (sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (fn == SIG_HOLD) {
		if (sigprocmask(SIG_BLOCK, &one, &old))
			return SIG_ERR;
		if (sigismember(&old, sig))
			return SIG_HOLD;
		return vsig_action(sig, NULL, &o) ? SIG_ERR : o.sa_handler;
	}
	sigemptyset(&a.sa_mask);
	if (vsig_action(sig, &a, &o) || sigprocmask(SIG_UNBLOCK, &one, &old))
		return SIG_ERR;
	return sigismember(&old, sig) ? SIG_HOLD : o.sa_handler;
}

int vsig_siginterrupt(int sig, int flag)
{
	struct sigaction a;

	if (sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return -1;
	}
	if (vsig_action(sig, NULL, &a))
		return -1;
	if (flag) {
		__atomic_or_fetch(&intr_set, 1ULL << (sig - 1), __ATOMIC_RELAXED);
		a.sa_flags &= ~SA_RESTART;
	} else {
		__atomic_and_fetch(&intr_set, ~(1ULL << (sig - 1)),
				   __ATOMIC_RELAXED);
		a.sa_flags |= SA_RESTART;
	}
	return vsig_action(sig, &a, NULL);
}
