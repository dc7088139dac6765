// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Chunks the application holds. A held chunk is in none of the library's
 * places (FILL ring, RX ring, a socket's queue): its ring set runs on that
 * many fewer FILL chunks until it comes back. An application that holds
 * them all leaves its rings without chunks; the module then hands what
 * arrives to the kernel socket (the rings are bound with
 * VMAK_BIND_PASS_ON_DROP), where the receive calls still find it, copied:
 * nothing stalls and nothing is lost for it, and each such datagram counts
 * as one the ring passed on (vmakctl stats).
 *
 * References: vhold_take() gives the application one; socketXtreme's ref
 * adds more; each free takes one, and the last returns the chunk under its
 * ring's lock. A chunk is returned once: a free that finds no reference
 * fails (EINVAL) and returns nothing.
 *
 * Copies (VHOLD_COPIES slots) are the same to the application: a packet,
 * references, a free; their buffers are the library's malloc()s.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hold.h"
#include "rings.h"

static struct vbuf *tab;
static uint32_t ntab;
static unsigned int chunk_shift;	/* chunks are a power of two */
static struct vbuf copies[VHOLD_COPIES];

static bool is_copy(const struct vbuf *v)
{
	return v >= copies && v < copies + VHOLD_COPIES;
}

int vhold_init(uint32_t nchunks)
{
	if (tab)
		return 0;
	tab = calloc(nchunks, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	ntab = nchunks;
	chunk_shift = (unsigned int)__builtin_ctz(vrs_chunk_size());
	return 0;
}

void vhold_atfork_child(void)
{
	free(tab);
	tab = NULL;
	ntab = 0;
}

static uint32_t index_of(uint64_t addr)
{
	return (uint32_t)(addr >> chunk_shift);
}

struct vbuf *vhold_take(struct vringset *r, uint64_t addr, void *payload,
			uint32_t plen, const void *owner)
{
	uint32_t i = index_of(addr);
	struct vbuf *v;

	if (!tab || i >= ntab)
		return NULL;
	v = &tab[i];
	v->b.next = NULL;
	v->b.payload = payload;
	v->b.len = (uint16_t)plen;
	v->plen = plen;
	v->ring = r;
	v->owner = owner;
	__atomic_store_n(&v->refs, 1, __ATOMIC_RELEASE);
	return v;
}

struct vbuf *vhold_slot(uint64_t addr)
{
	uint32_t i = index_of(addr);

	return tab && i < ntab ? &tab[i] : NULL;
}

static bool inside(uintptr_t a, const struct vbuf *t, uint32_t n)
{
	uintptr_t base = (uintptr_t)t;

	return t && a >= base && a < base + n * sizeof(*t) &&
	       !((a - base) % sizeof(*t));
}

struct vbuf *vhold_find(const void *p)
{
	uintptr_t a = (uintptr_t)p;

	if (inside(a, tab, ntab) || inside(a, copies, VHOLD_COPIES))
		return (struct vbuf *)p;
	return NULL;
}

struct vbuf *vhold_copy_claim(const void *owner)
{
	uint32_t i, zero;

	for (i = 0; i < VHOLD_COPIES; i++) {
		zero = 0;
		if (!__atomic_compare_exchange_n(&copies[i].refs, &zero, 1,
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		copies[i].owner = owner;
		copies[i].ring = NULL;
		copies[i].copy = NULL;
		return &copies[i];
	}
	return NULL;
}

void vhold_copy_fill(struct vbuf *v, void *buf, uint32_t len)
{
	v->copy = buf;
	v->b.next = NULL;
	v->b.payload = buf;
	v->b.len = (uint16_t)len;
	v->plen = len;
}

void vhold_copy_abandon(struct vbuf *v)
{
	v->copy = NULL;
	__atomic_store_n(&v->refs, 0, __ATOMIC_RELEASE);
}

/*
 * A copy's last reference is put as FREEING, never straight to 0: its
 * buffer is read and freed before the slot can be claimed again, so a
 * stale free racing a new claim never frees the old buffer twice.
 */
#define FREEING		(1U << 31)

int vhold_ref(struct vbuf *v)
{
	uint32_t refs = __atomic_load_n(&v->refs, __ATOMIC_ACQUIRE);

	do {
		if (!refs || (refs & FREEING))
			return -EINVAL;
	} while (!__atomic_compare_exchange_n(&v->refs, &refs, refs + 1, true,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return (int)refs + 1;
}

int vhold_put(struct vbuf *v)
{
	uint32_t refs = __atomic_load_n(&v->refs, __ATOMIC_ACQUIRE), to;
	bool copy = is_copy(v);
	uint64_t addr;

	do {
		if (!refs || (refs & FREEING))
			return -EINVAL;	/* given back already */
		to = refs == 1 && copy ? FREEING : refs - 1;
	} while (!__atomic_compare_exchange_n(&v->refs, &refs, to, true,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (refs > 1)
		return (int)refs - 1;
	if (copy) {	/* ours alone until refs is 0: no claim meanwhile */
		free(v->copy);
		v->copy = NULL;
		__atomic_store_n(&v->refs, 0, __ATOMIC_RELEASE);
		return 0;
	}
	addr = (uint64_t)(v - tab) * vrs_chunk_size();
	pthread_mutex_lock(&v->ring->lock);
	vrs_recycle_locked(v->ring, addr);
	pthread_mutex_unlock(&v->ring->lock);
	return 0;
}

static void release_in(struct vbuf *t, uint32_t n, const void *owner)
{
	uint32_t i, refs;

	for (i = 0; t && i < n; i++) {
		refs = __atomic_load_n(&t[i].refs, __ATOMIC_ACQUIRE);
		if (refs && !(refs & FREEING) && t[i].owner == owner) {
			t[i].owner = NULL;	/* no later socket there frees it */
			__atomic_store_n(&t[i].refs, 1, __ATOMIC_RELEASE);
			vhold_put(&t[i]);
		}
	}
}

void vhold_release_owner(const void *owner)
{
	release_in(tab, ntab, owner);
	release_in(copies, VHOLD_COPIES, owner);
}

static uint32_t held_in(const struct vbuf *t, uint32_t n)
{
	uint32_t i, k = 0;

	for (i = 0; t && i < n; i++)
		k += __atomic_load_n(&t[i].refs, __ATOMIC_RELAXED) != 0;
	return k;
}

/* Counted when asked (a statistics dump), not per datagram. */
uint32_t vhold_count(void)
{
	return held_in(tab, ntab) + held_in(copies, VHOLD_COPIES);
}
