// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The demultiplexer: RX descriptors into the queues of the attachments
 * whose cookies they carry, under the ring set's lock. A queue grows up
 * to the chunks its ring owns (it can never hold more); a datagram for a
 * full queue, or for a cookie no attachment has (its socket just left),
 * gives its chunk straight back to the FILL ring.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "sys.h"
#include "sig.h"
#include "demux.h"
#include "hold.h"
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
	i = a->qhead + a->qlen;		/* no division per datagram */
	if (i >= a->qcap)
		i -= a->qcap;
	/*
	 * In arrival order: a datagram whose callback ran (VMA_PACKET_RECV)
	 * comes back after what a drain meanwhile queued (the callback
	 * removed itself and received): it goes before those, one compare
	 * for every other datagram. The sequence wraps: by difference.
	 */
	while (i != a->qhead) {
		uint32_t prev = i ? i - 1 : a->qcap - 1;

		if ((int32_t)(a->q[prev].seq - d->seq) <= 0)
			break;
		a->q[i] = a->q[prev];
		i = prev;
	}
	a->q[i] = *d;
	a->qlen++;
	a->qbytes += d->plen;
	__atomic_store_n(&a->ring->queued, a->ring->queued + 1, __ATOMIC_RELAXED);
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
	a->qbytes -= a->q[a->qhead].plen;
	if (++a->qhead == a->qcap)
		a->qhead = 0;
	a->qlen--;
	__atomic_store_n(&a->ring->queued, a->ring->queued - 1, __ATOMIC_RELAXED);
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

/* The attachment whose front datagram came first, or NULL. */
static struct vatt *first_front(struct vringset *r)
{
	struct vatt *a, *best = NULL;
	uint32_t i;

	for (i = 0; i < r->tab_size; i++) {
		a = r->tab[i];
		if (!a || a == TOMBSTONE || !a->qlen)
			continue;
		/* the sequence wraps: compare by difference */
		if (!best || (int32_t)(vatt_q_peek(a)->seq -
				       vatt_q_peek(best)->seq) < 0)
			best = a;
	}
	return best;
}

unsigned int vdemux_each_front_locked(struct vringset *r,
				      bool (*fn)(struct vatt *a,
						 const struct vdgram *d,
						 void *ctx),
				      void *ctx, unsigned int max)
{
	unsigned int n = 0;
	struct vatt *a;

	/* in arrival order across the sockets, as the ring brought them */
	while (n < max && r->queued && (a = first_front(r))) {
		if (!fn(a, vatt_q_peek(a), ctx))
			break;
		vatt_q_pop(a);
		n++;
	}
	return n;
}

unsigned int vdemux_owners_locked(struct vringset *r, const void **out,
				  unsigned int max)
{
	unsigned int n = 0, k;
	const void *o;
	uint32_t i;

	for (i = 0; i < r->tab_size && n < max; i++) {
		if (!r->tab[i] || r->tab[i] == TOMBSTONE || r->tab[i]->retired)
			continue;
		o = r->tab[i]->cb->owner;
		for (k = 0; k < n && out[k] != o; k++)
			;
		if (k == n)
			out[n++] = o;
	}
	return n;
}

/* ---- attachments ---- */

int vdemux_add(struct vatt *a)
{
	int err;

	pthread_mutex_lock(&a->ring->lock);
	err = tab_insert(a->ring, a);
	if (!err)	/* W1 of a batch's protocol (wait.c) */
		__atomic_add_fetch(&a->ring->natt, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&a->ring->lock);
	if (!err)
		vwait_ring_watch(a->ring);
	return err;
}

void vdemux_del_locked(struct vatt *a)
{
	uint32_t n = a->qlen;
	uint64_t bytes = a->qbytes;

	tab_remove(a->ring, a);
	__atomic_sub_fetch(&a->ring->natt, 1, __ATOMIC_SEQ_CST);
	while (a->qlen)
		vdemux_consume_locked(a);
	free(a->q);
	a->q = NULL;
	a->qcap = 0;
	vwait_take(a->w, n, bytes);
}

void vdemux_forget(struct vatt *a)
{
	free(a->q);
	a->q = NULL;
	a->qcap = a->qlen = a->qhead = 0;
	a->qbytes = 0;
}

