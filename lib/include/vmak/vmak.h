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
	uint32_t hooked_devices; /* devices of this netns with our hook */
	uint64_t pinned_pages;	/* pages pinned by all UMEMs (0: not told) */
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

/*
 * The rings as plain arrays, for code that drives them directly (what
 * libvma's get_ring_direct_descriptors() hands out; Documentation/tx.md
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
	struct vmak_direct_ring send;	/* TX: struct vmak_tx_desc */
	struct vmak_direct_ring send_cq;	/* COMPLETION: __u64 addresses */
	struct vmak_direct_ring recv;	/* FILL: __u64 addresses */
	struct vmak_direct_ring recv_cq;	/* RX: struct vmak_rx_desc */
	uint32_t ring_id;		/* VMAK_RING_INFO.id */
	uint32_t queue_id;		/* bound queue (VMAK_QUEUE_ANY: any) */
};

int vmak_ringset_direct(const struct vmak_ringset *rs, struct vmak_direct *d);

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

/*
 * Rings over the "vmak" generic netlink family (Documentation/netlink/
 * vmak.yaml). Calls return 0 or -errno; after a failure, vmak_last_error()
 * (per thread) gives the kernel's extack text with the name of the
 * attribute it points at, e.g. "integer out of range (attribute
 * moderation-usec): Numerical result out of range".
 */
const char *vmak_last_error(void);

#define VMAK_NL_RULE_KEYS	2	/* a dual-stack socket rule has two */
#define VMAK_NL_RING_RULES	16	/* rules carried in a ring message */
#define VMAK_NL_STATS		15	/* counters of struct vmak_statistics */

struct vmak_nl_key {
	uint32_t af;			/* AF_INET or AF_INET6 */
	uint8_t dst_addr[16];		/* all zero: any destination address */
	uint8_t src_addr[16];
	uint16_t dst_port;		/* host byte order */
	uint16_t src_port;		/* 0: any source */
};

struct vmak_nl_rule {
	uint32_t ring_id;
	uint32_t cookie;
	uint32_t kind;			/* VMAK_RULE_SOCKET or VMAK_RULE_RAW */
	uint32_t nkeys;
	struct vmak_nl_key key[VMAK_NL_RULE_KEYS];
};

struct vmak_ring_status {
	uint32_t id;
	uint32_t owner_pid;		/* 0: not visible from here */
	uint32_t owner_uid;
	uint32_t state;			/* VMAK_STATE_* */
	int bound;			/* ifindex, queue_id, bind_flags valid */
	uint32_t ifindex, queue_id, bind_flags;
	uint32_t rx_size, tx_size, fill_size, completion_size;
	uint64_t umem_size;
	uint32_t chunk_size;
	uint32_t napi_id;
	uint32_t moderation_count, moderation_usec;
	uint32_t rule_count;		/* rules attached */
	uint32_t nrules;		/* of them, listed in rules[] */
	struct vmak_nl_rule rules[VMAK_NL_RING_RULES];
	uint64_t stats[VMAK_NL_STATS];	/* as struct vmak_statistics */
};

/* Which rings a listing returns; zero fields do not filter. */
struct vmak_ring_filter {
	uint32_t owner_pid;
	uint32_t ifindex;
	int match_queue;
	uint32_t queue_id;
};

int vmak_ring_status_get(uint32_t id, struct vmak_ring_status *st);
/* Call fn for every ring of this netns (matching f, if given) until it
 * returns nonzero, which is then returned. */
int vmak_ring_list(const struct vmak_ring_filter *f,
		   int (*fn)(const struct vmak_ring_status *st, void *arg),
		   void *arg);
/* Rules of one ring (ring_id != 0) or of all rings, in order. */
int vmak_rule_list(uint32_t ring_id,
		   int (*fn)(const struct vmak_nl_rule *r, void *arg),
		   void *arg);
/* Set moderation; a negative value keeps the current one. */
int vmak_ring_set_moderation(uint32_t id, int64_t count, int64_t usec);
/* One-shot wake request (CQ_ARM). */
int vmak_ring_arm(uint32_t id);

/* Ring notifications: VMAK_CMD_RING_{CREATE,DELETE,CHANGE}_NTF. */
struct vmak_monitor;
int vmak_monitor_open(struct vmak_monitor **mon);
/* Wait up to timeout_ms (-1: forever) for one event; -EAGAIN on timeout. */
int vmak_monitor_next(struct vmak_monitor *mon, int timeout_ms, int *cmd,
		      struct vmak_ring_status *st);
int vmak_monitor_fd(const struct vmak_monitor *mon);
void vmak_monitor_close(struct vmak_monitor *mon);

#ifdef __cplusplus
}
#endif
#endif /* _VMAK_VMAK_H */
