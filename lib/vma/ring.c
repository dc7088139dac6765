// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Rings shared by offloaded sockets, and the demultiplexer.
 *
 * One UMEM per process, registered by the first ring and shared by the
 * others (VMAK_BIND_SHARED_UMEM); its chunks sit in a pool, and each ring
 * takes VMA_RX_WRE of them for its FILL ring. A chunk goes round: FILL,
 * RX descriptor, the queue of the socket whose rule cookie it carries, and
 * back to the FILL ring of its ring once the application has read it.
 * Rings are bound with VMAK_BIND_PASS_ON_DROP: what a ring cannot take
 * (no chunk free, RX ring full) goes on to the kernel socket, where the
 * receive path finds it, so a slow reader slows, it does not lose.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"

#define VRING_TX	256	/* TX and COMPLETION entries */
#define VRING_TX_CHUNKS	64	/* chunks a ring keeps for TX frames */

char vring_why[160] VMAK_HIDDEN;
static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vring *rings;

static struct {
	void *base;
	uint64_t len;
	uint32_t chunk, nchunks;
	int owner_fd;		/* the ring that registered it, -1 */
	uint64_t *pool;		/* free chunk addresses */
	uint32_t npool;
	bool failed;		/* tried and could not: kernel sockets */
} umem = { .owner_fd = -1 };

/* ---- the per-socket queue ---- */

bool vq_push(struct vatt *a, const struct vdgram *d)
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

struct vdgram *vq_peek(struct vatt *a)
{
	return a->qlen ? &a->q[a->qhead] : NULL;
}

void vq_pop(struct vatt *a)
{
	if (!a->qlen)
		return;
	a->qhead = (a->qhead + 1) % a->qcap;
	a->qlen--;
}

/* ---- cookie table ---- */

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	return x;
}

static struct vatt *tab_find(struct vring *r, uint32_t cookie)
{
	uint32_t i, m = r->tab_size - 1;

	if (!r->tab_size)
		return NULL;
	for (i = hash32(cookie) & m; r->tab[i]; i = (i + 1) & m)
		if (r->tab[i] != (struct vatt *)1 && r->tab[i]->cookie == cookie)
			return r->tab[i];
	return NULL;
}

static int tab_insert(struct vring *r, struct vatt *a)
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
			if (old[i] && old[i] != (struct vatt *)1)
				tab_insert(r, old[i]);
		free(old);
	}
	m = r->tab_size - 1;
	for (i = hash32(a->cookie) & m;
	     r->tab[i] && r->tab[i] != (struct vatt *)1; i = (i + 1) & m)
		;
	r->tab[i] = a;
	r->tab_used++;
	return 0;
}

static void tab_remove(struct vring *r, struct vatt *a)
{
	uint32_t i, m = r->tab_size - 1;

	if (!r->tab_size)
		return;
	for (i = hash32(a->cookie) & m; r->tab[i]; i = (i + 1) & m)
		if (r->tab[i] == a) {
			r->tab[i] = (struct vatt *)1;	/* tombstone */
			return;
		}
}

/* ---- chunks ---- */

void *vring_chunk(uint64_t addr)
{
	return (char *)umem.base + addr;
}

/* The device's MTU, for the largest frame a TX ring may carry. */
static uint32_t dev_mtu(int ifindex)
{
	struct ifreq ifr;
	int s = vmak_sys_socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t mtu = 1500;

	memset(&ifr, 0, sizeof(ifr));
	if (s >= 0 && if_indextoname((unsigned int)ifindex, ifr.ifr_name) &&
	    !vmak_sys_ioctl(s, SIOCGIFMTU, (long)&ifr))
		mtu = (uint32_t)ifr.ifr_mtu;
	if (s >= 0)
		vmak_sys_close(s);
	return mtu;
}

void vring_recycle_locked(struct vring *r, uint64_t addr)
{
	uint32_t idx;

	addr &= ~(uint64_t)(umem.chunk - 1);
	if (vmak_ring_reserve(r->rs.fill, 1, &idx)) {
		*vmak_ring_fill_addr(r->rs.fill, idx) = addr;
		vmak_ring_submit(r->rs.fill, 1);
	}
	/* The FILL ring holds every chunk the ring owns: never full. */
}

/*
 * The UMEM, sized to what RLIMIT_MEMLOCK leaves room for (the rings are
 * charged too), at least 128 chunks.
 */
