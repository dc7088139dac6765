/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * An offloaded UDP socket: one kernel UDP socket the program opened
 * through us, plus the rules that steer its flows into shared rings.
 *
 * struct vudp is made of parts, each with one owner file; a part is
 * touched only through its owner's functions:
 *
 *   hdr       the fd object (fd.h)                          fdtab.c
 *   w         wake state, what is queued (wait.h)           wait.c
 *   att[]     attachments: rules on ring sets; groups        offload.c
 *   opt       what the socket's options mean for the rings   sockopt.c
 *   rx        receive bookkeeping                            recv.c
 *   tx        the header cache, the helper socket, corking   send.c
 *   st        counters (stats.h)                             stats.c
 *
 * vudp->lock: write to change att[] (attach, detach, a new ring logic);
 * read for the data path's use of att[]. Never held while sleeping.
 */
#ifndef _VMAK_VMA_UDP_H
#define _VMAK_VMA_UDP_H

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "wait.h"
#include "demux.h"
#include "reply.h"
#include "vmak/sockstats.h"

#define VUDP_MAX_ATT	8

/* sockopt.c's part: options recorded as the program sets them */
enum vudp_tstamp { VTS_NONE, VTS_USEC, VTS_NSEC };

struct vudp_opt {
	bool pktinfo, pktinfo6;
	uint8_t tstamp;		/* enum vudp_tstamp: the kernel keeps one */
	uint32_t tsflags;	/* SO_TIMESTAMPING's receive flags */
	bool rxq_ovfl;		/* SO_RXQ_OVFL */
	bool nonblock;		/* O_NONBLOCK, as set through us */
	int rcvtimeo_ms;	/* SO_RCVTIMEO, -1: none */
	/* sending: options the ring path cannot honour, or must copy */
	bool mc_loop;		/* IP(V6)_MULTICAST_LOOP, on by default */
	bool mc_if;		/* IP(V6)_MULTICAST_IF set */
	bool udp_cork;		/* UDP_CORK on */
	uint32_t tx_kernel_mask;	/* SO_MARK, SO_PRIORITY, IP_OPTIONS,
					 * UDP_SEGMENT...: those set, which
					 * the kernel sends with
					 */
};

/* An option as last set: setsockopt() may store it meanwhile. */
#define vudp_opt(u, field) __atomic_load_n(&(u)->opt.field, __ATOMIC_RELAXED)

/* recv.c's part */
struct vudp_rx {
	uint32_t next_att;	/* round robin over attachments */
	uint32_t os_skip;	/* turns left until the kernel's (vos_turn()) */
	bool peeked_os;		/* MSG_PEEK came from the kernel socket */
	bool last_ring;		/* the last datagram came through a ring */
	uint64_t last_ts;	/* ... and its timestamp (SIOCGSTAMP) */
	uint32_t os_drops;	/* the kernel socket's SO_RXQ_OVFL count */
	int pending_err;	/* recvmmsg's error after a partial batch */
	bool fdless;		/* its last fd closed (u->lock for writing) */
	uint64_t sent_to;	/* vreply_key() of the last send's
				 * destination, 0: none since the last
				 * receive
				 */
	struct vreply reply;	/* polling for the answer (reply.h) */
};

struct vhdr;

/* send.c's part */
struct vudp_tx {
	pthread_mutex_t txlock;
	struct vhdr *hc;	/* header cache */
	int helper;		/* UDP socket connected for sendto headers */
	bool corked;		/* MSG_MORE pending in the kernel socket */
	uint16_t ip_id;
	/* SO_MAX_PACING_RATE: its rings' limit (pacing.c; rate 0: none) */
	struct vmak_rate_limit pacing;
	bool paced_set;		/* set through us: getsockopt() answers it */
	/* IP options copied onto the helper socket */
	int nmirror;
	struct vudp_mirror {
		int level, name, val;
	} mirror[16];	/* sockopt.c's OPT_TX_MIRROR: 9 */
};

struct vudp {
	struct vfd hdr;
	pthread_rwlock_t lock;
	int fd;			/* the kernel socket: the first fd, or our
				 * own copy once that closed (own_fd)
				 */
	bool own_fd;
	int family;		/* AF_INET, AF_INET6 */
	struct vwait w;

