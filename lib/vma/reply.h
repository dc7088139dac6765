/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Polling for an answer (recv.c): a blocking receive that comes right
 * after a send on the same socket is, in a request and its reply, waiting
 * for an answer that often takes less time than a sleep and a wake do.
 * Such a receive polls the rings for up to VMAK_REPLY_POLL microseconds
 * before it sleeps (the kernel's busy_read, when set, polls so before
 * every receive).
 *
 * An answer is a datagram from the address and port the socket last sent
 * to. How a poll ends: the answer came in it; the poll ran out and the
 * answer came late, within VREPLY_LATE times the poll; a datagram from
 * someone else came, in the poll or late; or nothing came by then (or
 * the receive timed out or was interrupted): missed. Each ending moves a
 * debt: an answer in the poll pays one back, a late one costs
 * VREPLY_LATE_COST, another's datagram VREPLY_OTHER_COST, a miss
 * VREPLY_MISS_COST. Polling goes on while at least half the answers come
 * in the poll, so two ends polling for each other keep polling when one
 * of them sometimes sleeps (the other's answer then comes late), while a
 * peer that answers later than the poll lasts, a relay (sends to one
 * address, receives from another) or a server of many clients soon
 * stops.
 *
 * Each time the debt reaches VREPLY_DEBT_MAX, the receives that follow
 * sleep at once, 1, 3, 7 ... up to VREPLY_SKIP_MAX of them, and the debt
 * drops to just under the bound: the next try that brings no answer in
 * time doubles the skip again. That try (a probe) polls VREPLY_PROBE
 * times longer, and an answer in it clears the debt: when two ends have
 * both given up, each sleeping until the other's answer wakes it, a
 * single poll as short as a wake cannot catch the other's answer, a
 * probe can, and the end that caught one polls for a while, long enough
 * for the other's probe to find it polling. Once answers in time have
 * paid the debt back the doubling starts over. A socket that never sends
 * never polls, whatever its load.
 *
 * The state is one socket's, read and written by its receiving threads
 * without a lock: it only steers a heuristic, so racing updates cost a
 * poll more or less, never a datagram.
 */
#ifndef _VMAK_VMA_REPLY_H
#define _VMAK_VMA_REPLY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define VREPLY_POLL_US		50	/* VMAK_REPLY_POLL's default */
#define VREPLY_LATE		20	/* late: within this many polls' time */
#define VREPLY_PROBE		4	/* a probe polls this many times longer */
#define VREPLY_LATE_COST	1
#define VREPLY_OTHER_COST	4
#define VREPLY_MISS_COST	16
#define VREPLY_DEBT_MAX		32
#define VREPLY_LEVEL_MAX	10	/* skips of up to 2^10 - 1 */
#define VREPLY_SKIP_MAX		((1u << VREPLY_LEVEL_MAX) - 1)

enum vreply_end { VREPLY_CAME, VREPLY_LATE_CAME, VREPLY_OTHER, VREPLY_MISSED };

struct vreply {
	uint32_t debt;
	uint32_t level;		/* doublings of the skip, since no debt */
	uint32_t skip;		/* receives left that sleep at once */
	bool probe;		/* the next try is a probe */
	uint64_t n[4];		/* polls by how they ended (DETAILS) */
};

/* An address (IPv4 as mapped IPv6) and port as one number, never 0. */
static inline uint64_t vreply_key(const uint8_t a[16], uint16_t port)
{
	uint64_t x, y;

	memcpy(&x, a, 8);
	memcpy(&y, a + 8, 8);
	x = (x ^ port) * 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 29) ^ y) * 0xbf58476d1ce4e5b9ULL;
	return (x ^ (x >> 32)) | 1;
}

enum vreply_try { VREPLY_SLEEP, VREPLY_POLL, VREPLY_PROBE_POLL };

/* The answer's receive: poll this time, and how long? */
static inline enum vreply_try vreply_try(struct vreply *p)
{
	uint32_t s = __atomic_load_n(&p->skip, __ATOMIC_RELAXED);

	if (s) {
		__atomic_store_n(&p->skip, s - 1, __ATOMIC_RELAXED);
		return VREPLY_SLEEP;
	}
	return __atomic_load_n(&p->probe, __ATOMIC_RELAXED) ?
		VREPLY_PROBE_POLL : VREPLY_POLL;
}

static inline void vreply_count(uint64_t *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

/* A poll ended so. */
static inline void vreply_done(struct vreply *p, enum vreply_end e)
{
	uint32_t d = __atomic_load_n(&p->debt, __ATOMIC_RELAXED);
	uint32_t l = __atomic_load_n(&p->level, __ATOMIC_RELAXED);
	bool probe = __atomic_load_n(&p->probe, __ATOMIC_RELAXED);

	vreply_count(&p->n[e]);
	if (probe)
		__atomic_store_n(&p->probe, false, __ATOMIC_RELAXED);
	if (e == VREPLY_CAME) {
		__atomic_store_n(&p->debt, d && !probe ? d - 1 : 0,
				 __ATOMIC_RELAXED);
		if (d <= 1)
			__atomic_store_n(&p->level, 0, __ATOMIC_RELAXED);
		return;
	}
	d += e == VREPLY_MISSED ? VREPLY_MISS_COST :
	     e == VREPLY_OTHER ? VREPLY_OTHER_COST : VREPLY_LATE_COST;
	if (d >= VREPLY_DEBT_MAX) {
		d = VREPLY_DEBT_MAX - 1;
		if (l < VREPLY_LEVEL_MAX)
			l++;
		__atomic_store_n(&p->level, l, __ATOMIC_RELAXED);
		__atomic_store_n(&p->skip, (1u << l) - 1, __ATOMIC_RELAXED);
		__atomic_store_n(&p->probe, true, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&p->debt, d, __ATOMIC_RELAXED);
}

#endif