void vdemux_consume_locked(struct vatt *a)
{
	struct vdgram *d = vatt_q_peek(a);

	if (!d)
		return;
	vrs_recycle_locked(a->ring, d->addr);
	vatt_q_pop(a);
}

/*
 * A descriptor as a datagram: false for one whose offsets do not fit in
 * its chunk (only the module writes descriptors, but a bad one must not
 * make us read outside it).
 */
static bool to_dgram(const struct vmak_rx_desc *d, struct vdgram *g)
{
	uint32_t cs = vrs_chunk_size(), off = (uint32_t)(d->addr & (cs - 1));
	const struct udphdr *uh;
	uint32_t ulen, avail;

	if (d->len > cs - off || d->payload_off > d->len ||
	    d->payload_off < d->l3_off + 20u + sizeof(*uh))
		return false;
	g->addr = d->addr;
	g->len = d->len;
	g->l3_off = d->l3_off;
	g->payload_off = d->payload_off;
	g->flags = d->flags;
	g->ts = d->ts_sw;
	uh = (const struct udphdr *)(vdgram_payload(g) - sizeof(*uh));
	ulen = ntohs(uh->len);
	avail = d->len - d->payload_off;
	/* the UDP length, not the frame's: short frames carry padding */
	g->plen = (uint16_t)(ulen >= sizeof(*uh) && ulen - sizeof(*uh) <= avail ?
			     ulen - sizeof(*uh) : avail);
	return true;
}

/* Hold g for a's receive callback, to run once the lock is dropped. */
static bool pend(struct vringset *r, struct vatt *a, const struct vdgram *g)
{
	struct vpend *p;
	uint32_t cap, i;

	if (r->pend_len == r->pend_cap) {
		cap = r->pend_cap ? r->pend_cap * 2 : 64;
		if (cap > r->chunks)
			cap = r->chunks;
		if (cap <= r->pend_cap)
			return false;
		p = malloc(sizeof(*p) * cap);
		if (!p)
			return false;
		for (i = 0; i < r->pend_len; i++)
			p[i] = r->pend[(r->pend_head + i) % r->pend_cap];
		free(r->pend);
		r->pend = p;
		r->pend_cap = cap;
		r->pend_head = 0;
	}
	p = &r->pend[(r->pend_head + r->pend_len) % r->pend_cap];
	/* read without the lock by the polls (vdemux_callbacks()) */
	__atomic_store_n(&r->pend_len, r->pend_len + 1, __ATOMIC_RELAXED);
	p->cookie = a->cookie;
	p->d = *g;
	a->npend++;
	return true;
}

/* Into a's queue, or its chunk back to FILL (the queue is full). */
static void queue(struct vringset *r, struct vatt *a, const struct vdgram *g)
{
	if (a && vatt_q_push(a, g)) {
		vwait_post(a->w, g->plen);
		return;
	}
	if (a)
		__atomic_add_fetch(a->drops, 1, __ATOMIC_RELAXED);
	else
		r->drops++;
	vrs_recycle_locked(r, g->addr);
}

typedef bool (*direct_fn)(struct vatt *a, const struct vdgram *d, void *ctx);

static uint32_t drain(struct vringset *r, direct_fn fn, void *ctx,
		      unsigned int max, unsigned int *taken)
{
	struct vmak_ring_cons *rx = r->rs.rx;
	const struct vmak_rx_desc *d;
	vma_recv_callback_t cb;
	struct vdgram g;
	struct vatt *a;
	uint32_t n, i, idx, total = 0;

	while ((n = vmak_ring_peek(rx, 64, &idx))) {
		for (i = 0; i < n; i++) {
			d = vmak_ring_rx_desc(rx, idx + i);
			a = tab_find(r, d->cookie);
			g.seq = r->seq++;
			if (!to_dgram(d, &g)) {
				r->drops++;
				vrs_recycle_locked(r, d->addr);
				continue;
			}
			cb = a ? __atomic_load_n(&a->cb->fn, __ATOMIC_ACQUIRE) : NULL;
			/*
			 * Behind datagrams of a's that wait for its callback
			 * (removed meanwhile): in line, or it would overtake
			 */
			if ((cb || (a && a->npend)) && pend(r, a, &g))
				continue;
			/* nothing of a's waits before it: its order holds */
			if (!cb && a && fn && !a->qlen && *taken < max &&
			    fn(a, &g, ctx)) {
				(*taken)++;
				continue;
			}
			queue(r, a, &g);
		}
		vmak_ring_release(rx, n);
		total += n;
	}
	return total;
}

