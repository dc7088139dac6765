/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _VMAK_H
#define _VMAK_H

#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rhashtable-types.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/sock.h>

#include "../uapi/linux/vmak.h"
#include "../uapi/linux/vmak_genl.h"
#include "ring.h"

/*
 * Locking, outermost first:
 *   vs->mutex     one socket's setup, bind, rules (process context)
 *   rtnl          taken by bind and by the netdev notifier
 *   vmak_mutex    devices, their hooks and flow tables, socket state
 *   vs->tx_mutex  TX consumer and tx_* counters (process context)
 *   vs->rx_lock   RX producer and FILL consumer (softirq: the hook)
 * The hook runs under RCU and never sleeps; sockets carry SOCK_RCU_FREE
 * so rings stay valid for a grace period after they are unlinked.
 */
extern struct mutex vmak_mutex;
extern struct workqueue_struct *vmak_wq;

struct vmak_umem {
	refcount_t users;
	struct page **pgs;
	u32 npgs;
	u32 chunk_size;
	u32 headroom;
	u64 size;
	void *kaddr;			/* vmap() of pgs */
	struct user_struct *user;	/* RLIMIT_MEMLOCK charge, or NULL */
	struct work_struct release_work;
};

struct vmak_dev;

struct vmak_sock {
	struct sock sk;			/* must be first */
	u32 id;				/* in vmak_rings; netlink's ring id */
	struct pid *owner;		/* creating process */
	struct mutex mutex;
	int state;			/* VMAK_STATE_*; written under vmak_mutex */
	struct vmak_umem *umem;
	struct vmak_queue *rx, *tx, *fq, *cq;
	spinlock_t rx_lock;		/* see the lock order above */

	/* bound device: valid while state == VMAK_STATE_BOUND */
	struct vmak_dev *vdev;
	struct list_head dev_node;	/* in vdev->socks */
	u32 ifindex;
	u32 queue_id;
	u16 bind_flags;

	struct xarray rules;		/* cookie -> rule, under vmak_mutex */
	struct xarray tx_ports;		/* local port -> vmak_port (flow.h) */
	u32 nrules;
	u32 napi_id;

	struct vmak_statistics stats;	/* rx_* under rx_lock, tx_* tx_mutex */

	/* RX wake moderation, under rx_lock */
	u32 mod_count;
	u32 mod_usec;
	u32 unsignalled;		/* posted since the last wake */
	bool timer_armed;
	bool armed;			/* one-shot wake requested */
	bool batch;			/* until the next wake, the batch's */
	u32 batch_count;		/* ... count and usec replace the */
	u32 batch_usec;			/* ... moderation's (VMAK_RX_BATCH) */
	struct hrtimer mod_timer;	/* holds a socket reference when armed */

	/* TX (tx.c): the TX consumer, COMPLETION reservations, tx_* stats
	 * and the rate limiter, under tx_mutex
	 */
	struct mutex tx_mutex;
	bool tx_zc;			/* frames go out as UMEM page frags */
	bool tx_raw;			/* CAP_NET_RAW at bind: no header check */
	struct page_frag_cache tx_frags;	/* data of copied frames */
	struct vmak_rate_limit rl;
	u64 rl_bytes_per_sec;
	u64 rl_tokens;
	u64 rl_last_ns;
	struct hrtimer tx_timer;	/* holds a socket reference when armed */
	struct work_struct tx_work;	/* holds one while queued */
	/* COMPLETION publication, under cq_lock (any context) */
	spinlock_t cq_lock;
	u32 cq_done;			/* next index to publish */
	u8 *cq_map;			/* finished, not yet published slots */
};

/*
 * A ring of vs (&vs->rx, ...), or NULL before setsockopt() made it. Rings
 * are created under vs->mutex and never freed before the socket, but mmap,
 * poll, kicks and netlink read them without that mutex.
 */
static inline struct vmak_queue *vmak_sock_queue(struct vmak_queue **slot)
{
	/* pairs with smp_store_release() in __vmak_setsockopt() */
	return smp_load_acquire(slot);
}

/*
 * A capability of whoever opened the socket, in the user namespace of its
 * netns (as AF_PACKET and netlink judge): a process that hands its ring fd
 * to a more privileged one gains nothing by it.
 */
static inline bool vmak_sock_capable(struct vmak_sock *vs, int cap)
{
	struct socket *sock = vs->sk.sk_socket;

	return sock && sock->file &&
	       file_ns_capable(sock->file, sock_net(&vs->sk)->user_ns, cap);
}

/* Every bind flag this module knows; others are refused. */
#define VMAK_BIND_FLAGS_ALL	(VMAK_BIND_SHARED_UMEM | VMAK_BIND_SW_QUEUE | \
				 VMAK_BIND_PASS_ON_DROP | VMAK_BIND_TX_COPY | \
				 VMAK_BIND_TX_ZEROCOPY | VMAK_BIND_RX_TIMESTAMP)

/*
 * Frames up to this size are copied eight bytes at a time, not by memcpy().
 * A typical market-data or telemetry datagram is well under it.
 */
