/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Polling for an answer (recv.c): a blocking receive that comes right
 * after a send on the same socket is, in a request and its reply, waiting
 * for an answer that usually takes less time than a sleep and a wake do.
 * Such a receive polls the rings for up to VMAK_REPLY_POLL microseconds
 * before it sleeps, as the kernel's busy_read does for every receive.
 *
 * How a poll ends: the answer came in it; it ran out and the answer came
 * late, within VREPLY_LATE times the poll (the peer was slow this once,
 * say asleep because its own poll ran out: this must not make both ends
 * give up polling, each for the other's lateness); or it ran out and the
 * answer did not come by then (or the receive timed out): missed. After
 * VREPLY_GRACE misses in a row the receives that follow sleep at once, 1,
 * 3, 7 ... up to VREPLY_SKIP_MAX of them between two tries; an answer in
 * time or late starts over. A socket that never sends never polls,
 * whatever its load.
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
#define VREPLY_LATE	20	/* an answer this many polls' time late */
#define VREPLY_GRACE	3	/* misses in a row before skipping */
#define VREPLY_SKIP_MAX	1023	/* receives between two tries, at most */

enum vreply_end { VREPLY_CAME, VREPLY_LATE_CAME, VREPLY_MISSED };

struct vreply {
	uint32_t miss;		/* polls in a row that missed */
	uint32_t skip;		/* receives left that sleep at once */
	uint64_t n[3];		/* polls by how they ended (DETAILS) */
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

static inline void vreply_count(uint64_t *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

/* A poll ended so. */
static inline void vreply_done(struct vreply *p, enum vreply_end e)
{
	uint32_t m, shift;

	vreply_count(&p->n[e]);
	if (e != VREPLY_MISSED) {
		__atomic_store_n(&p->miss, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->skip, 0, __ATOMIC_RELAXED);
		return;
	}
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