uint32_t vdemux_drain_locked(struct vringset *r)
{
	unsigned int taken = 0;

	return drain(r, NULL, NULL, 0, &taken);
}

unsigned int vdemux_drain_to_locked(struct vringset *r, direct_fn fn,
				    void *ctx, unsigned int max)
{
	unsigned int taken = 0;

	drain(r, fn, ctx, max, &taken);
	return taken;
}

uint32_t vdemux_drain_try(struct vringset *r)
{
	uint32_t n;

	if (!vrs_pending(r) || pthread_mutex_trylock(&r->lock))
		return 0;
	n = vdemux_drain_locked(r);
	pthread_mutex_unlock(&r->lock);
	vdemux_callbacks(r);
	return n;
}

/* What a callback learns of a datagram (IPv4: vma_info_t's addresses). */
struct cbcall {
	struct vma_info_t info;
	struct sockaddr_in src, dst;
	struct iovec iov;
};

static void cb_prepare(const struct vdgram *g, const struct vwait *w,
		       struct cbcall *c)
{
	const uint8_t *l3 = (const uint8_t *)vrs_chunk(g->addr) + g->l3_off;
	const struct udphdr *uh = (const struct udphdr *)(vdgram_payload(g) -
							  sizeof(*uh));

	memset(c, 0, sizeof(*c));
	c->src.sin_family = c->dst.sin_family = AF_INET;
	memcpy(&c->src.sin_addr, l3 + 12, 4);
	memcpy(&c->dst.sin_addr, l3 + 16, 4);
	c->src.sin_port = uh->source;
	c->dst.sin_port = uh->dest;
	c->iov.iov_base = (void *)vdgram_payload(g);
	c->iov.iov_len = g->plen;
	c->info.struct_sz = sizeof(c->info);
	c->info.packet_id = vhold_slot(g->addr);
	c->info.src = &c->src;
	c->info.dst = &c->dst;
	c->info.payload_sz = g->plen;
	c->info.socket_ready_queue_pkt_count = vwait_ready(w);
	c->info.socket_ready_queue_byte_count = (uint32_t)vwait_bytes(w);
	c->info.sw_timestamp.tv_sec = (time_t)(g->ts / 1000000000ULL);
	c->info.sw_timestamp.tv_nsec = (long)(g->ts % 1000000000ULL);
}

/*
 * A thread stopped inside a callback (pthread_exit(), or cancelled in a
 * call the callback made): the ring set's callbacks are free to run in
 * another thread, and the datagram it was given goes back.
 */
struct cbrun {
	struct vringset *r;
	uint64_t addr;
	struct vfd *pin;	/* the socket, while its callback runs */
	bool in_cb;
	bool ran;		/* a callback ran */
};

static void cb_abandoned(void *arg)
{
	struct cbrun *run = arg;

	if (!run->in_cb)
		return;
	pthread_mutex_lock(&run->r->lock);
	vrs_recycle_locked(run->r, run->addr);
	run->r->pend_running = false;
	pthread_mutex_unlock(&run->r->lock);
	if (run->pin)
		vfd_put(run->pin);
}

/* One callback, as the program's code: outside the library, errno kept. */
static vma_recv_callback_retval_t cb_call(const struct vrxcb *cb,
					  struct cbcall *c)
{
	vma_recv_callback_retval_t ret;
	int err = errno, depth = vsig_outside();

	ret = cb->fn(cb->fd, 1, &c->iov, &c->info, cb->ctx);
	vsig_inside(depth);
	errno = err;
	return ret;
}

