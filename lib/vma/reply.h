/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Polling for an answer (recv.c): a blocking receive that comes right
 * after a send on the same socket is, in a request and its reply, waiting
 * for an answer that usually takes less time than a sleep and a wake do.
 * Such a receive polls the rings for up to VMAK_REPLY_POLL microseconds
 * before it sleeps, as the kernel's busy_read does for every receive.
 *
 * A socket whose answers do not come within the poll stops paying for
 * it: after VREPLY_GRACE polls in a row that ended empty, the receives
 * that follow sleep at once, 1, 3, 7 ... up to VREPLY_SKIP_MAX of them
 * between two tries, and one answer that comes in time starts over. A
 * socket that never sends never polls, whatever its load.
 *
 * The state is one socket's, read and written by its receiving threads
 * without a lock: it only steers a heuristic, so racing updates cost a
 * poll more or less, never a datagram.
 */
#ifndef _VMAK_VMA_REPLY_H
#define _VMAK_VMA_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#define VREPLY_POLL_US	50	/* VMAK_REPLY_POLL's default */
#define VREPLY_GRACE	3	/* empty polls in a row before skipping */
#define VREPLY_SKIP_MAX	1023	/* receives between two tries, at most */

struct vreply {
	uint32_t miss;		/* polls in a row that ended empty */
	uint32_t skip;		/* receives left that sleep at once */
	uint64_t came;		/* polls the answer came in (DETAILS) */
	uint64_t missed;	/* ... and ran out */
};

/* The answer's receive: poll this time? */
static inline bool vreply_try(struct vreply *p)
{
	uint32_t s = __atomic_load_n(&p->skip, __ATOMIC_RELAXED);

	if (!s)
		return true;
	__atomic_store_n(&p->skip, s - 1, __ATOMIC_RELAXED);
	return false;
}

/* A poll ended: the answer came in it, or the time ran out. */
static inline void vreply_done(struct vreply *p, bool came)
{
	uint32_t m, shift;

	if (came) {
		__atomic_store_n(&p->miss, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->skip, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->came,
				 __atomic_load_n(&p->came, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&p->missed,
			 __atomic_load_n(&p->missed, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	m = __atomic_load_n(&p->miss, __ATOMIC_RELAXED) + 1;
	if (m < VREPLY_GRACE) {
		__atomic_store_n(&p->miss, m, __ATOMIC_RELAXED);
		return;
	}
	/* the skip doubles per miss past the grace: 1, 3, 7, ... */
	shift = m - VREPLY_GRACE + 1;
	if ((1u << shift) - 1 >= VREPLY_SKIP_MAX) {
		__atomic_store_n(&p->skip, VREPLY_SKIP_MAX, __ATOMIC_RELAXED);
		return;		/* miss stays: no overflow however long */
	}
	__atomic_store_n(&p->miss, m, __ATOMIC_RELAXED);
	__atomic_store_n(&p->skip, (1u << shift) - 1, __ATOMIC_RELAXED);
}

#endif
