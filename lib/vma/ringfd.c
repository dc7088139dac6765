// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A ring set's fd as a kind (fd.h): what get_socket_rings_fds() and
 * get_socket_tx_ring_fd() hand out, libvma's "ring fd". The slot of the
 * fd is the library's own (it looks closed to close(), dup2() and the
 * rest), and carries the ring set, which the extra API finds
 * (vfd_get_api()): socketxtreme_poll() on it returns the ring's
 * datagrams for every socket on it, in arrival order where the sockets'
 * queues allow, then what their kernel sockets have. The ring calls of
 * libvma's API land here as ops of this kind.
 */
#include <errno.h>
#include <string.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "rings.h"
#include "demux.h"
#include "udp.h"
#include "api.h"
#include "vmak/ctl.h"

struct ring_poll {
	struct vma_completion_t *c;
};

static bool ring_one(struct vatt *a, const struct vdgram *d, void *ctx)
{
	struct ring_poll *rp = ctx;

	vudp_xt_fill((struct vudp *)a->cb->owner, a->ring, d, rp->c++, true);
	return true;
}

static bool ring_new(struct vatt *a, const struct vdgram *d, void *ctx)
{
	struct ring_poll *rp = ctx;

	vudp_xt_fill((struct vudp *)a->cb->owner, a->ring, d, rp->c++, false);
	return true;
}

#define RING_OWNERS	64	/* sockets of a ring whose kernel sockets are read */

/*
 * The turn of the kernel sockets of r's sockets: a wait saw one readable
 * (vwait_hint_os()), or once every VMA_RX_UDP_POLL_OS_RATIO polls of the
 * ring, as libvma looks at its OS fds. Plain loads and stores: a hint
 * set between them finds its datagram already in the kernel socket, which
 * this turn reads.
 */
static bool ring_os_turn(struct vringset *r)
{
	if (__atomic_load_n(&r->os_hint, __ATOMIC_RELAXED)) {
		__atomic_store_n(&r->os_hint, false, __ATOMIC_RELAXED);
		return true;
	}
	return vconf.os_poll_ratio && vos_turn(&r->os_skip);
}

/*
 * The ring's datagrams, then, on their turn, what the kernel sockets of
 * the ring's sockets have (vudp_xt_kernel()): every datagram of theirs
 * comes out of the ring's fd, as libvma's do. A poll that finds the ring
 * empty, nothing queued and no callback to run takes no lock: that is
 * most polls of a program that spins on its ring.
 */
static unsigned int ring_xt_poll(struct vfd *f, struct vma_completion_t *c,
				 unsigned int n, const struct vxt_env *env)
{
	struct vringset *r = vrs_of(f);
	const void *own[RING_OWNERS];
	struct ring_poll rp = { c };
	unsigned int got = 0, nown = 0, i;
	bool os;
	struct vudp *u;

	(void)env;
	os = ring_os_turn(r);

	if (!os && !vrs_pending(r) &&
	    !__atomic_load_n(&r->queued, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&r->pend_len, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&r->lock);
	/* what waits in the queues first, then what the ring brings */
	got = r->queued ? vdemux_each_front_locked(r, ring_one, &rp, n) : 0;
	got += vdemux_drain_to_locked(r, ring_new, &rp, n - got);
	if (os && got < n)
		nown = vdemux_owners_locked(r, own, RING_OWNERS);
	else if (os)	/* no room for them: the next poll's turn */
		__atomic_store_n(&r->os_hint, true, __ATOMIC_RELAXED);
	for (i = 0; i < nown; i++)	/* they outlive the lock */
		if (!vfd_tryref(&((struct vudp *)own[i])->hdr))
			own[i] = NULL;
	pthread_mutex_unlock(&r->lock);
	vdemux_callbacks(r);
	for (i = 0; i < nown; i++) {
		u = (struct vudp *)own[i];
		if (!u)
			continue;
		if (got < n)
			got += vudp_xt_kernel(u, c + got, n - got, true);
		vfd_put(&u->hdr);
	}
	return got;
}

/*
 * vma_modify_ring() on the ring, through the "vmak" netlink family (the
 * ring named by its id, as vmakctl ring set names it, so that vmakctl
 * ring show and monitor see the change): CQ_MODERATION sets the RX
 * ring's moderation (count, usec; EINVAL past the module's limits);
 * CQ_ARM arms its notification, or returns 1 while descriptors wait (a
 * wake would come at once: poll them first), as libvma's arm of a busy
 * completion queue. Any other mask: EINVAL.
 */
static int ring_modify(struct vfd *f, const struct vma_modify_ring_attr *a)
{
	struct vringset *r = vrs_of(f);
	struct vmak_ring_info info;
	socklen_t len = sizeof(info);
	int err;

	if (vmak_sys_getsockopt(r->rs.fd, SOL_VMAK, VMAK_RING_INFO, &info, &len))
		return -1;
	if (a->comp_bit_mask & VMA_MODIFY_RING_CQ_ARM) {
		if (vrs_pending(r))
			return 1;
		err = vmak_ctl_arm(info.id);
	} else if (a->comp_bit_mask & VMA_MODIFY_RING_CQ_MODERATION) {
		if (a->cq_moderation.cq_moderation_count > VMAK_MOD_COUNT_MAX ||
		    a->cq_moderation.cq_moderation_period_usec > VMAK_MOD_USEC_MAX)
			err = -EINVAL;
		else
			err = vmak_ctl_set_moderation(info.id,
					a->cq_moderation.cq_moderation_count,
					a->cq_moderation.cq_moderation_period_usec);
	} else {
		err = -EINVAL;
	}
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

/* Ring sets live as long as the process: no reference ever frees one. */
static void ring_destroy(struct vfd *f)
{
	(void)f;
}

const struct vfd_ops vringfd_ops = {
	.kind = "ring",
	.destroy = ring_destroy,
	.xt_poll = ring_xt_poll,
	.modify_ring = ring_modify,
};
