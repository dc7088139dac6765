/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The program's signal handlers, seen through (sig.c), and the thread's
 * depth inside the library.
 */
#ifndef _VMAK_VMA_SIG_H
#define _VMAK_VMA_SIG_H

#include <signal.h>
#include <stdbool.h>

#include "internal.h"

/*
 * Per thread: that a handler ran during a wait of ours, and whether one
 * without SA_RESTART did; and how deep the thread is inside the library.
 * A handler that interrupts the library and calls an interposer finds
 * depth > 0 and goes straight to the C library: it must not wait for a
 * lock its own thread holds.
 */
struct vsig_seen {
	volatile sig_atomic_t ran, intr;
	volatile sig_atomic_t depth;
};
extern __thread struct vsig_seen vsig_seen
	__attribute__((tls_model("initial-exec"))) VMAK_HIDDEN;

static inline void vsig_arm(void)
{
	vsig_seen.ran = 0;
	vsig_seen.intr = 0;
}

/* After EINTR: did only handlers with SA_RESTART (known to us) run? */
static inline bool vsig_restartable(void)
{
	return vsig_seen.ran && !vsig_seen.intr;
}

/* Entering the library: false if this thread is in it already. */
static inline bool vsig_enter(void)
{
	if (vsig_seen.depth)
		return false;
	vsig_seen.depth = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return true;
}

static inline void vsig_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	vsig_seen.depth = 0;
}

/*
 * Program code the library calls (a receive callback) runs as if the
 * program had made its calls itself: outside the library, so that what
 * it calls goes through the library again. Returns the depth to restore.
 */
static inline int vsig_outside(void)
{
	int depth = vsig_seen.depth;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	vsig_seen.depth = 0;
	return depth;
}

static inline void vsig_inside(int depth)
{
	vsig_seen.depth = depth;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

int vsig_action(int sig, const struct sigaction *act, struct sigaction *oact)
	VMAK_HIDDEN;
typedef void (*vsig_handler)(int);
vsig_handler vsig_signal(int sig, vsig_handler fn) VMAK_HIDDEN;
vsig_handler vsig_sysv_signal(int sig, vsig_handler fn) VMAK_HIDDEN;
vsig_handler vsig_sigset(int sig, vsig_handler fn) VMAK_HIDDEN;
int vsig_siginterrupt(int sig, int flag) VMAK_HIDDEN;
/* In the child of fork(): the update lock may have been held. */
void vsig_atfork_prepare(void) VMAK_HIDDEN;
void vsig_atfork_parent(void) VMAK_HIDDEN;
void vsig_atfork_child(void) VMAK_HIDDEN;

#endif /* _VMAK_VMA_SIG_H */
