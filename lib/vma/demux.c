// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The demultiplexer: RX descriptors into the queues of the attachments
 * whose cookies they carry, under the ring set's lock. A queue grows up
 * to the chunks its ring owns (it can never hold more); a datagram for a
 * full queue, or for a cookie no attachment has (its socket just left),
 * gives its chunk straight back to the FILL ring.
 */
#include <errno.h>
#include <stdlib.h>

#include "sys.h"
#include "demux.h"
#include "wait.h"

/* ---- the per-attachment queue ---- */

bool vatt_q_push(struct vatt *a, const struct vdgram *d)
{
	struct vdgram *q;
	uint32_t cap, i;

	if (a->qlen == a->qcap) {
		cap = a->qcap ? a->qcap * 2 : 64;
		if (cap > a->ring->chunks)
			cap = a->ring->chunks;
		if (cap <= a->qcap)
			return false;	/* full: it holds all the ring has */
		q = malloc(sizeof(*q) * cap);
		if (!q)
			return false;
		for (i = 0; i < a->qlen; i++)
			q[i] = a->q[(a->qhead + i) % a->qcap];
		free(a->q);
		a->q = q;
		a->qcap = cap;
		a->qhead = 0;
	}
	a->q[(a->qhead + a->qlen) % a->qcap] = *d;
	a->qlen++;
	return true;
}

struct vdgram *vatt_q_peek(struct vatt *a)
{
	return a->qlen ? &a->q[a->qhead] : NULL;
}

void vatt_q_pop(struct vatt *a)
{
	if (!a->qlen)
		return;
	a->qhead = (a->qhead + 1) % a->qcap;
	a->qlen--;
}

/* ---- cookie table ---- */

#define TOMBSTONE ((struct vatt *)1)

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	return x;
}

static struct vatt *tab_find(struct vringset *r, uint32_t cookie)
{
	uint32_t i, m = r->tab_size - 1;

	if (!r->tab_size)
		return NULL;
	for (i = hash32(cookie) & m; r->tab[i]; i = (i + 1) & m)
		if (r->tab[i] != TOMBSTONE && r->tab[i]->cookie == cookie)
			return r->tab[i];
	return NULL;
}

static int tab_insert(struct vringset *r, struct vatt *a)
{
	struct vatt **old = r->tab, **t;
	uint32_t i, n = r->tab_size, m;

	if ((r->tab_used + 1) * 2 > r->tab_size) {
		m = n ? n * 2 : 16;
		t = calloc(m, sizeof(*t));
		if (!t)
			return -ENOMEM;
		r->tab = t;
		r->tab_size = m;
		r->tab_used = 0;
		for (i = 0; i < n; i++)
			if (old[i] && old[i] != TOMBSTONE)
				tab_insert(r, old[i]);
		free(old);
	}
	m = r->tab_size - 1;
	for (i = hash32(a->cookie) & m;
	     r->tab[i] && r->tab[i] != TOMBSTONE; i = (i + 1) & m)
		;
	r->tab[i] = a;
	r->tab_used++;
	return 0;
}

static void tab_remove(struct vringset *r, struct vatt *a)
{
	uint32_t i, m = r->tab_size - 1;

	if (!r->tab_size)
		return;
	for (i = hash32(a->cookie) & m; r->tab[i]; i = (i + 1) & m)
		if (r->tab[i] == a) {
			r->tab[i] = TOMBSTONE;
			return;
		}
}

/* ---- attachments ---- */

int vdemux_add(struct vatt *a)
{
	int err;

	pthread_mutex_lock(&a->ring->lock);
	err = tab_insert(a->ring, a);
	pthread_mutex_unlock(&a->ring->lock);
	return err;
}

void vdemux_del_locked(struct vatt *a)
{
	uint32_t n = a->qlen;

	tab_remove(a->ring, a);
	while (a->qlen)
		vdemux_consume_locked(a);
	free(a->q);
	a->q = NULL;
	a->qcap = 0;
	vwait_take(a->w, n);
}

void vdemux_forget(struct vatt *a)
{
	free(a->q);
	a->q = NULL;
	a->qcap = a->qlen = a->qhead = 0;
}

void vdemux_consume_locked(struct vatt *a)
{
	struct vdgram *d = vatt_q_peek(a);

	if (!d)
		return;
	vrs_recycle_locked(a->ring, d->addr);
	vatt_q_pop(a);
}

uint32_t vdemux_drain_locked(struct vringset *r)
{
	struct vmak_ring_cons *rx = r->rs.rx;
	const struct vmak_rx_desc *d;
	struct vdgram g;
	struct vatt *a;
	uint32_t n, i, idx, total = 0;

	while ((n = vmak_ring_peek(rx, 64, &idx))) {
		for (i = 0; i < n; i++) {
			d = vmak_ring_rx_desc(rx, idx + i);
			a = tab_find(r, d->cookie);
			g.addr = d->addr;
			g.len = d->len;
			g.l3_off = d->l3_off;
			g.payload_off = d->payload_off;
			g.flags = d->flags;
			g.ts = d->ts_sw;
			if (!a) {
				r->drops++;
				vrs_recycle_locked(r, d->addr);
				continue;
			}
			if (!vatt_q_push(a, &g)) {
				__atomic_add_fetch(a->drops, 1, __ATOMIC_RELAXED);
				vrs_recycle_locked(r, d->addr);
				continue;
			}
			vwait_post(a->w);
		}
		vmak_ring_release(rx, n);
		total += n;
	}
	return total;
}

uint32_t vdemux_drain_try(struct vringset *r)
{
	uint32_t n;

	if (!vrs_pending(r) || pthread_mutex_trylock(&r->lock))
		return 0;
	n = vdemux_drain_locked(r);
	pthread_mutex_unlock(&r->lock);
	return n;
}
