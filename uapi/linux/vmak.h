/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * vmak socket ABI, shared by vmak.ko, libvmak, vmakctl and the tests.
 *
 * A vmak socket is a ring set bound to one device queue. The address
 * family number is not fixed: the module takes it as a load parameter and
 * publishes it in /sys/module/vmak/parameters/family and in the reply of
 * the "vmak" generic netlink family's INFO command. Never compile it in.
 *
 * Rules of this header: fixed-width types only, naturally aligned, explicit
 * padding that the kernel checks is zero. Structs grow only by appending;
 * the kernel dispatches on optlen.
 */
#ifndef _UAPI_LINUX_VMAK_H
#define _UAPI_LINUX_VMAK_H

#include <linux/types.h>

/* Where the module publishes the family number it registered. */
#define VMAK_FAMILY_SYSFS	"/sys/module/vmak/parameters/family"
/* The default family number: 22 has no mainline implementation. */
#define VMAK_FAMILY_DEFAULT	22

/* socket(family, VMAK_SOCK_TYPE, VMAK_PROTO) is the only accepted form. */
#define VMAK_SOCK_TYPE		3	/* SOCK_RAW */
#define VMAK_PROTO		0

/*
 * Shared memory
 * =============
 *
 * A socket owns up to four rings, each a single-producer/single-consumer
 * array of descriptors in memory the process maps, and uses a UMEM: a
 * region of the process's own memory, pinned by the kernel and cut into
 * equal chunks that hold packet data.
 *
 *   ring         producer (writes     consumer (writes   entries
 *                 'producer', descs)   'consumer')
 *   FILL         user                 kernel             __u64 UMEM address
 *   RX           kernel               user               struct vmak_rx_desc
 *   TX           user                 kernel             struct vmak_tx_desc
 *   COMPLETION   kernel               user               __u64 UMEM address
 *
 * Each ring, as mapped at its VMAK_PGOFF_* offset:
 *
 *   +0                  +off.producer  +off.consumer  +off.flags  +off.desc
 *   | ...               | __u32        | __u32        | __u32     | desc[0..n-1]
 *                         (own cache line each)
 *
 * Indexes are free-running __u32: entry i lives in desc[i & (n - 1)]; the
 * ring holds producer - consumer entries.
 *
 * Ring memory ordering
 * --------------------
 *
 *   producer                          consumer
 *   --------                          --------
 *   load_acquire(consumer)    (A)     load_acquire(producer)     (C)
 *   if there is room:                 if there are entries:
 *     write descriptors                 read descriptors
 *     store_release(producer) (B)       store_release(consumer)  (D)
 *
 * B pairs with C: a consumer that sees the new producer index sees the
 * descriptors written before it. D pairs with A: a producer that sees the
 * new consumer index knows the consumer is done reading the slots it
 * reuses. Each side may cache the other's index and reload it (A or C)
 * only when the cached value says the ring is full (producer) or empty
 * (consumer). The kernel's side (kmod/ring.h) and the library's
 * (lib/include/vmak/ring.h) tag every barrier with these letters. The
 * 'flags' word needs no ordering: it is a hint, written by the kernel and
 * re-checked after any action it prompts.
 *
 * A chunk handed to the kernel on the FILL ring belongs to the kernel
 * until it comes back in an RX descriptor; a chunk sent on TX belongs to
 * the kernel until it comes back on COMPLETION.
 */

