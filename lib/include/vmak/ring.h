/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * User-space side of the vmak rings: the same verbs as kmod/ring.h.
 *
 *   producer (FILL, TX):        reserve -> write -> submit
 *   consumer (RX, COMPLETION):  peek    -> read  -> release
 *
 * Ordering (see kmod/ring.h for the picture): a producer loads 'consumer'
 * with acquire before reusing slots (A) and stores 'producer' with release
 * after writing them (B); a consumer loads 'producer' with acquire before
 * reading (C) and stores 'consumer' with release after reading (D).
 * B pairs with C, D pairs with A. Each side caches the other's index.
 *
 * One thread per ring side: the rings are single-producer/single-consumer.
 */
#ifndef _VMAK_RING_USER_H
#define _VMAK_RING_USER_H

#include <stdint.h>
#include "linux/vmak.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vmak_uring {
	uint32_t cached_prod;
	uint32_t cached_cons;
	uint32_t mask;
	uint32_t size;
	uint32_t *producer;
	uint32_t *consumer;
	uint32_t *flags;
	void *desc;
	void *map;		/* the mmap()ed region, for munmap */
	size_t map_len;
};

static inline uint64_t *vmak_ring_addr(struct vmak_uring *r, uint32_t idx)
{
	return &((uint64_t *)r->desc)[idx & r->mask];
}

static inline struct vmak_rx_desc *vmak_ring_rx_desc(struct vmak_uring *r,
						     uint32_t idx)
{
	return &((struct vmak_rx_desc *)r->desc)[idx & r->mask];
}

static inline struct vmak_tx_desc *vmak_ring_tx_desc(struct vmak_uring *r,
						     uint32_t idx)
{
	return &((struct vmak_tx_desc *)r->desc)[idx & r->mask];
}

/* ---- producer ---- */

static inline uint32_t vmak_ring_free(struct vmak_uring *r, uint32_t want)
{
	uint32_t n = r->size - (r->cached_prod - r->cached_cons);

	if (n >= want)
		return n;
	/* A, matches the kernel's D */
	r->cached_cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	return r->size - (r->cached_prod - r->cached_cons);
}

/* Reserve up to n slots; *idx is the first. Returns how many (0 or n). */
static inline uint32_t vmak_ring_reserve(struct vmak_uring *r, uint32_t n,
					 uint32_t *idx)
{
	if (vmak_ring_free(r, n) < n)
		return 0;
	*idx = r->cached_prod;
	r->cached_prod += n;
	return n;
}

static inline void vmak_ring_submit(struct vmak_uring *r, uint32_t n)
{
	/* B, matches the kernel's C */
	__atomic_store_n(r->producer, *r->producer + n, __ATOMIC_RELEASE);
}

/* ---- consumer ---- */

/* Up to n entries ready to read; *idx is the first. */
static inline uint32_t vmak_ring_peek(struct vmak_uring *r, uint32_t n,
				      uint32_t *idx)
{
	uint32_t avail = r->cached_prod - r->cached_cons;

	if (avail == 0) {
		/* C, matches the kernel's B */
		r->cached_prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
		avail = r->cached_prod - r->cached_cons;
	}
	if (avail > n)
		avail = n;
	*idx = r->cached_cons;
	r->cached_cons += avail;
	return avail;
}

static inline void vmak_ring_release(struct vmak_uring *r, uint32_t n)
{
	/* D, matches the kernel's A */
	__atomic_store_n(r->consumer, *r->consumer + n, __ATOMIC_RELEASE);
}

/*
 * Give the chunks of n RX descriptors from rx_idx back to the FILL ring
 * (the chunks are taken whole: any address inside one will do). Returns n,
 * or 0 when the FILL ring has no room for all of them.
 */
static inline uint32_t vmak_ring_recycle(struct vmak_uring *fill,
					 struct vmak_uring *rx, uint32_t rx_idx,
					 uint32_t n)
{
	uint32_t fidx, i;

	if (!vmak_ring_reserve(fill, n, &fidx))
		return 0;
	for (i = 0; i < n; i++)
		*vmak_ring_addr(fill, fidx + i) = vmak_ring_rx_desc(rx, rx_idx + i)->addr;
	vmak_ring_submit(fill, n);
	return n;
}

/* The kernel's flags word (VMAK_RING_NEED_WAKEUP). */
static inline int vmak_ring_needs_wakeup(const struct vmak_uring *r)
{
	return __atomic_load_n(r->flags, __ATOMIC_RELAXED) & VMAK_RING_NEED_WAKEUP;
}

#ifdef __cplusplus
}
#endif
#endif /* _VMAK_RING_USER_H */
