/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Entering the library from a call of the program's (an interposer, the
 * fd table's protocol): the thread is marked inside (sig.h), so that a
 * signal handler that interrupts it and calls in goes straight to the C
 * library instead of waiting for a lock this thread holds; and what such
 * handlers left for the fd table is done first.
 */
#ifndef _VMAK_VMA_ENTER_H
#define _VMAK_VMA_ENTER_H

#include "fd.h"
#include "sig.h"

/* False if the thread is inside already (a handler that interrupted us). */
static inline bool ventry_mark(void)
{
	if (!vsig_enter())
		return false;
	if (__atomic_load_n(&vfd_late, __ATOMIC_ACQUIRE))
		vfd_late_drain();
	return true;
}

static inline void ventry_unmark(void)
{
	vsig_leave();
}

#endif /* _VMAK_VMA_ENTER_H */