/*
 * Errors
 * ======
 *
 * socket(): ESOCKTNOSUPPORT (type not SOCK_RAW), EPROTONOSUPPORT (protocol
 * not 0), EPERM (the module's "unprivileged" parameter is 0 and the caller
 * lacks CAP_NET_RAW in the netns's user namespace).
 *
 * setsockopt(): ENOPROTOOPT (level not SOL_VMAK or unknown name), EINVAL
 * (short optlen, a reserved field or unknown flag set, a value out of
 * range), E2BIG (a struct option longer than the struct, with non-zero
 * bytes past it), EFAULT (unreadable optval). VMAK_UMEM_REG: EBUSY once
 * the socket has a UMEM (a second registration) or is bound; ENOBUFS past
 * RLIMIT_MEMLOCK; EFAULT for memory that is not the caller's anonymous,
 * shmem (memfd, tmpfs) or hugetlb memory. Ring sizes: EBUSY if that ring
 * exists or the socket is bound; ENOBUFS past RLIMIT_MEMLOCK (rings count
 * with the UMEM); ENOMEM past the memory cgroup's limit. VMAK_RULE_ADD:
 * EINVAL before bind, ENETDOWN after the device left, EBADF or ENOTSOCK
 * for the fd, EINVAL for a socket that is not bound UDP, EPERM for one of
 * another netns, for raw rules without CAP_NET_RAW, and (unprivileged)
 * for SO_REUSEADDR sockets (their group rules excepted, see
 * VMAK_RULE_SOCKET), IP_FREEBIND/IP_TRANSPARENT sockets and sockets bound
 * to another device; EADDRNOTAVAIL for an address the host does not have
 * or a group not joined on the ring's device; EAFNOSUPPORT or
 * EPROTONOSUPPORT for a raw rule's af or proto; EEXIST for a cookie or key
 * the socket already has; ENOSPC past the module's max_rules (default
 * 2^20 per socket). VMAK_RULE_DEL: ENOENT for an unknown cookie, EINVAL
 * before bind, ENETDOWN after the device left.
 *
 * bind(): EINVAL (short address, wrong family, unknown flags, both TX
 * modes, no rings or half a pair, no UMEM, a UMEM of its own with
 * VMAK_BIND_SHARED_UMEM, a non-zero svmak_shared_umem_fd without that
 * flag, a queue the device lacks), EBUSY (bound already), ENODEV (no such
 * device in the socket's netns, or it is leaving), EBADF or ENOTSOCK
 * (VMAK_BIND_SHARED_UMEM with an fd that is no vmak socket with a UMEM),
 * EOPNOTSUPP (TX zero copy on a device without scatter-gather; an
 * unprivileged TX ring on a device that is not Ethernet).
 *
 * The kicks: recvmsg() returns ENXIO before bind and after the device
 * left (or the socket's error, ENETDOWN, once), ENOBUFS without an RX
 * ring, EOPNOTSUPP for flags other than MSG_DONTWAIT and MSG_WAITALL;
 * sendmsg() ENXIO before bind, ENETDOWN after the device left, ENOBUFS
 * without a TX ring, EAGAIN when a full COMPLETION ring stopped it,
 * EOPNOTSUPP for flags other than MSG_DONTWAIT and MSG_NOSIGNAL.
 * getsockopt(VMAK_NET_HEADER): ENXIO before bind, ENETDOWN after the
 * device left, EBADF or ENOTSOCK for the fd, EINVAL for a socket that is
 * not UDP, EXDEV for a socket of another netns or a route through another
 * device, ENOTCONN for a socket that is not connected, EAGAIN while the
 * neighbour is being resolved.
 *
 * After close() the UMEM's pinned pages, the rings' memory and the
 * module reference are released shortly after, from a workqueue: a caller
 * that checks (RLIMIT_MEMLOCK, rmmod) waits for them.
 */

/* Socket option level of vmak sockets. */
#define SOL_VMAK		0x564d4b	/* "VMK" */

