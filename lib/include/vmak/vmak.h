/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libvmak: the native interface under the libvma-compatible API.
 * Every function returns 0 or a negative errno unless it says otherwise.
 */
#ifndef _VMAK_VMAK_H
#define _VMAK_VMAK_H

#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The address family the loaded module registered, read from sysfs and,
 * where sysfs is not mounted, from the netlink INFO reply. -ENOENT when
 * the module is not loaded.
 */
int vmak_family(void);

struct vmak_info {
	char version[64];	/* module version string */
	uint32_t family;	/* socket address family */
};

/* Ask the module over generic netlink. */
int vmak_info_get(struct vmak_info *info);

/*
 * A ring set: one vmak socket with its UMEM and mapped rings, bound to a
 * device queue. Sizes of 0 leave that ring out (a receive-only set needs
 * rx and fill; a send-only set tx and completion).
 */
struct vmak_ringset_config {
	unsigned int ifindex;
	uint32_t queue_id;		/* VMAK_QUEUE_ANY for all queues */
	uint16_t bind_flags;		/* VMAK_BIND_*; SHARED_UMEM is implied
					 * by shared_umem_fd >= 0 */
	uint32_t rx_size, tx_size, fill_size, comp_size;
	void *umem;			/* page aligned; NULL: the library maps
					 * umem_len bytes itself */
	uint64_t umem_len;
	uint32_t chunk_size;
	uint32_t headroom;
	int shared_umem_fd;		/* -1, or a ring set to share UMEM with */
};

struct vmak_uring;

struct vmak_ringset {
	int fd;
	struct vmak_uring *rx, *tx, *fill, *comp;
	void *umem;			/* the UMEM, in this process */
	uint64_t umem_len;
	uint32_t chunk_size;
	uint32_t headroom;
	int umem_owned;			/* mapped by the library */
	void *priv;
};

/* Sensible defaults: 2048-entry rings, 4096 chunks of 2048 bytes. */
void vmak_ringset_config_default(struct vmak_ringset_config *cfg);
int vmak_ringset_open(struct vmak_ringset *rs,
		      const struct vmak_ringset_config *cfg);
void vmak_ringset_close(struct vmak_ringset *rs);
/* Put up to n chunks [first, first + n) on the FILL ring; returns count. */
uint32_t vmak_ringset_fill(struct vmak_ringset *rs, uint32_t first, uint32_t n);

/* Steer the flow of a bound/connected UDP socket into the ring set. */
int vmak_rule_add_socket(int ring_fd, int udp_fd, uint32_t cookie);
/* Steer multicast (group, port of udp_fd) after udp_fd joined the group. */
int vmak_rule_add_group(int ring_fd, int udp_fd, const struct sockaddr *group,
			uint32_t cookie);
int vmak_rule_del(int ring_fd, uint32_t cookie);

struct vmak_statistics;
int vmak_statistics_get(int ring_fd, struct vmak_statistics *st);

/* A sentence for an errno from this library ("vmak module not loaded"...). */
const char *vmak_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* _VMAK_VMAK_H */
