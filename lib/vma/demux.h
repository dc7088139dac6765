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
#include "mellanox/vma_extra.h"
#include "rings.h"

struct vwait;

/*
 * A socket's receive callback (vma_api_t.register_recv_callback), shared
 * by its attachments; fn read without a lock (api.c sets it).
 */
struct vrxcb {
	vma_recv_callback_t fn;
	void *ctx;
	int fd;			/* what the callback is told */
	const void *owner;	/* the socket, for the chunks it holds */
	/*
	 * The socket's object: pinned while its callback runs, so that a
	 * HOLD is the socket's even if it leaves the ring or closes
	 * meanwhile (its end then gives the chunk back, hold.c).
	 */
	struct vfd *obj;
	uint32_t held;		/* chunks handed out for it, about (atomic) */
	uint64_t *consumed;	/* the socket's count of what it DROPs/HOLDs */
};

/*
 * One socket's rule on one ring set. Made and linked by offload.c; its
 * queue, under ring->lock, is demux.c's.
 */
struct vatt {
	struct vringset *ring;
	struct vwait *w;	/* the socket's wake state */
	struct vrxcb *cb;	/* the socket's receive callback */
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
	uint32_t npend;		/* its datagrams waiting for callbacks */
	uint64_t qbytes;	/* payload bytes queued */
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
/*
 * The same, but a datagram for an attachment with nothing queued and no
 * receive callback goes to fn first (while it returns true and max
 * allows: fn took it, never queued nor counted in the socket's wake
 * state). Returns how many fn took.
 */
unsigned int vdemux_drain_to_locked(struct vringset *r,
				    bool (*fn)(struct vatt *a,
					       const struct vdgram *d,
					       void *ctx),
				    void *ctx, unsigned int max) VMAK_HIDDEN;
/*
 * Drain if there is something and nobody else is at it; then run the
 * receive callbacks of what it found (vdemux_callbacks()).
 */
uint32_t vdemux_drain_try(struct vringset *r) VMAK_HIDDEN;
/*
 * Datagrams for sockets with a receive callback wait, drained but not
 * queued, until this runs the callbacks: one thread at a time per ring
 * set, in arrival order. Callbacks are program code: they run with no
 * lock of the library's held and outside its re-entrancy guard (sig.h),
 * so that whatever they call (close, epoll_ctl, setsockopt, a send,
 * another receive) goes through the library as the program's own calls
 * do. A thread between vdemux_defer_begin() and vdemux_defer_end() holds
 * a lock of the library's: its ring sets are remembered, and their
 * callbacks run at vdemux_defer_end().
 */
void vdemux_run_callbacks(struct vringset *r) VMAK_HIDDEN;

static inline void vdemux_callbacks(struct vringset *r)
{
	/* nothing pending: no call (a poll's usual case) */
	if (__atomic_load_n(&r->pend_len, __ATOMIC_RELAXED))
		vdemux_run_callbacks(r);
}

/*
 * Around code that holds a socket's or an epoll set's lock while it
 * drains rings: begin before the lock is taken (or while held), end once
 * every such lock is dropped. Nests. vdemux_defer_end() returns true if
 * callbacks ran: what they queued (VMA_PACKET_RECV) is worth a look
 * before the caller sleeps.
 */
void vdemux_defer_begin(void) VMAK_HIDDEN;
bool vdemux_defer_end(void) VMAK_HIDDEN;
/* In the child of fork(): the forking thread's remembered ring sets. */
void vdemux_atfork_child(void) VMAK_HIDDEN;
/*
 * fn on the front datagram of r's attachments in the order they came
 * (across the sockets, as the ring brought them), while it returns true
 * (it took the datagram: the caller pops it) and max allows (r->lock
 * held). Returns how many were taken.
 */
unsigned int vdemux_each_front_locked(struct vringset *r,
				      bool (*fn)(struct vatt *a,
						 const struct vdgram *d,
						 void *ctx),
				      void *ctx, unsigned int max) VMAK_HIDDEN;
/*
 * The sockets (their callbacks' owners) with a live rule on r, each once,
 * up to max (r->lock held). Returns how many.
 */
unsigned int vdemux_owners_locked(struct vringset *r, const void **out,
				  unsigned int max) VMAK_HIDDEN;
/* The UDP payload of a datagram a queue holds (its chunk, in the UMEM). */
static inline const uint8_t *vdgram_payload(const struct vdgram *d)
{
	return (const uint8_t *)vrs_chunk(d->addr) + d->payload_off;
}
/* The front datagram's chunk is done with: back to FILL, off the queue. */
void vdemux_consume_locked(struct vatt *a) VMAK_HIDDEN;

#endif /* _VMAK_VMA_DEMUX_H */