/* setsockopt names at SOL_VMAK */
#define VMAK_UMEM_REG		1	/* struct vmak_umem_reg */
#define VMAK_RX_RING		2	/* __u32 entries, power of two */
#define VMAK_TX_RING		3	/* __u32 entries, power of two */
#define VMAK_FILL_RING		4	/* __u32 entries, power of two */
#define VMAK_COMPLETION_RING	5	/* __u32 entries, power of two */
#define VMAK_RULE_ADD		6	/* struct vmak_rule */
#define VMAK_RULE_DEL		7	/* __u32 cookie */
/* getsockopt names at SOL_VMAK */
#define VMAK_MMAP_OFFSETS	8	/* struct vmak_mmap_offsets */
#define VMAK_STATISTICS		9	/* struct vmak_statistics */
#define VMAK_RING_INFO		10	/* struct vmak_ring_info */
/* setsockopt and getsockopt */
#define VMAK_RX_MODERATION	11	/* struct vmak_moderation */
#define VMAK_TX_RATE_LIMIT	13	/* struct vmak_rate_limit */
/* setsockopt only */
#define VMAK_RX_ARM		12	/* __u32 1: one-shot wake, see below */
#define VMAK_RX_BATCH		15	/* struct vmak_moderation, see below */
/* getsockopt only, with input */
#define VMAK_NET_HEADER		14	/* struct vmak_net_header */

/* Limits the kernel enforces. */
#define VMAK_RING_MIN		8
#define VMAK_RING_MAX		(1U << 20)
#define VMAK_CHUNK_MIN		2048
#define VMAK_CHUNK_MAX		65536
/* Room the kernel keeps free at the end of a chunk after the headroom. */
#define VMAK_CHUNK_MIN_DATA	1024

/*
 * UMEM registration. addr must be page aligned and len a multiple of the
 * page size and of chunk_size; chunk_size a power of two in
 * VMAK_CHUNK_MIN..VMAK_CHUNK_MAX; headroom leaves at least
 * VMAK_CHUNK_MIN_DATA bytes of each chunk for data. The pages are pinned
 * and charged to RLIMIT_MEMLOCK (unless CAP_IPC_LOCK): ENOBUFS past it.
 */
struct vmak_umem_reg {
	__u64 addr;
	__u64 len;
	__u32 chunk_size;
	__u32 headroom;		/* bytes the kernel leaves before each frame */
	__u32 flags;		/* none defined: must be 0 */
	__u32 pad;		/* must be 0 */
};

/*
 * Where each ring is mapped: the 'offset' argument of mmap(), in bytes (as
 * AF_XDP's XDP_PGOFF_*, despite the name), always page aligned.
 */
#define VMAK_PGOFF_RX_RING			0
#define VMAK_PGOFF_TX_RING		0x80000000ULL
#define VMAK_PGOFF_FILL_RING		0x100000000ULL
#define VMAK_PGOFF_COMPLETION_RING	0x180000000ULL

struct vmak_ring_offset {
	__u64 producer;
	__u64 consumer;
	__u64 flags;
	__u64 desc;
};

struct vmak_mmap_offsets {
	struct vmak_ring_offset rx;
	struct vmak_ring_offset tx;
	struct vmak_ring_offset fr;	/* fill */
	struct vmak_ring_offset cr;	/* completion */
};

/*
 * Ring flags word, written by the kernel.
 *
 * VMAK_RING_NEED_WAKEUP, on the FILL ring: the kernel found the ring empty
 * and dropped (or passed on) a packet. Refill, then poll() or
 * recvmsg(MSG_DONTWAIT) once: that clears the flag and tells the kernel
 * chunks are back.
 */
#define VMAK_RING_NEED_WAKEUP	(1U << 0)

/*
 * bind(2) address. ifindex of a device in the socket's netns; queue_id a
 * receive queue of it or VMAK_QUEUE_ANY.
 */
struct sockaddr_vmak {
	__u16 svmak_family;
	__u16 svmak_flags;	/* VMAK_BIND_* */
	__u32 svmak_ifindex;
	__u32 svmak_queue_id;
	__u32 svmak_shared_umem_fd;	/* with VMAK_BIND_SHARED_UMEM */
};

#define VMAK_QUEUE_ANY		0xffffffffU

