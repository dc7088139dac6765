/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The demultiplexer (demux.c): a ring set's RX descriptors carry the
 * cookie of the rule that steered them; each goes into the queue of the
 * attachment with that cookie, the socket's share of the ring.
 */
#ifndef _VMAK_VMA_DEMUX_H
#define _VMAK_VMA_DEMUX_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "rings.h"

struct vwait;

struct vdgram {			/* a datagram a ring holds for a socket */
	uint64_t addr;		/* UMEM address of the frame */
	uint32_t len;		/* frame length */
	uint16_t l3_off, payload_off;
	uint16_t flags;		/* VMAK_RX_* */
	uint64_t ts;		/* ns, CLOCK_REALTIME, 0 if none */
};

/*
 * One socket's rule on one ring set. Made and linked by udp.c; its
 * queue, under ring->lock, is demux.c's.
 */
struct vatt {
	struct vringset *ring;
	struct vwait *w;	/* the socket's wake state */
	uint64_t *drops;	/* the socket's counter of queue-full drops */
	uint32_t cookie;
	bool group;		/* a multicast group's rule */
	/*
	 * Its rule is gone (the socket moved to other rules or rings): it
	 * keeps what was steered into its queue until that is read, and
	 * steers and sends nothing more.
	 */
	bool retired;
	uint8_t group_addr[16];
	struct vdgram *q;
	uint32_t qhead, qlen, qcap;
};

/* The queue (pure, unit-tested). */
bool vatt_q_push(struct vatt *a, const struct vdgram *d) VMAK_HIDDEN;
struct vdgram *vatt_q_peek(struct vatt *a) VMAK_HIDDEN;
void vatt_q_pop(struct vatt *a) VMAK_HIDDEN;

/* Link a to its ring set's table: 0 or -ENOMEM. */
int vdemux_add(struct vatt *a) VMAK_HIDDEN;
/* Unlink a and give its queued chunks back (ring lock held). */
void vdemux_del_locked(struct vatt *a) VMAK_HIDDEN;
/* The queued datagrams of a, dropped without a FILL ring (fork child). */
void vdemux_forget(struct vatt *a) VMAK_HIDDEN;
/*
 * Move what the RX ring holds into the attachments' queues (lock held).
 * Returns the descriptors taken.
 */
uint32_t vdemux_drain_locked(struct vringset *r) VMAK_HIDDEN;
/* Drain if there is something and nobody else is at it. */
uint32_t vdemux_drain_try(struct vringset *r) VMAK_HIDDEN;
/* The front datagram's chunk is done with: back to FILL, off the queue. */
void vdemux_consume_locked(struct vatt *a) VMAK_HIDDEN;

#endif /* _VMAK_VMA_DEMUX_H */
