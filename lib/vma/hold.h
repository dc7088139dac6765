/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Chunks the application holds (hold.c): a datagram handed out without a
 * copy (recvfrom_zcopy(), a receive callback's VMA_PACKET_HOLD, a
 * socketXtreme completion) keeps its UMEM chunk out of the FILL ring until
 * the application gives it back. Each chunk of the UMEM has a struct vbuf
 * beside it; its first member is the struct vma_buff_t the application
 * sees, and its address is the packet id recvfrom_zcopy() hands out.
 */
#ifndef _VMAK_VMA_HOLD_H
#define _VMAK_VMA_HOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "mellanox/vma_extra.h"

struct vringset;

struct vbuf {
	struct vma_buff_t b;	/* first: the application's view */
	uint32_t refs;		/* 0: the library's (FILL, ring, queue) */
	uint32_t plen;		/* payload bytes */
	struct vringset *ring;	/* whose FILL ring it goes back to */
	/*
	 * The socket it was handed out for (zero copy, a callback's HOLD:
	 * free_packets() on that socket gives it back, and so does the
	 * socket's end); NULL for socketXtreme's, freed by pointer alone
	 * and so kept past their socket's close, as libvma keeps them.
	 */
	const void *owner;
	void *copy;		/* a copy's buffer (malloc), freed at the last */
};

/* The table for a UMEM of nchunks chunks (rings.c, once): 0 or -ENOMEM. */
int vhold_init(uint32_t nchunks) VMAK_HIDDEN;
/* In the child of fork(): the parent's chunks are not mapped here. */
void vhold_atfork_child(void) VMAK_HIDDEN;
/*
 * Hand the chunk at addr (payload at payload, plen bytes) to the
 * application for owner: one reference. The caller took it off the ring
 * or a queue.
 */
struct vbuf *vhold_take(struct vringset *r, uint64_t addr, void *payload,
			uint32_t plen, const void *owner) VMAK_HIDDEN;
/* The vbuf of the chunk at addr, without taking it (a packet id to be). */
struct vbuf *vhold_slot(uint64_t addr) VMAK_HIDDEN;
/* A pointer the application gave back, if it is one of ours; else NULL. */
struct vbuf *vhold_find(const void *p) VMAK_HIDDEN;
/* One more reference: the new count, or -EINVAL (not held). */
int vhold_ref(struct vbuf *v) VMAK_HIDDEN;
/*
 * One reference less: the new count; at 0 the chunk goes back to its
 * ring's FILL ring. -EINVAL if it is not held (given back twice).
 */
int vhold_put(struct vbuf *v) VMAK_HIDDEN;
/*
 * Copies: a datagram that came through the kernel socket (an IP fragment,
 * a local sender), handed out as a packet like the rings' (socketXtreme),
 * in a buffer of its own. Claim a slot first (NULL: all are held), then
 * fill it with a malloc()ed buffer, which the last free frees; or abandon
 * it if there was nothing to read.
 */
#define VHOLD_COPIES	256
struct vbuf *vhold_copy_claim(const void *owner) VMAK_HIDDEN;
void vhold_copy_fill(struct vbuf *v, void *buf, uint32_t len) VMAK_HIDDEN;
void vhold_copy_abandon(struct vbuf *v) VMAK_HIDDEN;
/*
 * Every chunk held for owner goes back: its socket is gone, and with it
 * the only way the application had to give them back.
 */
void vhold_release_owner(const void *owner) VMAK_HIDDEN;
/* Chunks the application holds now, all sockets together. */
uint32_t vhold_count(void) VMAK_HIDDEN;

#endif /* _VMAK_VMA_HOLD_H */
