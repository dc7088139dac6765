// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * SO_MAX_PACING_RATE on an offloaded UDP socket, as libvma takes it: the
 * rate limit of the socket's rings (the module's token bucket,
 * VMAK_TX_RATE_LIMIT), and so only where the rings are the socket's own,
 * its ring logic per socket or per user id; else the call fails, with
 * one WARNING, as libvma's does. The value is libvma's: a struct
 * vma_rate_limit_t (kbit/s), or bytes per second in 4 bytes (or in 8, as
 * the kernel also takes); ~0, the kernel's "no limit", removes the limit.
 *
 * A paced socket's send waits for a free chunk of its ring when the
 * limiter holds them all, about one frame's time at the rate per look
 * (the module wakes nobody when it completes a frame), rather than
 * passing the limit through the kernel socket; a non-blocking one gets
 * EAGAIN, as the kernel's full send buffer gives it.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "sys.h"
#include "sig.h"
#include "udp.h"

/* libvma's conversion: bytes/s to kbit/s */
#define BYTES_TO_KBIT(b)	((b) / 125)

static bool own_rings(const struct vudp *u)
{
	int logic = vudp_logic(u);

	return logic == RING_LOGIC_PER_SOCKET || logic == RING_LOGIC_PER_USER_ID;
}

static int parse(const void *val, socklen_t len, struct vmak_rate_limit *rl)
{
	struct vma_rate_limit_t v;
	uint64_t b64;
	uint32_t b32;

	memset(rl, 0, sizeof(*rl));
	if (!val)
		return -EFAULT;
	if (len == sizeof(v)) {
		memcpy(&v, val, sizeof(v));
		rl->rate = v.rate;
		rl->max_burst_sz = v.max_burst_sz;
		rl->typical_pkt_sz = v.typical_pkt_sz;
	} else if (len == sizeof(b32)) {
		memcpy(&b32, val, sizeof(b32));
		rl->rate = b32 == ~0U ? 0 : BYTES_TO_KBIT(b32);
	} else if (len == sizeof(b64)) {
		memcpy(&b64, val, sizeof(b64));
		b64 = b64 == ~0ULL ? 0 : BYTES_TO_KBIT(b64);
		rl->rate = b64 > UINT32_MAX ? UINT32_MAX : (uint32_t)b64;
	} else {
		return -EINVAL;
	}
	return 0;
}

static int set_ring(struct vringset *r, const struct vmak_rate_limit *rl)
{
	return vmak_sys_setsockopt(vrs_fd(r), SOL_VMAK, VMAK_TX_RATE_LIMIT, rl,
				   sizeof(*rl)) ? -errno : 0;
}

int vudp_pacing_set(struct vudp *u, const void *val, socklen_t len)
{
	struct vmak_rate_limit rl;
	int i, err;

	err = parse(val, len, &rl);
	if (err)
		return err;
	pthread_rwlock_wrlock(&u->lock);
	if (!own_rings(u)) {
		pthread_rwlock_unlock(&u->lock);
		vlog_once(VLOG_WARNING, "SO_MAX_PACING_RATE paces the socket's rings, which it shares: it needs a ring of its own (VMA_RING_ALLOCATION_LOGIC_TX or _RX 10, per socket, or 11, per user id, or SO_VMA_RING_ALLOC_LOGIC), as with libvma (later such calls are not logged)");
		return -EOPNOTSUPP;
	}
	for (i = 0; i < u->natt && !err; i++)
		err = set_ring(u->att[i]->ring, &rl);
	if (!err) {
		u->tx.pacing = rl;
		u->tx.paced_set = true;
		/* the kernel's too, for what goes through the kernel socket
		 * (a socket that never gets a ring, say): its forms only
		 */
		if (len != sizeof(struct vma_rate_limit_t))
			vmak_sys_setsockopt(u->fd, SOL_SOCKET, SO_MAX_PACING_RATE,
					    val, len);
	}
	pthread_rwlock_unlock(&u->lock);
	return err;
}

int vudp_pacing_get(struct vudp *u, void *val, socklen_t *len)
{
	struct vma_rate_limit_t v;
	uint32_t b32;
	uint64_t b64;

	pthread_rwlock_rdlock(&u->lock);
	v.rate = u->tx.pacing.rate;
	v.max_burst_sz = u->tx.pacing.max_burst_sz;
	v.typical_pkt_sz = u->tx.pacing.typical_pkt_sz;
	pthread_rwlock_unlock(&u->lock);
	if (!val || !len)
		return -EFAULT;
	if (*len >= sizeof(v)) {
		memcpy(val, &v, (*len = sizeof(v)));
	} else if (*len >= sizeof(b64)) {
		b64 = v.rate ? (uint64_t)v.rate * 125 : ~0ULL;
		memcpy(val, &b64, (*len = sizeof(b64)));
	} else if (*len >= sizeof(b32)) {
		b64 = (uint64_t)v.rate * 125;
		b32 = !v.rate || b64 > UINT32_MAX ? ~0U : (uint32_t)b64;
		memcpy(val, &b32, (*len = sizeof(b32)));
	} else {
		return -EINVAL;
	}
	return 0;
}

int vudp_pacing_apply(struct vudp *u, struct vringset *r)
{
	/* rings of a logic that shares them (changed since): never paced */
	return u->tx.pacing.rate && own_rings(u) ? set_ring(r, &u->tx.pacing) : 0;
}

int vudp_paced_wait(struct vudp *u, int flags, size_t frame,
		    int64_t *deadline)
{
	uint32_t rate = __atomic_load_n(&u->tx.pacing.rate, __ATOMIC_RELAXED);
	uint64_t us = rate ? (uint64_t)frame * 8000 / rate : 100;
	struct timespec ts;
	struct timeval tv;
	socklen_t len = sizeof(tv);
	int old, rc;

	/* its last fd closed meanwhile: the number may be another's now */
	if (__atomic_load_n(&u->rx.fdless, __ATOMIC_RELAXED))
		return -EBADF;
	if ((flags & MSG_DONTWAIT) || vudp_nonblock(u))
		return -EAGAIN;
	/* SO_SNDTIMEO, read at the first wait of a send, as the kernel's */
	if (*deadline == -2) {
		*deadline = -1;
		if (!vmak_sys_getsockopt(u->fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
					 &len) && (tv.tv_sec || tv.tv_usec))
			*deadline = vnow_ns() + tv.tv_sec * 1000000000LL +
				    tv.tv_usec * 1000LL;
	}
	if (*deadline >= 0 && vnow_ns() >= *deadline)
		return -EAGAIN;
	if (us < 20)
		us = 20;
	if (us > 100000)
		us = 100000;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(us * 1000);
	/* no cancellation inside the library: the next point takes it */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	vsig_arm();
	rc = nanosleep(&ts, NULL);
	pthread_setcancelstate(old, NULL);
	/* a handler without SA_RESTART ends it, as the kernel's send */
	if (rc < 0 && errno == EINTR && !vsig_restartable())
		return -EINTR;
	return 0;
}