static int umem_setup(void)
{
	uint64_t len = vconf.umem_size, rings_bytes = 256 << 10;
	struct rlimit rl;
	uint32_t i;

	if (umem.base)
		return 0;
	if (umem.failed)
		return -ENOBUFS;	/* vring_why still says why */
	umem.chunk = vconf.chunk_size;
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < len + rings_bytes) {
		len = rl.rlim_cur > rings_bytes ? rl.rlim_cur - rings_bytes : 0;
		len &= ~((uint64_t)umem.chunk * 64 - 1);
		if (len < 128ULL * umem.chunk) {
			snprintf(vring_why, sizeof(vring_why),
				 "RLIMIT_MEMLOCK is %llu bytes: too small for the smallest UMEM (%llu bytes and the rings; raise it with ulimit -l)",
				 (unsigned long long)rl.rlim_cur,
				 128ULL * umem.chunk);
			umem.failed = true;
			return -ENOBUFS;
		}
		vlog(VLOG_INFO, "UMEM cut to %llu bytes to fit RLIMIT_MEMLOCK (%llu)",
		     (unsigned long long)len, (unsigned long long)rl.rlim_cur);
	}
	umem.base = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (umem.base == MAP_FAILED) {
		umem.base = NULL;
		return -errno;
	}
	umem.len = len;
	umem.nchunks = (uint32_t)(len / umem.chunk);
	umem.pool = malloc(sizeof(*umem.pool) * umem.nchunks);
	if (!umem.pool) {
		munmap(umem.base, len);
		umem.base = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < umem.nchunks; i++)
		umem.pool[i] = (uint64_t)(umem.nchunks - 1 - i) * umem.chunk;
	umem.npool = umem.nchunks;
	return 0;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = VMAK_RING_MIN;

	while (p < n)
		p <<= 1;
	return p;
}

static struct vring *ring_open(int ifindex, uint64_t key)
{
	struct vmak_ringset_config cfg;
	struct vring *r;
	uint32_t take, idx, i;
	int err, fd;

	err = umem_setup();
	if (err) {
		errno = -err;
		return NULL;
	}
	take = vconf.rx_chunks < umem.npool ? vconf.rx_chunks : umem.npool;
	if (take < 32) {
		snprintf(vring_why, sizeof(vring_why),
			 "the UMEM's %u chunks are all given to rings (raise VMAK_UMEM_SIZE)",
			 umem.nchunks);
		errno = ENOBUFS;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->txlock, NULL);
	r->ifindex = ifindex;
	r->key = key;
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)ifindex;
	cfg.bind_flags = VMAK_BIND_PASS_ON_DROP |
			 (vconf.rx_timestamp ? VMAK_BIND_RX_TIMESTAMP : 0);
	cfg.rx_size = vconf.rx_ring > take ? vconf.rx_ring : pow2_at_least(take);
	cfg.fill_size = pow2_at_least(take);
	cfg.tx_size = VRING_TX;
	cfg.comp_size = VRING_TX;
	cfg.chunk_size = umem.chunk;
	if (umem.owner_fd < 0) {
		cfg.umem = umem.base;
		cfg.umem_len = umem.len;
	} else {
		cfg.umem = NULL;
		cfg.umem_len = umem.len;
		cfg.shared_umem_fd = umem.owner_fd;
	}
	err = vmak_ringset_open(&r->rs, &cfg);
	/*
	 * The module charges the UMEM and the rings to the user's locked
	 * memory, summed over all of the user's processes: a second program
	 * of the same user may find less room. Halve until it fits.
	 */
	while (err == -ENOBUFS && umem.owner_fd < 0 &&
	       umem.nchunks / 2 >= 128) {
		umem.len /= 2;
		umem.nchunks /= 2;
		for (i = 0; i < umem.nchunks; i++)
			umem.pool[i] = (uint64_t)(umem.nchunks - 1 - i) * umem.chunk;
		umem.npool = umem.nchunks;
		if (take > umem.npool / 2)
			take = umem.npool / 2 >= 64 ? umem.npool / 2 : umem.npool;
		cfg.umem_len = umem.len;
		cfg.rx_size = vconf.rx_ring > take ? vconf.rx_ring : pow2_at_least(take);
		cfg.fill_size = pow2_at_least(take);
		vlog(VLOG_INFO, "UMEM cut to %llu bytes: the user's locked memory is near RLIMIT_MEMLOCK",
		     (unsigned long long)umem.len);
		err = vmak_ringset_open(&r->rs, &cfg);
	}
	if (err) {
		free(r);
		/* no module, or a family that is not ours: never again */
		if (err == -ENOENT || err == -EAFNOSUPPORT) {
			umem.failed = true;
			snprintf(vring_why, sizeof(vring_why),
				 "the vmak module is not loaded");
			err = -ENOBUFS;
		} else if (err == -ENOBUFS) {
			snprintf(vring_why, sizeof(vring_why),
				 "the module refused the UMEM: this user's locked memory would pass RLIMIT_MEMLOCK (ulimit -l)");
		}
		errno = -err;
		return NULL;
	}
	fd = vfd_hide(r->rs.fd);
	r->rs.fd = fd;
	vfd_set_internal(fd, true);
	if (umem.owner_fd < 0)
		umem.owner_fd = fd;
	if (!vmak_ring_reserve(r->rs.fill, take, &idx)) {
		vmak_ringset_close(&r->rs);
		free(r);
		errno = ENOBUFS;
		return NULL;
	}
	for (i = 0; i < take; i++)
		*vmak_ring_fill_addr(r->rs.fill, idx + i) = umem.pool[--umem.npool];
	vmak_ring_submit(r->rs.fill, take);
	r->chunks = take;
	/* TX frames: a few chunks of their own, if the pool has them */
	r->txchunks = umem.npool >= 2 * VRING_TX_CHUNKS ? VRING_TX_CHUNKS :
		      umem.npool / 2;
	r->txfree = malloc(sizeof(*r->txfree) * (r->txchunks ? r->txchunks : 1));
	if (!r->txfree)
		r->txchunks = 0;
	for (i = 0; i < r->txchunks; i++)
		r->txfree[r->ntxfree++] = umem.pool[--umem.npool];
	r->mtu = dev_mtu(ifindex);
	return r;
}

