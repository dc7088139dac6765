/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Ring sets: one vmak socket with its UMEM and mapped rings, bound to a
 * device queue, and the socket options that steer flows into it.
 * Every function returns 0 or a negative errno unless it says otherwise.
 *
 * Structs that callers fill or allocate start with 'sz', the size the
 * caller was compiled with (set by vmak_ringset_config_default(),
 * VMAK_DIRECT_INIT or `= { .sz = sizeof(x) }`). A newer library reads and
 * writes only what fits in sz and takes defaults for the rest; an older
 * library refuses, with -EINVAL, a struct that sets fields it does not
 * know. So fields are only ever appended, and old programs keep working.
 *
 * Each such struct names its last field (<type>__last_field): the library
 * knows a struct up to the end of that field, not up to sizeof, so a
 * field a later version appends in what is tail padding today is still
 * one this version sees as unknown. The structs are laid out without
 * tail padding (a unit test holds it).
 */
#ifndef _VMAK_RINGSET_H
#define _VMAK_RINGSET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "vmak/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What to open. Ring sizes of 0 leave that ring out (a receive-only set
 * needs rx and fill; a send-only set tx and completion).
 */
struct vmak_ringset_config {
	size_t sz;			/* sizeof(struct vmak_ringset_config) */
	unsigned int ifindex;
	uint32_t queue_id;		/* VMAK_QUEUE_ANY for all queues */
	uint16_t bind_flags;		/* VMAK_BIND_*; SHARED_UMEM is implied
					 * by shared_umem_fd >= 0
					 */
	uint32_t rx_size, tx_size, fill_size, comp_size;
	void *umem;			/* page aligned; NULL: the library maps
					 * umem_len bytes itself
					 */
	uint64_t umem_len;
	uint32_t chunk_size;
	uint32_t headroom;
	int shared_umem_fd;		/* -1, or a ring set to share UMEM with */
	uint32_t reserved;		/* 0 (no tail padding: see above) */
};
#define vmak_ringset_config__last_field reserved

/*
 * An open ring set. The caller allocates it; its fields never change
 * (anything a later version keeps per set lives behind priv).
 */
struct vmak_ringset {
	int fd;
	struct vmak_ring_cons *rx, *comp;
	struct vmak_ring_prod *tx, *fill;
	void *umem;			/* the UMEM, in this process */
	uint64_t umem_len;
	uint32_t chunk_size;
	uint32_t headroom;
	int umem_owned;			/* mapped by the library */
	void *priv;
};

/* Sets sz and the defaults: 2048-entry RX and FILL rings, 2048 chunks of
 * 2048 bytes, any queue.
 */
void vmak_ringset_config_default(struct vmak_ringset_config *cfg);
int vmak_ringset_open(struct vmak_ringset *rs,
		      const struct vmak_ringset_config *cfg);
void vmak_ringset_close(struct vmak_ringset *rs);
/* Put up to n chunks [first, first + n) on the FILL ring; returns count. */
uint32_t vmak_ringset_fill(struct vmak_ringset *rs, uint32_t first, uint32_t n);

/*
 * The rings as plain arrays, for code that drives them directly (what
 * libvma's get_ring_direct_descriptors() hands out; Documentation/tx.rst
 * maps it field by field). A ring the set lacks has desc == NULL.
 * 'producer' is the doorbell record of the rings user space fills (send:
 * then kick with sendto(); fill); 'consumer' that of the ones it drains.
 */
struct vmak_direct_ring {
	void *desc;			/* entry 0 */
	uint32_t count;			/* entries, a power of two */
	uint32_t stride;		/* bytes per entry */
	volatile uint32_t *producer;
	volatile uint32_t *consumer;
};

struct vmak_direct {
	size_t sz;			/* sizeof(struct vmak_direct) */
	struct vmak_direct_ring send;	/* TX: struct vmak_tx_desc */
	struct vmak_direct_ring send_cq;	/* COMPLETION: __u64 addresses */
	struct vmak_direct_ring recv;	/* FILL: __u64 addresses */
	struct vmak_direct_ring recv_cq;	/* RX: struct vmak_rx_desc */
	uint32_t ring_id;		/* VMAK_RING_INFO.id */
	uint32_t queue_id;		/* bound queue (VMAK_QUEUE_ANY: any) */
};
#define vmak_direct__last_field queue_id

#define VMAK_DIRECT_INIT { .sz = sizeof(struct vmak_direct) }

int vmak_ringset_direct(const struct vmak_ringset *rs, struct vmak_direct *d);

/*
 * The headers the module would put in front of a datagram from the
 * connected UDP socket udp_fd, sent through this ring set's device:
 * nh->fd is set here; -ENOTCONN, -EXDEV (another device), -EAGAIN
 * (the neighbour is being resolved).
 */
struct vmak_net_header;
int vmak_ringset_net_header(const struct vmak_ringset *rs, int udp_fd,
			    struct vmak_net_header *nh);
/*
 * Tell the module the TX ring has frames. Not a cancellation point, so
 * it may be called with a lock held. -EAGAIN: a full COMPLETION ring
 * stopped it (take completions, then kick again).
 */
int vmak_ringset_kick(const struct vmak_ringset *rs);
/*
 * Wake the ring set's sleepers at the next RX descriptor, once, whatever
 * its moderation (VMAK_RX_ARM; the need_wakeup of a ring a thread is
 * about to sleep on). 0 or -errno.
 */
int vmak_ringset_arm(const struct vmak_ringset *rs);
/*
 * For the next wake only: wake once count descriptors were posted, or
 * usec after the first of them (VMAK_RX_BATCH); {0, 0} ends a batch
 * without a wake. 0 or -errno (-EINVAL for values the module refuses).
 */
int vmak_ringset_batch(const struct vmak_ringset *rs, uint32_t count,
		       uint32_t usec);

/* Steer the flow of a bound/connected UDP socket into the ring set. */
int vmak_rule_add_socket(int ring_fd, int udp_fd, uint32_t cookie);
/* Steer multicast (group, port of udp_fd) after udp_fd joined the group. */
int vmak_rule_add_group(int ring_fd, int udp_fd, const struct sockaddr *group,
			uint32_t cookie);
int vmak_rule_del(int ring_fd, uint32_t cookie);

/*
 * The kernel's counters into st, sz bytes (sizeof(struct vmak_statistics)
 * as the caller knows it): struct vmak_statistics only grows at its end,
 * and counters an older module does not have read 0.
 */
struct vmak_statistics;
int vmak_statistics_get(int ring_fd, struct vmak_statistics *st, size_t sz);

#ifdef __cplusplus
}
#endif
#endif /* _VMAK_RINGSET_H */