/* The callbacks of r's pending datagrams; true if any ran. */
static bool run_now(struct vringset *r)
{
	vma_recv_callback_retval_t ret;
	struct cbrun run = { r, 0, NULL, false, false };
	uint32_t *held;
	struct vpend p;
	struct cbcall c;
	struct vrxcb cb;
	struct vatt *a;

	pthread_mutex_lock(&r->lock);
	if (r->pend_running) {
		pthread_mutex_unlock(&r->lock);
		return false;	/* the thread at it runs ours too */
	}
	r->pend_running = true;
	pthread_cleanup_push(cb_abandoned, &run);
	while (r->pend_len) {
		p = r->pend[r->pend_head];
		r->pend_head = (r->pend_head + 1) % r->pend_cap;
		__atomic_store_n(&r->pend_len, r->pend_len - 1, __ATOMIC_RELAXED);
		a = tab_find(r, p.cookie);
		if (a)
			a->npend--;
		cb.fn = a ? __atomic_load_n(&a->cb->fn, __ATOMIC_ACQUIRE) : NULL;
		/* IPv6 datagrams: vma_info_t has IPv4 addresses only */
		if (!cb.fn || (p.d.flags & VMAK_RX_IPV6)) {
			queue(r, a, &p.d);
			continue;
		}
		{
			/* the function checked above: a removal meanwhile
			 * must not make us call the NULL it stored
			 */
			vma_recv_callback_t fn = cb.fn;

			cb = *a->cb;
			cb.fn = fn;
		}
		held = &a->cb->held;	/* the socket's, kept by the pin */
		cb_prepare(&p.d, a->w, &c);
		run.addr = p.d.addr;
		/* its end waits for the callback: a HOLD stays the socket's */
		run.pin = vfd_tryref(cb.obj) ? cb.obj : NULL;
		run.in_cb = true;
		pthread_mutex_unlock(&r->lock);
		ret = cb_call(&cb, &c);
		pthread_mutex_lock(&r->lock);
		run.in_cb = false;
		run.ran = true;
		/* a RECV for a socket that left the ring meanwhile: dropped */
		a = tab_find(r, p.cookie);
		if ((ret == VMA_PACKET_DROP || ret == VMA_PACKET_HOLD) &&
		    run.pin && cb.consumed)	/* the pin keeps the counter */
			__atomic_add_fetch(cb.consumed, 1, __ATOMIC_RELAXED);
		if (ret == VMA_PACKET_HOLD && run.pin) {
			vhold_take(r, p.d.addr, c.iov.iov_base, p.d.plen, cb.owner);
			__atomic_add_fetch(held, 1, __ATOMIC_RELAXED);
		} else if (ret == VMA_PACKET_DROP || ret == VMA_PACKET_HOLD) {
			vrs_recycle_locked(r, p.d.addr);
		} else {
			queue(r, a, &p.d);
		}
		if (run.pin) {	/* its last reference may end it: no lock */
			pthread_mutex_unlock(&r->lock);
			vfd_put(run.pin);
			run.pin = NULL;
			pthread_mutex_lock(&r->lock);
		}
	}
	r->pend_running = false;
	pthread_cleanup_pop(0);
	pthread_mutex_unlock(&r->lock);
	return run.ran;
}

/* ---- callbacks found while a lock of the library's is held ---- */

#define LATER_RINGS	8

static __thread struct {
	int depth;
	unsigned int n;
	bool all;		/* more ring sets than r[] holds: every one */
	struct vringset *r[LATER_RINGS];
} later __attribute__((tls_model("initial-exec")));

void vdemux_run_callbacks(struct vringset *r)
{
	unsigned int i;

	if (!later.depth) {
		run_now(r);
		return;
	}
	for (i = 0; i < later.n; i++)
		if (later.r[i] == r)
			return;
	if (later.n < LATER_RINGS)
		later.r[later.n++] = r;
	else
		later.all = true;
}

void vdemux_defer_begin(void)
{
	later.depth++;
}

static void run_pending(struct vringset *r)
{
	vdemux_callbacks(r);
}

bool vdemux_defer_end(void)
{
	struct vringset *r[LATER_RINGS];
	unsigned int i, n;
	bool all, ran = false;

	if (--later.depth)
		return false;
	while (later.n || later.all) {
		n = later.n;
		all = later.all;
		memcpy(r, later.r, n * sizeof(r[0]));
		later.n = 0;
		later.all = false;
		for (i = 0; i < n; i++)
			if (__atomic_load_n(&r[i]->pend_len, __ATOMIC_RELAXED))
				ran = run_now(r[i]) || ran;
		if (all) {
			ran = true;	/* not counted: look again anyway */
			vrs_each(run_pending);
		}
	}
	return ran;
}

void vdemux_atfork_child(void)
{
	/* depth stays: a handler that forked inside a bracket returns to it */
	later.n = 0;
	later.all = false;
}
