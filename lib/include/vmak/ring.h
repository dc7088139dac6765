/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * User-space side of the vmak rings: the same verbs as the kernel's.
 *
 *   producer (FILL, TX):        reserve -> write -> submit
 *   consumer (RX, COMPLETION):  peek    -> read  -> release
 *
 * The two sides are distinct types, so the compiler refuses a consumer verb
 * on a producer ring and the reverse. Barriers carry the letters of the
 * ordering contract drawn in <linux/vmak.h> ("Ring memory ordering"): A and
 * B on the producer side, C and D on the consumer side.
 *
 * One thread per ring side: the rings are single-producer/single-consumer.
 */
#ifndef _VMAK_RING_USER_H
#define _VMAK_RING_USER_H

#include <stddef.h>
#include <stdint.h>
#include "linux/vmak.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One mapped ring; the same fields for both sides, distinct types. The
 * members are the verbs' own: callers use the functions below, never the
 * indexes (only the verbs know which load pairs with which store).
 */
#define VMAK_DEFINE_RING(name)						\
struct name {								\
	uint32_t cached_prod;						\
	uint32_t cached_cons;						\
	uint32_t mask;							\
	uint32_t size;							\
	uint32_t *producer;						\
	uint32_t *consumer;						\
	uint32_t *flags;						\
	void *desc;							\
	void *map;		/* the mmap()ed region, for munmap */	\
	size_t map_len;							\
}

VMAK_DEFINE_RING(vmak_ring_prod);	/* FILL, TX: user space produces */
VMAK_DEFINE_RING(vmak_ring_cons);	/* RX, COMPLETION: user space consumes */

/* ---- descriptors ---- */

static inline uint64_t *vmak_ring_fill_addr(struct vmak_ring_prod *fill,
					    uint32_t idx)
{
	return &((uint64_t *)fill->desc)[idx & fill->mask];
}

static inline struct vmak_tx_desc *vmak_ring_tx_desc(struct vmak_ring_prod *tx,
						     uint32_t idx)
{
	return &((struct vmak_tx_desc *)tx->desc)[idx & tx->mask];
}

static inline const struct vmak_rx_desc *
vmak_ring_rx_desc(const struct vmak_ring_cons *rx, uint32_t idx)
{
	return &((const struct vmak_rx_desc *)rx->desc)[idx & rx->mask];
}

static inline uint64_t vmak_ring_comp_addr(const struct vmak_ring_cons *comp,
					   uint32_t idx)
{
	return ((const uint64_t *)comp->desc)[idx & comp->mask];
}

/* ---- producer ---- */

static inline uint32_t vmak_ring_free(struct vmak_ring_prod *r, uint32_t want)
{
	uint32_t n = r->size - (r->cached_prod - r->cached_cons);

	if (n >= want)
		return n;
	/* A, matches D */
	r->cached_cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	return r->size - (r->cached_prod - r->cached_cons);
}

/* Reserve n slots; *idx is the first. Returns n, or 0 without room. */
static inline uint32_t vmak_ring_reserve(struct vmak_ring_prod *r, uint32_t n,
					 uint32_t *idx)
{
	if (vmak_ring_free(r, n) < n)
		return 0;
	*idx = r->cached_prod;
	r->cached_prod += n;
	return n;
}

static inline void vmak_ring_submit(struct vmak_ring_prod *r, uint32_t n)
{
	/* B, matches C */
	__atomic_store_n(r->producer, *r->producer + n, __ATOMIC_RELEASE);
}

/* ---- consumer ---- */

/* Up to n entries ready to read; *idx is the first. */
static inline uint32_t vmak_ring_peek(struct vmak_ring_cons *r, uint32_t n,
				      uint32_t *idx)
{
	uint32_t avail = r->cached_prod - r->cached_cons;

	if (avail == 0) {
		/* C, matches B */
		r->cached_prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
		avail = r->cached_prod - r->cached_cons;
	}
	if (avail > n)
		avail = n;
	*idx = r->cached_cons;
	r->cached_cons += avail;
	return avail;
}

/*
 * Entries the producer published beyond those the consumer released:
 * a look without owning the consumer side (another thread may be between
 * peek and release, whose entries then still count). Reads the published
 * indexes, never the owner's cached ones.
 */
static inline uint32_t vmak_ring_cons_pending(const struct vmak_ring_cons *r)
{
	/* C, matches B */
	return __atomic_load_n(r->producer, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(r->consumer, __ATOMIC_RELAXED);
}

/*
 * Entries the producer published that the kernel has not taken yet (on
 * FILL: chunks the kernel can still fill), a look from any thread.
 */
static inline uint32_t vmak_ring_prod_pending(const struct vmak_ring_prod *r)
{
	/* the consumer first: it never passes a producer read after it */
	uint32_t c = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	int32_t n = (int32_t)(__atomic_load_n(r->producer, __ATOMIC_ACQUIRE) - c);

	return n > 0 ? (uint32_t)n : 0;
}

static inline void vmak_ring_release(struct vmak_ring_cons *r, uint32_t n)
{
	/* D, matches A */
	__atomic_store_n(r->consumer, *r->consumer + n, __ATOMIC_RELEASE);
}

/*
 * Give the chunks of n RX descriptors from rx_idx back to the FILL ring
 * (the chunks are taken whole: any address inside one will do). Returns n,
 * or 0 when the FILL ring has no room for all of them.
 */
static inline uint32_t vmak_ring_recycle(struct vmak_ring_prod *fill,
					 const struct vmak_ring_cons *rx,
					 uint32_t rx_idx, uint32_t n)
{
	uint32_t fidx, i;

	if (!vmak_ring_reserve(fill, n, &fidx))
		return 0;
	for (i = 0; i < n; i++)
		*vmak_ring_fill_addr(fill, fidx + i) =
			vmak_ring_rx_desc(rx, rx_idx + i)->addr;
	vmak_ring_submit(fill, n);
	return n;
}

/* The kernel's flags word of a ring user space produces into. */
static inline int vmak_ring_needs_wakeup(const struct vmak_ring_prod *r)
{
	return __atomic_load_n(r->flags, __ATOMIC_RELAXED) & VMAK_RING_NEED_WAKEUP;
}

#ifdef __cplusplus
}
#endif
#endif /* _VMAK_RING_USER_H */