/*
 * VMAK_BIND_SHARED_UMEM: use the UMEM of the vmak socket whose fd is in
 * svmak_shared_umem_fd instead of registering one. Both sockets keep their
 * own rings; the chunks are the application's to divide.
 *
 * VMAK_BIND_SW_QUEUE: take every packet's queue from its flow hash
 * (hash mod the device's real_num_rx_queues) instead of the queue the
 * device recorded. For devices that record none, or a meaningless one
 * (veth leaves the peer's TX queue there). Without it, packets with no
 * recorded queue count as queue 0.
 *
 * VMAK_BIND_PASS_ON_DROP: a steered packet the ring cannot take (RX ring
 * full, FILL ring empty, frame larger than a chunk) goes on to the kernel
 * stack instead of being dropped; it is counted in rx_passed as well.
 *
 * VMAK_BIND_TX_ZEROCOPY: send TX frames larger than 256 bytes zero-copy:
 * the first 64 bytes (the headers) copied, the rest attached as the UMEM's
 * pages; a frame completes when the device, or whoever copied it on the
 * way (a local peer, a tap), is done with them. EOPNOTSUPP on devices
 * without NETIF_F_SG. VMAK_BIND_TX_COPY (the default) copies every frame;
 * on virtual devices, whose peers copy anyway, that is the faster mode.
 *
 * VMAK_BIND_RX_TIMESTAMP: stamp every RX descriptor with the software
 * reception time (ts_sw); without it ts_sw is 0. Asked for, as kernel
 * sockets ask with SO_TIMESTAMP: a clock read per packet is a measurable
 * part of the receive path.
 */
#define VMAK_BIND_SHARED_UMEM	(1U << 0)
#define VMAK_BIND_SW_QUEUE	(1U << 1)
#define VMAK_BIND_PASS_ON_DROP	(1U << 2)
#define VMAK_BIND_TX_COPY	(1U << 3)
#define VMAK_BIND_TX_ZEROCOPY	(1U << 4)
#define VMAK_BIND_RX_TIMESTAMP	(1U << 5)

/*
 * A steering rule. Packets of the flow that arrive on the bound device
 * (and queue) are copied into this socket's rings instead of reaching the
 * kernel stack; every RX descriptor carries the rule's cookie.
 *
 * VMAK_RULE_SOCKET: fd is a bound UDP socket (IPv4 or IPv6) of the
 * caller's netns. The key is its local address and port, plus its peer
 * when connected. With 'af' and 'dst_addr' naming a multicast group the
 * socket has joined on the ring's device, the key is (group, local port).
 * No privilege is needed: a process may only accelerate its own sockets
 * (Documentation/security.rst). The rule matches only while the socket
 * keeps the binding its key was read from: closing it, connect() or
 * disconnecting it, a new port, SO_BINDTODEVICE or leaving the group stop
 * it (counted in rx_rule_dead). A ring without an RX ring takes nothing:
 * its socket rules vouch for what an unprivileged ring may send.
 *
 * VMAK_RULE_RAW: the key is given: dst address and port (address all-zero
 * for any), and optionally src address and port. Needs CAP_NET_RAW in the
 * user namespace of the socket's netns.
 *
 * A group rule of a SO_REUSEADDR socket (feed handlers share a group and
 * port so) is allowed without privilege, and takes a packet only while
 * every socket the stack would give it to (same netns and port, bound to
 * the group or the wildcard) has a live rule on this device: then each of
 * their rings gets a copy. Otherwise the packet goes to the stack alone,
 * so no socket loses it and none gets it twice.
 *
 * Cookies are per socket: adding a second rule with the same cookie or the
 * same key fails with EEXIST, except that group rules of different
 * sockets may share a key on one ring set: each socket's rule gets its
 * own copy (two members of a group in one process, one ring).
 */
#define VMAK_RULE_SOCKET	1
#define VMAK_RULE_RAW		2

struct vmak_rule {
	__u32 kind;		/* VMAK_RULE_* */
	__s32 fd;		/* VMAK_RULE_SOCKET */
	__u32 cookie;
	__u32 flags;		/* none defined: must be 0 */
	/* VMAK_RULE_RAW key; group for VMAK_RULE_SOCKET */
	__u16 af;		/* AF_INET or AF_INET6 (for RAW, or group) */
	__u8 proto;		/* IPPROTO_UDP (RAW) */
	__u8 pad;		/* must be 0 */
	__be16 dst_port;
	__be16 src_port;	/* 0: any */
	__u8 dst_addr[16];	/* IPv4 in the first 4 bytes */
	__u8 src_addr[16];	/* all-zero: any */
};

