/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The process's ring sets and its one UMEM (rings.c). A ring set is
 * shared by the sockets its ring logic puts on it; its parts have owners:
 * rings.c opens, counts and closes it and feeds its FILL ring, demux.c
 * owns the cookie table and the attachments' queues, send.c the TX part.
 */
#ifndef _VMAK_VMA_RINGS_H
#define _VMAK_VMA_RINGS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "fd.h"
#include "vmak/ringset.h"

struct vatt;

struct vdgram {			/* a datagram a ring holds for a socket */
	uint64_t addr;		/* UMEM address of the frame */
	uint32_t len;		/* frame length */
	uint16_t l3_off, payload_off;
	uint16_t flags;		/* VMAK_RX_* */
	uint16_t plen;		/* UDP payload bytes */
	uint32_t seq;		/* its place in the ring's arrival order */
	uint64_t ts;		/* ns, CLOCK_REALTIME, 0 if none */
};

struct vringset {
	/* its fd as the program's ring fd: a kind (ringfd.c), never freed */
	struct vfd hdr;
	int xfd;		/* that fd: vrs_ring_fd() */
	/* RX, FILL and the queues of every attachment on it (demux.c) */
	pthread_mutex_t lock;
	struct vmak_ringset rs;
	int ifindex;
	uint64_t key;		/* ring logic and its key (offload.c) */
	int refs;		/* attachments + the list; rings_lock */
	uint32_t chunks;	/* chunks it owns for receiving */
	/* demux.c: cookie -> attachment, open addressing, under lock */
	struct vatt **tab;
	uint32_t tab_size, tab_used;
	uint32_t seq;		/* the next datagram's in arrival order */
	uint64_t drops;		/* descriptors for no attachment */
	/* drained for a socket with a receive callback, not yet run */
	struct vpend {
		uint32_t cookie;
		struct vdgram d;
	} *pend;
	uint32_t pend_head, pend_len, pend_cap;
	bool pend_running;
	/*
	 * demux.c: datagrams in its attachments' queues, written under lock,
	 * read without one by the polls that find nothing (xtreme.c).
	 */
	uint32_t queued;
	/*
	 * xtreme.c: its sockets' kernel sockets are due a look (a wait saw
	 * one readable: vwait_hint_os()), and the empty polls since the last
	 * look (counted down: vos_turn()); both read and written without a
	 * lock.
	 */
	bool os_hint;
	uint32_t os_skip;
	/*
	 * wait.c: a receive sleeps on its fd in a batch (the module wakes
	 * it after many descriptors, not each one), its fd went to the
	 * program (no batches from then on), the module refused a batch.
	 * demux.c: natt, the attachments on it. All atomic.
	 */
	bool batching, exported, batch_no;
	uint32_t natt;
	/* send.c: TX and COMPLETION, under txlock */
	pthread_mutex_t txlock;
	uint64_t *txfree;	/* chunks free for TX frames */
	uint32_t ntxfree, txchunks;
	bool unkicked;		/* frames submitted, the module not told */
	uint32_t mtu;		/* the device's, at open */
	uint32_t spec_dst;	/* the device's IPv4 address (IP_PKTINFO) */
	struct vringset *next;	/* rings_lock */
};

/*
 * The ring set of device ifindex for a ring logic key, opened on first
 * use; one reference for the caller. NULL with *err (-errno) and, when
 * errno alone does not say it, *why.
 */
struct vringset *vrs_get(int ifindex, uint64_t key, int *err, const char **why)
	VMAK_HIDDEN;
void vrs_put(struct vringset *r) VMAK_HIDDEN;
/*
 * The fd the program gets for r (get_socket_rings_fds()): an epoll set of
 * the library's holding r's own fd and the kernel sockets of r's sockets,
 * so that poll() on it wakes for a datagram that came either way; r's own
 * fd if the set could not be had.
 */
static inline int vrs_ring_fd(const struct vringset *r)
{
	return r->xfd;
}

/* A socket's kernel socket fd wakes r's ring fd (on), or no longer. */
void vrs_watch(struct vringset *r, int fd, bool on) VMAK_HIDDEN;

/* The ring set behind a ring fd's object (vfd_get_api()). */
static inline struct vringset *vrs_of(struct vfd *f)
{
	return (struct vringset *)f;
}

/* The kind of a ring set's fd (ringfd.c), set when the library loads. */
extern const struct vfd_ops *vrs_fd_ops VMAK_HIDDEN;
/* fn on every ring set of the process (no lock held: it may take any). */
void vrs_each(void (*fn)(struct vringset *r)) VMAK_HIDDEN;

static inline int vrs_fd(const struct vringset *r)
{
	return r->rs.fd;
}

/* Descriptors on the RX ring not yet taken, looked at without the lock. */
static inline bool vrs_pending(const struct vringset *r)
{
	return vmak_ring_cons_pending(r->rs.rx) != 0;
}

/*
 * The UMEM's base and chunk size, for the inlines below: set once it is
 * mapped (rings.c), before any ring set can hand out an address in it.
 */
extern char *vrs_umem_base VMAK_HIDDEN;
extern uint32_t vrs_umem_chunk VMAK_HIDDEN;

/* A chunk of the UMEM by address, and the chunks' size. */
static inline void *vrs_chunk(uint64_t addr)
{
	return vrs_umem_base + addr;
}

static inline uint32_t vrs_chunk_size(void)
{
	return vrs_umem_chunk;
}
/* Give a received chunk back to the FILL ring (r->lock held). */
void vrs_recycle_locked(struct vringset *r, uint64_t addr) VMAK_HIDDEN;
/*
 * Called once the UMEM is mapped, with its number of chunks, under
 * rings_lock and before a ring set can hand out a chunk: 0, or nonzero to
 * give the UMEM up (the ring set's open fails with -ENOMEM). init.c sets
 * it to vhold_init() when the library is loaded: hold.c, a floor up,
 * gives chunks back through vrs_recycle_locked(), so rings.c may not call
 * it by name (lib/LAYERS).
 */
extern int (*vrs_umem_hook)(uint32_t nchunks) VMAK_HIDDEN;

/*
 * fork(): the rings and the UMEM are the parent's. The child closes its
 * copies of the ring fds (the UMEM is not mapped there: MADV_DONTFORK);
 * sockets the child offloads get rings of their own.
 */
/*
 * The UMEM from the program's allocator (alloc, and release if it must
 * go back): -EINVAL once the library started (vrs_started()) or the UMEM
 * is made.
 */
int vrs_user_alloc(void *(*alloc)(size_t), void (*release)(void *))
	VMAK_HIDDEN;
/*
 * A UDP socket of the library's was made: from now on the allocator is
 * refused, and the UMEM is made at once if the program gave one.
 */
void vrs_started(void) VMAK_HIDDEN;
void vrs_atfork_prepare(void) VMAK_HIDDEN;
void vrs_atfork_parent(void) VMAK_HIDDEN;
void vrs_atfork_child(void) VMAK_HIDDEN;

#endif /* _VMAK_VMA_RINGS_H */
