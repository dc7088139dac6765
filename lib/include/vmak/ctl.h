/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The control plane: module discovery and rings over the "vmak" generic
 * netlink family (Documentation/netlink/specs/vmak.yaml). Here "ring" means
 * a whole vmak socket, as netlink's ring id and libvma's ring fd do.
 *
 * Calls return 0 or -errno; after a failure, vmak_last_error() (per
 * thread) gives the kernel's extack text with the name of the attribute it
 * points at, e.g. "integer out of range (attribute moderation-usec):
 * Numerical result out of range".
 *
 * A struct vmak_ring_status is always allocated by the library (callers
 * only read it), so it grows at its end without breaking old programs;
 * its counters and rules are arrays of the library's, with their lengths.
 */
#ifndef _VMAK_CTL_H
#define _VMAK_CTL_H

#include <stddef.h>
#include <stdint.h>

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
	size_t sz;		/* sizeof(struct vmak_info), set by the caller */
	char version[64];	/* module version string */
	uint32_t family;	/* socket address family */
	uint32_t hooked_devices; /* devices of this netns with our hook */
	uint64_t pinned_pages;	/* pages pinned by all UMEMs (0: not told) */
};
#define vmak_info__last_field pinned_pages

/* Ask the module over generic netlink. */
int vmak_info_get(struct vmak_info *info);

/* A sentence for an errno from this library ("vmak module not loaded"...). */
const char *vmak_strerror(int err);
const char *vmak_last_error(void);

#define VMAK_CTL_RULE_KEYS	2	/* a dual-stack socket rule has two */

/* One key of a rule. Frozen: a new kind of key data gets a new struct. */
struct vmak_ctl_key {
	uint32_t af;			/* AF_INET or AF_INET6 */
	uint8_t dst_addr[16];		/* all zero: any destination address */
	uint8_t src_addr[16];
	uint16_t dst_port;		/* host byte order */
	uint16_t src_port;		/* 0: any source */
};

/* One rule. Frozen, like struct vmak_ctl_key. */
struct vmak_ctl_rule {
	uint32_t ring_id;
	uint32_t cookie;
	uint32_t kind;			/* VMAK_RULE_SOCKET or VMAK_RULE_RAW */
	uint32_t nkeys;
	struct vmak_ctl_key key[VMAK_CTL_RULE_KEYS];
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
	const struct vmak_ctl_rule *rules;
	/* Counters in the order of struct vmak_statistics; nstats of them
	 * (a newer module may report more than this library names).
	 */
	uint32_t nstats;
	const uint64_t *stats;
};

/* Which rings a listing returns; zero fields do not filter. */
struct vmak_ring_filter {
	size_t sz;			/* sizeof(struct vmak_ring_filter) */
	uint32_t owner_pid;
	uint32_t ifindex;
	int match_queue;
	uint32_t queue_id;
};
#define vmak_ring_filter__last_field queue_id

/* One ring; free *st with vmak_ctl_status_free(). */
int vmak_ctl_ring_get(uint32_t id, struct vmak_ring_status **st);
void vmak_ctl_status_free(struct vmak_ring_status *st);
/*
 * Call fn for every ring of this netns (matching f, if given) until it
 * returns nonzero, which is then returned. st lives until fn returns.
 */
int vmak_ctl_ring_list(const struct vmak_ring_filter *f,
		       int (*fn)(const struct vmak_ring_status *st, void *arg),
		       void *arg);
/* Rules of one ring (ring_id != 0) or of all rings, in order. */
int vmak_ctl_rule_list(uint32_t ring_id,
		       int (*fn)(const struct vmak_ctl_rule *r, void *arg),
		       void *arg);
/* Set moderation; a negative value keeps the current one. */
int vmak_ctl_set_moderation(uint32_t id, int64_t count, int64_t usec);
/* One-shot wake request (CQ_ARM). */
int vmak_ctl_arm(uint32_t id);

/* Ring notifications: VMAK_CMD_RING_{CREATE,DELETE,CHANGE}_NTF. */
struct vmak_monitor;
int vmak_ctl_monitor_open(struct vmak_monitor **mon);
/*
 * Wait up to timeout_ms (-1: forever) for one event; -EAGAIN on timeout.
 * Free *st with vmak_ctl_status_free().
 */
int vmak_ctl_monitor_next(struct vmak_monitor *mon, int timeout_ms, int *cmd,
			  struct vmak_ring_status **st);
int vmak_ctl_monitor_fd(const struct vmak_monitor *mon);
void vmak_ctl_monitor_close(struct vmak_monitor *mon);

#ifdef __cplusplus
}
#endif
#endif /* _VMAK_CTL_H */
