/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A receive's parts below the calls (recv.c): what the kernel writes for
 * a ring datagram (rxmsg.c), the kernel socket's turn (ossock.c), and the
 * answer poll's bookkeeping (reply.c).
 */
#ifndef _VMAK_VMA_RX_H
#define _VMAK_VMA_RX_H

#include <sys/socket.h>

#include "udp.h"

/* A ring datagram's msg_flags before its own: the kernel's echo. */
#define MSG_FLAGS_IN(flags) ((flags) & MSG_CMSG_CLOEXEC)

/* A zero-copy receive in progress (vma_api_t.recvfrom_zcopy()). */
struct vzc {
	void *buf;
	size_t len;
	int *flags;
};


/* ---- rxmsg.c ---- */

/*
 * The datagram's source as the kernel's move_addr_to_user() writes it
 * into msg (a name buffer of no length is told the name's length).
 */
void vrx_put_name(struct vudp *u, struct vatt *a, const struct frame *f,
		  struct msghdr *msg) VMAK_HIDDEN;
/* The payload and control messages of d, whose name is in msg already. */
size_t vrx_copy_rest(struct vudp *u, struct vatt *a, const struct vdgram *d,
		     const struct frame *f, struct msghdr *msg) VMAK_HIDDEN;
/*
 * Hand d's chunk to the application instead of copying it (z's layout,
 * its room checked before): the payload length, 0 when the piece did not
 * fit (MSG_TRUNC, as libvma). The chunk is held until free_packets().
 */
ssize_t vrx_zc_take(struct vudp *u, struct vringset *r, const struct vdgram *d,
		    const struct frame *f, const struct vzc *z) VMAK_HIDDEN;
/*
 * A zero-copy receive's result r (its packet in buf) as it returns: a
 * copy in buf instead, the flag cleared, if the socket's last fd closed
 * meanwhile (nobody could free the packet). in: the caller's flags.
 */
ssize_t vrx_zc_settle(struct vudp *u, void *buf, size_t len, int *flags,
		      int in, ssize_t r) VMAK_HIDDEN;
/* The key (reply.h) of the frame's source. */
uint64_t vrx_frame_from(const struct frame *f) VMAK_HIDDEN;

/* ---- ossock.c ---- */

/* Look at the kernel socket on this empty turn? */
bool vrx_os_turn(struct vudp *u, bool spinning) VMAK_HIDDEN;
/* The kernel socket's recvmsg(), its drop count kept beside ours. */
ssize_t vrx_os_recv(struct vudp *u, struct msghdr *msg, int flags) VMAK_HIDDEN;
/* A zero-copy receive that meets the kernel socket: a copy, or EIO. */
ssize_t vrx_zc_os(struct vudp *u, struct msghdr *msg, int flags,
		  const struct vzc *z) VMAK_HIDDEN;
/* The kernel socket's turn in a zero-copy receive of an offloaded one. */
ssize_t vrx_zc_os_turn(struct vudp *u, struct msghdr *msg, int flags,
		       const struct vzc *z) VMAK_HIDDEN;

/* ---- reply.c ---- */

/*
 * One receive's poll for an answer (reply.h): until is the poll's end, 0
 * before the receive's first empty turn asks whether to poll, -1 if it
 * does not or no longer polls; ran_out is when the poll ran out, if it did.
 * A datagram from the kernel socket is from its msg_name, when the caller
 * asked for one, else from someone else.
 */
struct rpoll {
	int64_t until, ran_out;
	uint64_t to, from;	/* keys: the last send's destination, the
				 * datagram's source
				 */
};

/* Poll this empty turn instead of sleeping? */
bool vrx_reply_turn(struct vudp *u, struct rpoll *rp, int64_t spins)
	VMAK_HIDDEN;
/* The key of a kernel datagram's source, if the caller asked for it. */
uint64_t vrx_name_key(const struct msghdr *msg) VMAK_HIDDEN;
/* The receive that polled returns (got: with a datagram): how it ended. */
void vrx_reply_end(struct vudp *u, const struct rpoll *rp, bool got)
	VMAK_HIDDEN;

#endif /* _VMAK_VMA_RX_H */