	/* offload.c: attachments, under lock */
	int natt;
	struct vatt *att[VUDP_MAX_ATT];
	/* rings whose ring fd wakes for its kernel socket (vrs_watch()) */
	int nwatch;
	struct vringset *watch[VUDP_MAX_ATT];
	int ngroups;
	struct vgroup {
		struct sockaddr_storage addr;
		int ifindex;
	} groups[VUDP_MAX_ATT];
	int logic;		/* SO_VMA_RING_ALLOC_LOGIC's, -1: vconf's */
	uint32_t user_id;	/* for RING_LOGIC_PER_USER_ID */
	bool tried;		/* offload evaluated at least once */
	bool rule_os;		/* libvma.conf said "use os" for its address */
	bool unbound;		/* ... and it had no port then */
	bool os_only;		/* never offload again (an option we lack) */
	bool passthru;		/* final: no rings, nothing queued: the
				 * table lets the fd go to the C library
				 */
	struct sockaddr_in6 peer;	/* connected to (IPv4 mapped), port 0:
					 * not connected
					 */
	uint32_t gen;		/* bumped when the rules change */

	struct vudp_opt opt;
	struct vudp_rx rx;
	struct vudp_tx tx;
	/* api.c: the extra API's per-socket state */
	struct vrxcb rxcb;	/* receive callback (demux.c reads it) */
	uint64_t user_data;	/* SO_VMA_USER_DATA; the fd until set */
	bool user_data_set;	/* set: no longer follows the fd */
	uint32_t flow_tag;	/* SO_VMA_FLOW_TAG */
	bool shutdown_rx;	/* SO_VMA_SHUTDOWN_RX */

	struct vmak_sockstat_counters *st;	/* slot->c, or own_st */
	struct vmak_sockstat_counters own_st;
	struct vmak_sockstat *slot;
};

static inline struct vudp *vudp_of(struct vfd *f)
{
	return (struct vudp *)f;
}

/*
 * Do blocking receives poll for answers (reply.h)? Not when off, nor
 * when VMA_RX_POLL's turns or socketXtreme decide how a receive polls.
 */
static inline bool vudp_reply_on(void)
{
	return vconf.reply_poll_ns && !vconf.rx_poll && !vconf.socketxtreme;
}

/* An address and port (IPv4 mapped) as reply.h's key. */
static inline uint64_t vudp_key(const struct sockaddr_in6 *a)
{
	return vreply_key(a->sin6_addr.s6_addr, a->sin6_port);
}

/*
 * A send to dst (IPv4 mapped) went out: the next blocking receive may
 * wait for its answer.
 */
static inline void vudp_sent(struct vudp *u, const struct sockaddr_in6 *dst)
{
	if (vudp_reply_on())
		__atomic_store_n(&u->rx.sent_to, vudp_key(dst),
				 __ATOMIC_RELAXED);
}

/* A ring datagram's frame, its parts found (recv.c, udpextra.c). */
struct frame {
	const uint8_t *l3, *payload;
	uint32_t plen;		/* UDP payload length */
	bool v6;
};

/* The frame's parts (demux.c checked its offsets when it queued it). */
static inline void frame_parse(const struct vdgram *d, struct frame *f)
{
	const uint8_t *base = vrs_chunk(d->addr);

	f->l3 = base + d->l3_off;
	f->payload = base + d->payload_off;
	f->v6 = d->flags & VMAK_RX_IPV6;
	f->plen = d->plen;
}


/* ---- offload.c ---- */

extern const struct vfd_ops vudp_ops VMAK_HIDDEN;

/* A new object for the kernel UDP socket fd, in the table; or NULL. */
struct vudp *vudp_new(int fd, int family, bool nonblock) VMAK_HIDDEN;
/* Rules for what the socket is now (bound, connected, joined). */
void vudp_offload(struct vudp *u) VMAK_HIDDEN;
/* Join or leave a group: add or remove the group's rules. */
void vudp_group(struct vudp *u, bool join, const struct sockaddr *group,
		int ifindex) VMAK_HIDDEN;
/* setsockopt(SO_VMA_RING_ALLOC_LOGIC): 0 or -errno. */
int vudp_ring_logic(struct vudp *u, const void *val, socklen_t len)
	VMAK_HIDDEN;
/*
 * The fds of the ring sets u receives from (into fds, up to max; NULL:
 * count only); returns how many there are.
 */
int vudp_ring_fds(struct vudp *u, int *fds, int max) VMAK_HIDDEN;
/* Every rule gone, what they queued with them (the last fd closed). */
void vudp_detach_all(struct vudp *u) VMAK_HIDDEN;
/* An option the rings cannot honour: back to the kernel socket for good. */
void vudp_to_os(struct vudp *u, const char *why) VMAK_HIDDEN;
/*
 * After a call that may have made the socket final without rings: let
 * the fd go (the table forgets it; every later call is the C library's).
 */
void vudp_settle(struct vudp *u) VMAK_HIDDEN;
/* In the child of fork(): the rings are the parent's. */
void vudp_atfork_child(void) VMAK_HIDDEN;
/*
 * In the child of fork(): u's attachments are the parent's (its rules
 * steer into the parent's rings): forgotten without a word to the
 * kernel, and u a kernel socket until it offloads again.
 */