/*
 * RX descriptor. The chunk holds the whole frame from its link-layer
 * header: addr is the UMEM address of its first byte, len its length;
 * l3_off and payload_off are offsets from addr of the IP header and of the
 * UDP payload. A datagram split out of a UDP GSO/GRO packet carries headers
 * the kernel rewrote (lengths, the IPv4 header checksum; the UDP checksum
 * set to 0, not recomputed) and VMAK_RX_SEGMENT. Other GSO packets (UFO,
 * tunnels) and trains of more than 64 segments are not cut: they count as
 * rx_too_big.
 *
 * VMAK_RX_CSUM_NONE: the UDP checksum in the chunk is not valid (a segment,
 * or a local sender's datagram whose checksum the device was to fill in);
 * the kernel checked nothing, and the reader should not check it either.
 */
struct vmak_rx_desc {
	__u64 addr;
	__u32 len;
	__u32 cookie;		/* of the rule that matched */
	__u16 l3_off;
	__u16 payload_off;
	__u16 queue;		/* receive queue (recorded or hashed) */
	__u16 flags;		/* VMAK_RX_* */
	__u32 hash;		/* flow hash, 0 if none */
	__u32 reserved;
	__u64 ts_sw;		/* CLOCK_REALTIME ns of reception (with
				 * VMAK_BIND_RX_TIMESTAMP), else 0
				 */
	__u64 ts_hw;		/* device timestamp ns, with VMAK_RX_TS_HW */
};

#define VMAK_RX_TS_HW		(1U << 0)
#define VMAK_RX_IPV6		(1U << 1)
#define VMAK_RX_SEGMENT		(1U << 2)
#define VMAK_RX_CSUM_NONE	(1U << 3)

/*
 * TX descriptor: a whole frame (from the link-layer header) at UMEM
 * address 'addr', 'len' bytes, inside one chunk; len <= device MTU + its
 * link-layer header. Every descriptor the kernel consumes comes back on the
 * COMPLETION ring exactly once, in TX ring order: a sent frame when the
 * device is done with its memory, a dummy or refused one at once (refusals
 * are counted in struct vmak_statistics).
 */
struct vmak_tx_desc {
	__u64 addr;
	__u32 len;
	__u32 options;		/* VMAK_TX_* */
};

/* Complete without touching the wire (libvma's VMA_SND_FLAGS_DUMMY). */
#define VMAK_TX_DUMMY		(1U << 0)

/*
 * Statistics of one socket. Counters only grow; fields are appended, and
 * the kernel fills as many as optlen holds (returning the length used).
 */
struct vmak_statistics {
	__u64 rx_packets;	/* descriptors posted on RX */
	__u64 rx_bytes;		/* bytes in them */
	__u64 rx_ring_full;	/* dropped/passed: RX ring full */
	__u64 rx_fill_empty;	/* dropped/passed: FILL ring empty */
	__u64 rx_invalid_fill;	/* FILL entries outside the UMEM, skipped */
	__u64 rx_too_big;	/* dropped/passed: frame larger than a chunk */
	__u64 rx_passed;	/* handed to the kernel stack instead */
	__u64 rx_rule_dead;	/* matched a rule whose socket is closed */
	__u64 tx_packets;	/* frames handed to the device */
	__u64 tx_bytes;		/* bytes in them */
	__u64 tx_invalid;	/* descriptors refused: address, length, options */
	__u64 tx_header_drop;	/* refused: headers not the ring's own flow */
	__u64 tx_cq_full;	/* sends stopped by a full COMPLETION ring */
	__u64 tx_dummy;		/* VMAK_TX_DUMMY descriptors completed */
	__u64 tx_error;		/* refused by the device or out of memory */
	__u64 rx_foreign;	/* matched, but not for this host (unprivileged
				 * rings; see Documentation/security.rst)
				 */
};

