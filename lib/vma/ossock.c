// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * An offloaded socket's kernel socket in a receive: when to look at it,
 * its read (its drop count kept beside ours for SO_RXQ_OVFL), and what a
 * zero-copy receive does with what is there (a copy, or EIO when forced).
 */
#include <errno.h>
#include <string.h>

#include "sys.h"
#include "rx.h"

/*
 * Look at the kernel socket on this empty turn? Polling (VMA_RX_POLL):
 * once every VMA_RX_UDP_POLL_OS_RATIO turns, as libvma does, unless a
 * wait just said it has data. Otherwise: only a non-blocking call, or
 * after a sleep said so (the sleep watches it).
 */
bool vrx_os_turn(struct vudp *u, bool spinning)
{
	if (vwait_os_hint_take(&u->w))
		return true;
	if (!spinning || !vconf.os_poll_ratio)
		return true;
	return vos_turn(&u->rx.os_skip);
}

/* The kernel socket's own drop count, as it reports it, kept for ours. */
static void note_os_drops(struct vudp *u, struct msghdr *msg)
{
	struct cmsghdr *c;
	uint32_t v, ours;

	if (!vudp_opt(u, rxq_ovfl) || !msg->msg_control)
		return;
	ours = (uint32_t)__atomic_load_n(&u->st->rx_drops, __ATOMIC_RELAXED);
	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL &&
		    c->cmsg_len >= CMSG_LEN(sizeof(v))) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			__atomic_store_n(&u->rx.os_drops, v, __ATOMIC_RELAXED);
			v += ours;
			memcpy(CMSG_DATA(c), &v, sizeof(v));
		}
}

ssize_t vrx_os_recv(struct vudp *u, struct msghdr *msg, int flags)
{
	ssize_t r = vmak_sys_recvmsg(u->fd, msg, flags);

	if (r >= 0) {
		/* a peeked datagram is the next one read, whatever
		 * reaches the ring meanwhile
		 */
		u->rx.peeked_os = flags & MSG_PEEK;
		if (!(flags & MSG_PEEK)) {
			u->st->rx_os++;
			u->rx.last_ring = false;
		}
		note_os_drops(u, msg);
	} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
		u->rx.peeked_os = false;
	}
	return r;
}

/*
 * A zero-copy receive that meets the kernel socket: a copy, the flag
 * cleared; with MSG_VMA_ZCOPY_FORCE nothing is read (EIO), as libvma.
 */
ssize_t vrx_zc_os(struct vudp *u, struct msghdr *msg, int flags,
		     const struct vzc *z)
{
	if (*z->flags & MSG_VMA_ZCOPY_FORCE) {
		errno = EIO;
		return -1;
	}
	*z->flags &= ~MSG_VMA_ZCOPY;
	return vrx_os_recv(u, msg, flags);
}

/*
 * The kernel socket's turn in a zero-copy receive of an offloaded socket:
 * a forced one fails (EIO) only for a datagram there, as libvma looks
 * before it fails; an empty kernel socket is as empty as the rings were
 * (EAGAIN), or reports its pending error.
 */
ssize_t vrx_zc_os_turn(struct vudp *u, struct msghdr *msg, int flags,
			  const struct vzc *z)
{
	if ((*z->flags & MSG_VMA_ZCOPY_FORCE) &&
	    vmak_sys_recv(u->fd, NULL, 0, MSG_PEEK | MSG_DONTWAIT) < 0)
		return -1;
	return vrx_zc_os(u, msg, flags | MSG_DONTWAIT, z);
}