void vudp_att_atfork_child(struct vudp *u) VMAK_HIDDEN;
/* daemon(): the parent is gone; the child's sockets take rings. */
void vudp_after_daemon(void) VMAK_HIDDEN;
/* VMAK_FORK=kernel: every socket back to its kernel socket (at fork). */
void vudp_all_to_os(void) VMAK_HIDDEN;

/* ---- recv.c ---- */

ssize_t vudp_recvmsg(struct vfd *f, int fd, struct msghdr *msg, int flags)
	VMAK_HIDDEN;
int vudp_recvmmsg(struct vfd *f, int fd, struct mmsghdr *v, unsigned int n,
		  int flags, struct timespec *t) VMAK_HIDDEN;
int vudp_fionread(struct vudp *u, int *out) VMAK_HIDDEN;
/* At DETAILS: how the polls for answers went (reply.h), if any ran. */
void vudp_reply_log(struct vudp *u, int fd) VMAK_HIDDEN;
/*
 * vma_api_t.recvfrom_zcopy(): one datagram from a ring as a struct
 * vma_packets_t in buf (MSG_VMA_ZCOPY set in *flags), or a copy from the
 * kernel socket (the flag cleared; EIO with MSG_VMA_ZCOPY_FORCE).
 */
int vudp_recv_zcopy(struct vudp *u, void *buf, size_t len, int *flags,
		    struct sockaddr *from, socklen_t *fromlen) VMAK_HIDDEN;
/*
 * Could the rings have something for u? Without a lock: a queued
 * datagram, or a ring with descriptors not yet taken.
 */
bool vudp_ring_maybe(struct vudp *u) VMAK_HIDDEN;
/* The last ring datagram's time for SIOCGSTAMP(NS); -ENOENT if none. */
int vudp_last_stamp(struct vudp *u, uint64_t *ns) VMAK_HIDDEN;

/* ---- udpextra.c ---- */

/*
 * socketXtreme: datagram d of u's on r handed over as completion c, its
 * chunk held (r->lock held): the front of one of u's queues (queued; the
 * caller pops it), or one straight from r's RX ring, never counted as
 * queued (vdemux_drain_to_locked()).
 */
void vudp_xt_fill(struct vudp *u, struct vringset *r, const struct vdgram *d,
		  struct vma_completion_t *c, bool queued) VMAK_HIDDEN;
/*
 * socketXtreme: up to max datagrams of u's kernel socket (what its rings
 * cannot take: IP fragments, local senders), as packets in copies
 * (hold.c), on u's turn: every VMA_RX_UDP_POLL_OS_RATIO-th call, or now
 * (ready: a wait said the kernel socket is readable; a socket without
 * rings). One system call per turn when there is nothing.
 */
unsigned int vudp_xt_kernel(struct vudp *u, struct vma_completion_t *c,
			    unsigned int max, bool ready) VMAK_HIDDEN;
/*
 * The UDP socket's ops for libvma's extra API (vudp_ops, fd.h): receive
 * callback, zero copy, its rings, statistics, socketXtreme.
 */
int vudp_x_recv_callback(struct vfd *f, int fd, vma_recv_callback_t cb,
			 void *ctx) VMAK_HIDDEN;
int vudp_x_recv_zcopy(struct vfd *f, int fd, void *buf, size_t len,
		      int *flags, struct sockaddr *from, socklen_t *fromlen)
	VMAK_HIDDEN;
int vudp_x_free_packets(struct vfd *f, struct vma_packet_t *pkts,
			size_t count) VMAK_HIDDEN;
int vudp_x_ring_fds(struct vfd *f, int *fds, int max) VMAK_HIDDEN;
int vudp_x_tx_ring_fd(struct vfd *f, const struct sockaddr *to, socklen_t len)
	VMAK_HIDDEN;
void vudp_x_dump_stats(struct vfd *f, int fd, int level) VMAK_HIDDEN;
int vudp_x_net_header(struct vfd *f, void *buf, uint16_t *len) VMAK_HIDDEN;
uint64_t vudp_x_user_data(struct vfd *f, int fd) VMAK_HIDDEN;
unsigned int vudp_x_xt_poll(struct vfd *f, struct vma_completion_t *c,
			    unsigned int max, const struct vxt_env *env)
	VMAK_HIDDEN;
unsigned int vudp_x_xt_kernel(struct vfd *f, struct vma_completion_t *c,
			      unsigned int max) VMAK_HIDDEN;

/* ---- pacing.c ---- */

/* SO_MAX_PACING_RATE set (libvma's forms): 0 or -errno. */
int vudp_pacing_set(struct vudp *u, const void *val, socklen_t len)
	VMAK_HIDDEN;
