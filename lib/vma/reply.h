/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Polling for an answer (recv.c): a blocking receive that comes right
 * after a send on the same socket is, in a request and its reply, waiting
 * for an answer that usually takes less time than a sleep and a wake do.
 * Such a receive polls the rings for up to VMAK_REPLY_POLL microseconds
 * before it sleeps, as the kernel's busy_read does for every receive.
 *
 * An answer is a datagram from the address and port the socket last sent
 * to. How a poll ends: the answer came in it; the poll ran out and the
 * answer came late, within VREPLY_LATE times the poll; a datagram from
 * someone else came, in the poll or late; or nothing came by then (or
 * the receive timed out): missed. Each ending moves a debt: an answer in
 * the poll pays one back, a late one nothing, another's datagram costs
 * VREPLY_OTHER_COST, a miss VREPLY_MISS_COST.
 *
 * So two ends polling for each other keep polling when one of them
 * sometimes sleeps (the other's answer then comes late: were that a cost,
 * both would give up, each for the other's lateness, and stay asleep, as
 * a bench boot showed), while a socket that sends to one address and
 * receives from others (a relay, a server of many clients) soon stops.
 * Each time the debt reaches VREPLY_DEBT_MAX, the receives that follow
 * sleep at once, 1, 3, 7 ... up to VREPLY_SKIP_MAX of them between two
 * tries, and the debt drops to just under the bound: the next try that
 * brings no answer (in time or late) doubles the skip again. Once answers
 * in time have paid the debt back the doubling starts over. A socket that never sends never polls, whatever its load.
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
	uint64_t n[4];		/* polls by how they ended (DETAILS) */
};

/* An address (IPv4 as mapped IPv6) and port as one number, never 0. */
static inline uint64_t vreply_key(const uint8_t a[16], uint16_t port)
{
	uint64_t x, y;

	memcpy(&x, a, 8);
	memcpy(&y, a + 8, 8);
	return ((x * 0x9e3779b97f4a7c15ULL) ^ y ^ ((uint64_t)port << 40)) | 1;
}

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
	uint32_t d = __atomic_load_n(&p->debt, __ATOMIC_RELAXED);
	uint32_t l = __atomic_load_n(&p->level, __ATOMIC_RELAXED);

	vreply_count(&p->n[e]);
	if (e == VREPLY_LATE_CAME)
		return;
	if (e == VREPLY_CAME) {
		__atomic_store_n(&p->debt, d ? d - 1 : 0, __ATOMIC_RELAXED);
		if (d <= 1)
			__atomic_store_n(&p->level, 0, __ATOMIC_RELAXED);
		return;
	}
	d += e == VREPLY_MISSED ? VREPLY_MISS_COST : VREPLY_OTHER_COST;
	if (d >= VREPLY_DEBT_MAX) {
		d = VREPLY_DEBT_MAX - VREPLY_OTHER_COST;
		if (l < VREPLY_LEVEL_MAX)
			l++;
		__atomic_store_n(&p->level, l, __ATOMIC_RELAXED);
		__atomic_store_n(&p->skip, (1u << l) - 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&p->debt, d, __ATOMIC_RELAXED);
}

#endif