struct vring *vring_get(int ifindex, uint64_t key)
{
	struct vring *r;

	pthread_mutex_lock(&rings_lock);
	for (r = rings; r; r = r->next)
		if (r->ifindex == ifindex && r->key == key)
			break;
	if (!r) {
		r = ring_open(ifindex, key);
		if (r) {
			r->refs = 1;		/* the list's */
			r->next = rings;
			rings = r;
		}
	}
	if (r)
		r->refs++;
	pthread_mutex_unlock(&rings_lock);
	return r;
}

/*
 * Rings outlive their sockets: the next socket on the device reuses them,
 * and the first one holds the UMEM. They go when the process does.
 */
void vring_put(struct vring *r)
{
	pthread_mutex_lock(&rings_lock);
	r->refs--;
	pthread_mutex_unlock(&rings_lock);
}

/*
 * In the child of fork(): the rings and what they hold are the parent's.
 * Drop the child's copies of their fds and mappings; sockets the child
 * opens later get rings (and a UMEM) of its own.
 */
void vring_forget_all(void)
{
	struct vring *r, *n;

	for (r = rings; r; r = n) {
		n = r->next;
		vmak_ringset_close(&r->rs);
		free(r->tab);
		free(r->txfree);
		free(r);
	}
	rings = NULL;
	pthread_mutex_init(&rings_lock, NULL);
	free(umem.pool);
	if (umem.base)
		munmap(umem.base, umem.len);
	memset(&umem, 0, sizeof(umem));
	umem.owner_fd = -1;
}

/* ---- attachments ---- */

int vring_att_add(struct vring *r, struct vatt *a)
{
	int err;

	pthread_mutex_lock(&r->lock);
	err = tab_insert(r, a);
	pthread_mutex_unlock(&r->lock);
	return err;
}

void vring_att_del_locked(struct vring *r, struct vatt *a)
{
	struct vdgram *d;

	tab_remove(r, a);
	while ((d = vq_peek(a))) {
		vring_recycle_locked(r, d->addr);
		vq_pop(a);
		__atomic_sub_fetch(&a->vs->qtotal, 1, __ATOMIC_RELAXED);
	}
	free(a->q);
	a->q = NULL;
	a->qcap = 0;
}

bool vring_pending(struct vring *r)
{
	return __atomic_load_n(r->rs.rx->producer, __ATOMIC_ACQUIRE) !=
	       r->rs.rx->cached_cons;
}

uint32_t vring_drain_locked(struct vring *r)
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
				vring_recycle_locked(r, d->addr);
				continue;
			}
			if (!vq_push(a, &g)) {
				a->vs->st->rx_drops++;
				vring_recycle_locked(r, d->addr);
				continue;
			}
			__atomic_add_fetch(&a->vs->qtotal, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&a->vs->seq, 1, __ATOMIC_RELAXED);
			vsock_signal_locked(a->vs);
		}
		vmak_ring_release(rx, n);
		total += n;
	}
	return total;
}

uint32_t vring_drain_try(struct vring *r)
{
	uint32_t n;

	if (!vring_pending(r) || pthread_mutex_trylock(&r->lock))
		return 0;
	n = vring_drain_locked(r);
	pthread_mutex_unlock(&r->lock);
	return n;
}