/* ... got, once set through vudp_pacing_set(): 0 or -errno. */
int vudp_pacing_get(struct vudp *u, void *val, socklen_t *len) VMAK_HIDDEN;
/* A new ring of u's takes its limit (u->lock held). */
int vudp_pacing_apply(struct vudp *u, struct vringset *r) VMAK_HIDDEN;
/*
 * A paced send found no free chunk: wait about a frame's time; -EAGAIN
 * (non-blocking, or SO_SNDTIMEO passed: *deadline, -2 before the first
 * wait of the send), -EINTR (a handler without SA_RESTART), -EBADF (its
 * last fd closed meanwhile).
 */
int vudp_paced_wait(struct vudp *u, int flags, size_t frame,
		    int64_t *deadline) VMAK_HIDDEN;

/* ---- send.c ---- */

/*
 * One datagram through a TX ring: its length, or -errno, or VSEND_OS:
 * this one goes through the kernel socket (options, destination, size or
 * resources the ring path does not take). kick: tell the module now;
 * else the caller calls vudp_tx_kick() after a batch.
 */
#define VSEND_OS	(-1000)
ssize_t vudp_ring_send(struct vudp *u, const struct msghdr *msg, int flags,
		       bool kick) VMAK_HIDDEN;
int vudp_tx_kick(struct vudp *u) VMAK_HIDDEN;
/* The fd of the ring set a send to `to` leaves by, or -errno (ENODATA). */
int vudp_tx_ring_fd(struct vudp *u, const struct sockaddr *to, socklen_t len)
	VMAK_HIDDEN;
/*
 * The headers a send to the connected peer starts with (Ethernet, IP,
 * UDP; lengths, IP id and checksums 0): copied into buf if *len has room
 * (*len set to theirs), or only their size with buf NULL; -ENOTCONN
 * without a connected destination the rings send to, -ENOBUFS.
 */
int vudp_net_header(struct vudp *u, void *buf, uint16_t *len) VMAK_HIDDEN;
void vudp_tx_init(struct vudp *u) VMAK_HIDDEN;
void vudp_tx_destroy(struct vudp *u) VMAK_HIDDEN;
/* In the child of fork(): the send part starts over. */
void vudp_tx_atfork_child(struct vudp *u) VMAK_HIDDEN;
/* A sending option changed (send.c copies it to the helper socket). */
void vudp_tx_option(struct vudp *u, int level, int name, int val)
	VMAK_HIDDEN;
/* One's complement sum helpers (unit-tested). */
uint16_t vcsum_fold(uint32_t sum) VMAK_HIDDEN;
uint32_t vcsum_add(uint32_t sum, const void *p, size_t len) VMAK_HIDDEN;

/* ---- sockopt.c ---- */

void vudp_opt_init(struct vudp *u, bool nonblock) VMAK_HIDDEN;
int vudp_setsockopt(struct vfd *f, int fd, int level, int name,
		    const void *val, socklen_t len) VMAK_HIDDEN;
int vudp_getsockopt(struct vfd *f, int fd, int level, int name, void *val,
		    socklen_t *len) VMAK_HIDDEN;
int vudp_fcntl(struct vfd *f, int fd, int cmd, long arg) VMAK_HIDDEN;
int vudp_ioctl(struct vfd *f, int fd, unsigned long req, long arg)
	VMAK_HIDDEN;
/*
 * The socket's O_NONBLOCK, checked with the kernel when it may be stale.
 * Inline: recv.c reads it, and sockopt.c, which keeps it, sits a floor
 * above recv.c (its FIONREAD and SIOCGSTAMP ask recv.c; lib/LAYERS).
 */
/*
 * The ring logic of u's rings. One ring set carries both directions:
 * SO_VMA_RING_ALLOC_LOGIC's, else VMA_RING_ALLOCATION_LOGIC_RX's, else
 * (RX left per interface) _TX's, as a program that asks for TX rings of
 * their own (sockperf --rate-limit) sets only that one.
 */
static inline int vudp_logic(const struct vudp *u)
{
	if (u->logic >= 0)
		return u->logic;
	return vconf.ring_logic_rx == RING_LOGIC_PER_INTERFACE ?
	       vconf.ring_logic_tx : vconf.ring_logic_rx;
}

static inline bool vudp_nonblock(struct vudp *u)
{
	int fl;

	/*
	 * O_NONBLOCK belongs to the open file description, which another
	 * process (a fork child) may share and change: ask the kernel then.
	 */
	if (__atomic_load_n(&vfd_shared, __ATOMIC_RELAXED)) {
		fl = vmak_sys_fcntl(u->fd, F_GETFL, 0);
		if (fl >= 0)
			__atomic_store_n(&u->opt.nonblock, !!(fl & O_NONBLOCK),
					 __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&u->opt.nonblock, __ATOMIC_RELAXED);
}

#endif /* _VMAK_VMA_UDP_H */