#define VMAK_COPY_SMALL		256

/*
 * Copy a frame between flat buffers (RX: linear skb data into a chunk; TX:
 * a chunk into a new skb). x86 memcpy() is a string move (rep movsb) on
 * CPUs with ERMS, whose start-up cost is larger than a short copy; without
 * FSRM that holds on hardware, and under emulation the move runs a byte
 * per step. Measured in the benchmark VM: +3% RX pps at 64 bytes
 * (Documentation/design-notes.rst).
 */
static inline void vmak_copy_frame(u8 *dst, const u8 *src, u32 len)
{
	if (len > VMAK_COPY_SMALL) {
		memcpy(dst, src, len);
		return;
	}
	for (; len >= 8; len -= 8, src += 8, dst += 8)
		put_unaligned(get_unaligned((const u64 *)src), (u64 *)dst);
	for (; len; len--)
		*dst++ = *src++;
}

static inline struct vmak_sock *vmak_sk(struct sock *sk)
{
	return container_of(sk, struct vmak_sock, sk);
}

/* A flow key; hashed as u32 words: size a multiple of 4, holes zeroed. */
struct vmak_key {
	u8 af;
	u8 proto;
	__be16 dport;
	__be16 sport;
	u16 pad;
	u8 daddr[16];
	u8 saddr[16];
};

/* A socket-derived rule may match in two families (dual-stack socket). */
#define VMAK_RULE_KEYS 2

/* What netlink reports of one rule. */
struct vmak_rule_info {
	u32 cookie;
	u8 kind;			/* VMAK_RULE_SOCKET or VMAK_RULE_RAW */
	u8 nkeys;
	struct vmak_key key[VMAK_RULE_KEYS];
};

/* main.c */
extern int vmak_family;
extern int vmak_hook_priority;
extern unsigned int vmak_max_rules;
extern unsigned int vmak_hook_linger_ms;
extern bool vmak_unprivileged;

/* sock.c */
int vmak_sock_init(void);
void vmak_sock_exit(void);
bool vmak_is_vmak_socket(const struct socket *sock);
void vmak_stats_snapshot(struct vmak_sock *vs, struct vmak_statistics *st);

/* umem.c */
extern atomic64_t vmak_pinned_pages;
int vmak_memlock_charge(struct user_struct **user, unsigned long npages);
void vmak_memlock_uncharge(struct user_struct *user, unsigned long npages);
struct vmak_umem *vmak_umem_create(const struct vmak_umem_reg *reg);
void vmak_umem_get(struct vmak_umem *umem);
void vmak_umem_put(struct vmak_umem *umem);

/* dev.c */
extern atomic_t vmak_addr_gen;
int vmak_dev_init(void);
void vmak_dev_exit(void);
int vmak_bind_dev(struct vmak_sock *vs, struct net_device *dev,
		  struct vmak_umem *shared);
void vmak_unbind(struct vmak_sock *vs);
struct net_device *vmak_sock_dev_rcu(struct vmak_sock *vs);
u32 vmak_hooked_devices(struct net *net);

/* flow.c */
int vmak_rule_add(struct vmak_sock *vs, const struct vmak_rule *req);
int vmak_rule_del(struct vmak_sock *vs, u32 cookie);
int vmak_rule_walk(struct vmak_sock *vs, unsigned long *cookie,
		   int (*fn)(const struct vmak_rule_info *ri, void *arg),
		   void *arg);
bool vmak_tx_flow_allowed(struct vmak_sock *vs, const struct vmak_key *f);

/* rx.c */
struct nf_hook_state;
unsigned int vmak_hook(void *priv, struct sk_buff *skb,
		       const struct nf_hook_state *state);
void vmak_rx_sock_init(struct vmak_sock *vs);
void vmak_rx_sock_release(struct vmak_sock *vs);
int vmak_rx_set_moderation(struct vmak_sock *vs, u32 count, u32 usec);
void vmak_rx_arm(struct vmak_sock *vs);
int vmak_rx_set_batch(struct vmak_sock *vs, u32 count, u32 usec);

/* tx.c */
void vmak_tx_sock_init(struct vmak_sock *vs);
void vmak_tx_sock_release(struct vmak_sock *vs);
void vmak_tx_sock_destruct(struct vmak_sock *vs);
int vmak_tx_bind(struct vmak_sock *vs, struct net_device *dev, u16 flags);
int vmak_tx_run(struct vmak_sock *vs);
int vmak_tx_set_rate(struct vmak_sock *vs, const struct vmak_rate_limit *rl);
void vmak_tx_get_rate(struct vmak_sock *vs, struct vmak_rate_limit *rl);
int vmak_net_header(struct vmak_sock *vs, struct vmak_net_header *h);

/* netlink.c */
int vmak_genl_init(void);
void vmak_genl_exit(void);
int vmak_ring_register(struct vmak_sock *vs);
void vmak_ring_unregister(struct vmak_sock *vs);
void vmak_nl_notify(struct vmak_sock *vs, u8 cmd);
void __vmak_nl_notify(struct vmak_sock *vs, u8 cmd);

#endif /* _VMAK_H */
