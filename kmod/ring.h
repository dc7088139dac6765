/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Single-producer/single-consumer rings shared with user space: the
 * kernel's half of the ring contract drawn in uapi/linux/vmak.h ("Ring
 * memory ordering"). Barriers are tagged with its letters A-D; the library
 * implements the user half (lib/include/vmak/ring.h).
 *
 * The kernel is the consumer of FILL and TX and the producer of RX and
 * COMPLETION. Everything read from a ring written by user space is
 * untrusted; callers validate each descriptor. This file is the only kernel
 * code that touches a ring's producer, consumer or flags words.
 */
#ifndef _VMAK_RING_H
#define _VMAK_RING_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/workqueue.h>
#include <linux/cache.h>
#include <asm/barrier.h>

/* The shared part, as mapped by user space. */
struct vmak_ring_shared {
	u32 producer ____cacheline_aligned_in_smp;
	u32 consumer ____cacheline_aligned_in_smp;
	u32 flags ____cacheline_aligned_in_smp;
	u8 desc[] ____cacheline_aligned_in_smp;
};

struct vmak_queue {
	struct vmak_ring_shared *ring;	/* vmap() of pages */
	struct page **pages;		/* accounted to the creator's memcg */
	u32 npages;
	struct user_struct *user;	/* RLIMIT_MEMLOCK charge, or NULL */
	struct work_struct free_work;
	size_t size;			/* bytes, for mmap */
	u32 nentries;
	u32 mask;
	u32 desc_size;
	u32 cached_prod;
	u32 cached_cons;
	u32 published;			/* producer side: the last index
					 * published (user space may rewrite
					 * the shared copy)
					 */
};

/* ring.c */
struct vmak_queue *vmak_queue_create(u32 nentries, u32 desc_size);
void vmak_queue_destroy(struct vmak_queue *q);
struct vm_area_struct;
int vmak_queue_mmap(struct vmak_queue *q, struct vm_area_struct *vma);

static inline void *vmak_q_desc(struct vmak_queue *q, u32 idx)
{
	return q->ring->desc + (size_t)(idx & q->mask) * q->desc_size;
}

/* ---- consumer side (FILL, TX): peek -> read -> release ---- */

/* Entries available to consume, reloading the producer if none cached. */
static inline u32 vmak_q_peek(struct vmak_queue *q)
{
	u32 n = q->cached_prod - q->cached_cons;

	if (n)
		return n;
	q->cached_prod = smp_load_acquire(&q->ring->producer); /* C, matches B */
	n = q->cached_prod - q->cached_cons;
	/* A producer index further ahead than the ring is a lie: cap it, so
	 * one packet never walks more than a ring's worth of entries.
	 */
	if (unlikely(n > q->nentries)) {
		q->cached_prod = q->cached_cons + q->nentries;
		n = q->nentries;
	}
	return n;
}

/*
 * Consume one entry (after it was read). The shared index is published by
 * vmak_q_release() once per batch.
 */
static inline void vmak_q_consume(struct vmak_queue *q)
{
	q->cached_cons++;
}

static inline void vmak_q_release(struct vmak_queue *q)
{
	smp_store_release(&q->ring->consumer, q->cached_cons); /* D, matches A */
}

/* ---- producer side (RX, COMPLETION): reserve -> write -> submit ---- */

/* Free slots, reloading the consumer index if the cache says full. */
static inline u32 vmak_q_free(struct vmak_queue *q)
{
	u32 used = q->cached_prod - q->cached_cons;

	if (used < q->nentries)
		return q->nentries - used;
	q->cached_cons = smp_load_acquire(&q->ring->consumer); /* A, matches D */
	used = q->cached_prod - q->cached_cons;
	/* A consumer index ahead of what was published (or a ring's worth
	 * behind it) is a lie: the ring counts as full until user space puts
	 * it back, so no slot is handed out twice.
	 */
	if (READ_ONCE(q->published) - q->cached_cons > q->nentries)
		return 0;
	return used < q->nentries ? q->nentries - used : 0;
}

/* Slot for the next entry; the caller checked vmak_q_free(). */
static inline void *vmak_q_reserve(struct vmak_queue *q)
{
	return vmak_q_desc(q, q->cached_prod++);
}

static inline void vmak_q_submit(struct vmak_queue *q)
{
	q->published = q->cached_prod;
	smp_store_release(&q->ring->producer, q->cached_prod); /* B, matches C */
}

/*
 * Publish the producer index idx, reserved earlier and finished out of
 * order (COMPLETION: frames complete in any order; the caller moves idx
 * over the finished prefix only).
 */
static inline void vmak_q_publish(struct vmak_queue *q, u32 idx)
{
	WRITE_ONCE(q->published, idx);
	smp_store_release(&q->ring->producer, idx); /* B, matches C */
}

/* ---- poll-side peeks ---- */

/*
 * No barriers are needed in these: they read no descriptor, and a stale
 * answer only makes poll() look again after the next wakeup.
 */

/* Has the producer posted entries the consumer has not taken? */
static inline bool vmak_q_nonempty_peek(const struct vmak_queue *q)
{
	return READ_ONCE(q->ring->producer) != READ_ONCE(q->ring->consumer);
}

/* Has the producer room for one more entry? */
static inline bool vmak_q_room_peek(const struct vmak_queue *q)
{
	return READ_ONCE(q->ring->producer) - READ_ONCE(q->ring->consumer) <
	       q->nentries;
}

static inline bool vmak_q_flag_peek(const struct vmak_queue *q, u32 flag)
{
	return READ_ONCE(q->ring->flags) & flag;
}

static inline void vmak_q_set_flag(struct vmak_queue *q, u32 flag)
{
	u32 f = READ_ONCE(q->ring->flags);

	if (!(f & flag))
		WRITE_ONCE(q->ring->flags, f | flag);
}

static inline void vmak_q_clear_flag(struct vmak_queue *q, u32 flag)
{
	u32 f = READ_ONCE(q->ring->flags);

	if (f & flag)
		WRITE_ONCE(q->ring->flags, f & ~flag);
}

#endif /* _VMAK_RING_H */