/*
 * Software interrupt moderation of the RX ring: sleepers in poll/epoll/
 * recvmsg are woken once 'count' descriptors were posted since the last
 * wake, or 'usec' microseconds after the first of them, whichever comes
 * first. 0 disables that trigger; both 0 (the default) wakes on every
 * packet. count <= VMAK_MOD_COUNT_MAX, usec <= VMAK_MOD_USEC_MAX. This is
 * what vma_modify_ring()'s CQ_MODERATION maps to.
 */
struct vmak_moderation {
	__u32 count;
	__u32 usec;
};

#define VMAK_MOD_COUNT_MAX	65535
#define VMAK_MOD_USEC_MAX	1000000

/*
 * VMAK_RX_ARM (value: __u32 1) asks for one wake whatever the moderation:
 * the next descriptor wakes the sleepers; descriptors already posted but
 * not yet signalled wake them at once too. What vma_modify_ring()'s
 * CQ_ARM maps to; the netlink ring-set "arm" attribute does the same.
 *
 * VMAK_RX_BATCH (value: struct vmak_moderation) sets a moderation for the
 * next wake only: the sleepers wake once 'count' descriptors were posted
 * after the call, or 'usec' after the first of them, and then the ring's
 * own moderation applies again. For a reader that drained the ring and
 * cannot return before it has 'count' more (a blocking recvmmsg() without
 * MSG_WAITFORONE). An arm, before or after, still wakes on the next
 * descriptor. Limits as VMAK_RX_MODERATION. Both 0 ends a batch without
 * a wake (its reader woke for another reason); either way, descriptors
 * posted and not yet signalled are forgotten: the caller looks at the ring.
 */

/*
 * TX rate limit of a ring, as libvma's vma_rate_limit_t: 'rate' in kbit/s
 * of whole frames, bursts up to 'max_burst_sz' bytes (0: two typical
 * packets, or 2 x MTU), 'typical_pkt_sz' a hint. rate 0 disables.
 */
struct vmak_rate_limit {
	__u32 rate;
	__u32 max_burst_sz;
	__u16 typical_pkt_sz;
	__u16 pad;
};

/*
 * The headers the kernel would put in front of a datagram of a connected
 * UDP socket: getsockopt(VMAK_NET_HEADER) with 'fd' set on input. On
 * return 'hdr' holds 'len' bytes: Ethernet, IPv4 (tot_len, id, check 0) or
 * IPv6 (payload_len 0), then UDP (len, check 0); l3_off and l4_off locate
 * them. The route must leave through the ring's device (else EXDEV). While
 * the neighbour is unresolved: EAGAIN, after resolution was started.
 */
struct vmak_net_header {
	__s32 fd;
	__u16 len;
	__u8 l3_off;
	__u8 l4_off;
	__u8 hdr[64];
};

/* Facts about a bound socket. */
struct vmak_ring_info {
	__u32 ifindex;
	__u32 queue_id;		/* as bound: VMAK_QUEUE_ANY stays that */
	__u32 napi_id;		/* last NAPI id seen on RX, 0 if none */
	__u32 state;		/* VMAK_STATE_* */
	__u32 rules;		/* rules attached */
	__u32 id;		/* ring id in the "vmak" netlink family */
	__u32 flags;		/* VMAK_INFO_* */
	__u32 pad;
};

#define VMAK_INFO_TX_ZEROCOPY	(1U << 0)	/* TX frames are UMEM page frags */
#define VMAK_INFO_TX_RAW	(1U << 1)	/* TX headers unchecked (CAP_NET_RAW) */

#define VMAK_STATE_READY	0
#define VMAK_STATE_BOUND	1
#define VMAK_STATE_UNBOUND	2

#endif /* _UAPI_LINUX_VMAK_H */
