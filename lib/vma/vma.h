/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The libvma-compatible layer: offloaded UDP sockets on vmak rings.
 *
 * Objects and who owns whom:
 *
 *   struct vsock   one kernel UDP socket the application opened through
 *                  us. The fd table (fdtab.c) maps each of its fds (dup()s
 *                  share it) to it, holding one reference per fd. It has
 *                  up to VSOCK_MAX_ATT attachments: one per ring whose
 *                  rule steers its flow.
 *   struct vatt    one attachment: the ring, the rule's cookie and the
 *                  socket's queue of datagrams the ring holds for it.
 *   struct vring   one vmak ring set (ring.c), shared by the sockets the
 *                  ring logic puts on it, with a table cookie -> vatt.
 *                  Its lock covers its RX and FILL rings and the queues
 *                  of every attachment on it.
 *   struct vepoll  an epoll fd with offloaded members (poll.c).
 *
 * Locks, outer to inner: vsock->lock (attach/detach), vring->lock. The fd
 * table has its own lock and is never held while taking another.
 */
#ifndef _VMAK_VMA_H
#define _VMAK_VMA_H

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include "internal.h"
#include "vmak/ringset.h"
#include "vmak/sockstats.h"

/* ---- log.c ---- */

enum vlog_level {
	VLOG_PANIC, VLOG_ERROR, VLOG_WARNING, VLOG_INFO, VLOG_DETAILS,
	VLOG_DEBUG, VLOG_FINE, VLOG_FINER,
};

extern int vlog_level VMAK_HIDDEN;
/* Log to VMA_LOG_FILE (once, from vconf_load); "%d" in it is the pid. */
void vlog_open(const char *path) VMAK_HIDDEN;
void vlog(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3))) VMAK_HIDDEN;
/* Once per process for each distinct reason (a static flag at the site). */
#define vlog_once(level, ...) do {					\
	static int __done;						\
	if (!__atomic_exchange_n(&__done, 1, __ATOMIC_RELAXED))		\
		vlog(level, __VA_ARGS__);				\
} while (0)

/* ---- config.c ---- */

enum vring_logic {		/* ring_logic_t's values */
	VRING_PER_INTERFACE = 0,
	VRING_PER_IP = 1,
	VRING_PER_SOCKET = 10,
	VRING_PER_USER_ID = 11,
	VRING_PER_THREAD = 20,
	VRING_PER_CORE = 30,
	VRING_PER_CORE_ATTACH = 31,
};

/*
 * libvma's SO_VMA_RING_ALLOC_LOGIC at SOL_SOCKET and its argument, struct
 * vma_ring_alloc_logic_attr (vma_extra.h): a socket's own ring logic.
 */
#define VSO_RING_ALLOC_LOGIC	2810
#define VRING_MASK_PROFILE_KEY	(1U << 0)
#define VRING_MASK_USER_ID	(1U << 1)
#define VRING_MASK_INGRESS	(1U << 2)
#define VRING_MASK_EGRESS	(1U << 3)

struct vring_alloc_attr {
	uint32_t comp_mask;
	int32_t logic;		/* ring_logic_t */
	uint32_t profile_key;
	uint32_t user_id;
	uint32_t ingress:1, egress:1, reserved:30;
};
/* A ring_logic_t value we implement. */
bool vring_logic_valid(int64_t v) VMAK_HIDDEN;

struct vconf {
	int trace_level;		/* VMA_TRACELEVEL */
	char log_file[256];		/* VMA_LOG_FILE */
	bool offload;			/* VMA_OFFLOADED_SOCKETS */
	int64_t rx_poll;		/* VMA_RX_POLL: spins before sleeping,
					 * -1 forever
					 */
	int64_t select_poll;		/* VMA_SELECT_POLL: usec, -1 forever */
	int ring_logic_rx;		/* VMA_RING_ALLOCATION_LOGIC_RX */
	int ring_logic_tx;		/* VMA_RING_ALLOCATION_LOGIC_TX */
	uint32_t rx_ring;		/* VMAK_RX_RING: RX descriptors */
	uint32_t rx_chunks;		/* VMA_RX_WRE: chunks per ring */
	uint32_t chunk_size;		/* VMAK_CHUNK_SIZE */
	uint64_t umem_size;		/* VMAK_UMEM_SIZE: bytes per process */
	uint32_t os_poll_ratio;		/* VMA_RX_UDP_POLL_OS_RATIO */
	bool rx_timestamp;		/* VMAK_RX_TIMESTAMP */
	char config_file[256];		/* VMA_CONFIG_FILE */
};

extern struct vconf vconf VMAK_HIDDEN;

/*
 * Parse one variable's value (exposed for the unit tests). Each returns
 * false, after one log line naming the variable and what it expects, when
 * the value is malformed; the default is then kept.
 */
bool vconf_int(const char *name, const char *val, int64_t min, int64_t max,
	       int64_t *out) VMAK_HIDDEN;
bool vconf_size(const char *name, const char *val, uint64_t min,
		uint64_t max, uint64_t *out) VMAK_HIDDEN;
bool vconf_bool(const char *name, const char *val, bool *out) VMAK_HIDDEN;
bool vconf_spec(const char *val, struct vconf *c) VMAK_HIDDEN;
/* Read the environment into vconf (defaults first). */
void vconf_load(void) VMAK_HIDDEN;

/* libvma.conf rules (conf.c): "use vma|os <role> <local>[:<peer>]". */
enum vrule_role {
	VROLE_UDP_RECEIVER, VROLE_UDP_SENDER, VROLE_UDP_CONNECT,
	VROLE_TCP_SERVER, VROLE_TCP_CLIENT,
};

struct vaddr_range {
	int af;			/* 0: any */
	uint8_t addr[16];
	int prefix;		/* bits */
	uint16_t port_lo, port_hi;	/* host order; 0-65535: any */
};

struct vrule {
	bool use_vma;
	enum vrule_role role;
	struct vaddr_range local, peer;
	bool has_peer;
};

struct vrules {
	struct vrule *v;
	int n, cap;
};

/*
 * Parse a libvma.conf text for program 'prog' (argv[0]'s basename) and
 * application id 'app_id' (VMA_APPLICATION_ID, or NULL): the rules of the
 * sections that apply, in order. Returns 0, or -1 after a log line naming
 * the file's line that is malformed (the rules before it are kept).
 */
int vrules_parse(struct vrules *rs, const char *text, const char *file,
		 const char *prog, const char *app_id) VMAK_HIDDEN;
int vrules_add_line(struct vrules *rs, const char *line) VMAK_HIDDEN;
void vrules_free(struct vrules *rs) VMAK_HIDDEN;
/*
 * The first rule matching role, local address and (for connect) peer
 * decides; no rule: offload (libvma's default is to offload).
 */
bool vrules_offload(const struct vrules *rs, enum vrule_role role,
		    const struct sockaddr *local, const struct sockaddr *peer)
	VMAK_HIDDEN;

extern struct vrules vrules VMAK_HIDDEN;

/* ---- ring.c ---- */

struct vatt;

struct vdgram {			/* a datagram a ring holds for a socket */
	uint64_t addr;		/* UMEM address of the frame */
	uint32_t len;		/* frame length */
	uint16_t l3_off, payload_off;
	uint16_t flags;		/* VMAK_RX_* */
	uint64_t ts;		/* ns, CLOCK_REALTIME, 0 if none */
};

struct vring {
	pthread_mutex_t lock;
	struct vmak_ringset rs;
	int ifindex;
	uint64_t key;		/* ring logic and its key (vring_key()) */
	int refs;		/* attachments + the ring table */
	uint32_t chunks;	/* chunks this ring owns */
	/* cookie -> attachment, open addressing */
	struct vatt **tab;
	uint32_t tab_size, tab_used;
	uint64_t drops;		/* descriptors for no attachment */
	/* sending (send.c), under txlock */
	pthread_mutex_t txlock;
	uint64_t *txfree;	/* chunks free for TX frames */
	uint32_t ntxfree, txchunks;
	uint32_t mtu;		/* the device's, at open */
	struct vring *next;
};

struct vatt {
	struct vring *ring;
	struct vsock *vs;
	uint32_t cookie;
	bool group;		/* a multicast group's rule */
	/*
	 * Its rule is gone (the socket moved to other rules or rings): it
	 * keeps what was steered into its queue until that is read, and
	 * steers and sends nothing more.
	 */
	bool retired;
	uint8_t group_addr[16];
	/* queue, under ring->lock */
	struct vdgram *q;
	uint32_t qhead, qlen, qcap;
};

/* Get (open on first use) the ring for device ifindex under the current
 * ring logic; one reference for the caller. NULL with errno set.
 */
struct vring *vring_get(int ifindex, uint64_t key) VMAK_HIDDEN;
void vring_put(struct vring *r) VMAK_HIDDEN;
/* Move what the RX ring holds into the attachments' queues. Call with
 * r->lock held. Returns the number of descriptors taken.
 */
uint32_t vring_drain_locked(struct vring *r) VMAK_HIDDEN;
/* Drain if the lock is free; returns descriptors taken. */
uint32_t vring_drain_try(struct vring *r) VMAK_HIDDEN;
/* Give a chunk back to the FILL ring (r->lock held). */
void vring_recycle_locked(struct vring *r, uint64_t addr) VMAK_HIDDEN;
int vring_att_add(struct vring *r, struct vatt *a) VMAK_HIDDEN;
/* Remove and recycle its queue (r->lock held). */
void vring_att_del_locked(struct vring *r, struct vatt *a) VMAK_HIDDEN;
bool vring_pending(struct vring *r) VMAK_HIDDEN;
/* After fork(), in the child: forget every ring (the parent keeps them). */
void vring_forget_all(void) VMAK_HIDDEN;
/* Why the last vring_get() failed, when errno alone does not say. */
extern char vring_why[160] VMAK_HIDDEN;

/* Chunks of the UMEM as addresses (send.c builds frames in them). */
void *vring_chunk(uint64_t addr) VMAK_HIDDEN;

/* The demultiplexer's queue (pure, unit-tested). */
bool vq_push(struct vatt *a, const struct vdgram *d) VMAK_HIDDEN;
struct vdgram *vq_peek(struct vatt *a) VMAK_HIDDEN;
void vq_pop(struct vatt *a) VMAK_HIDDEN;

/* ---- sock.c ---- */

#define VSOCK_MAX_ATT	8


struct vsock {
	pthread_rwlock_t lock;	/* write: attach/detach; read: the data
				 * path's use of att[]; never held while
				 * sleeping
				 */
	int fd;			/* the kernel socket: the first fd, or our
				 * own copy once that closed (own_fd)
				 */
	bool own_fd;		/* fd is ours, closed with the vsock */
	int logic;		/* SO_VMA_RING_ALLOC_LOGIC's, -1: vconf's */
	uint32_t user_id;	/* its user id (RING_LOGIC_PER_USER_ID) */
	int refs;		/* fds in the table + callers in flight */
	int nfds;		/* fds in the table */
	int family;		/* AF_INET, AF_INET6 */
	int efd;		/* eventfd: readable while a queue holds data */
	int efd_armed;		/* written, not yet read */
	int nvatt;
	struct vatt *att[VSOCK_MAX_ATT];
	/* the rings of att[], read without the lock (rings live as long as
	 * the process): an empty receive looks at them and goes
	 */
	int nwatch;
	struct vring *watch[VSOCK_MAX_ATT];
	/* groups joined, so that a join before bind() gets its rule at bind */
	int ngroups;
	struct vgroup {
		struct sockaddr_storage addr;
		int ifindex;
	} groups[VSOCK_MAX_ATT];
	uint32_t next_att;	/* round robin over attachments */
	bool tried;		/* offload attempted for the current binding */
	bool os_only;		/* never offload again (an option we lack) */
	bool pktinfo, pktinfo6, timestamp, timestampns;
	bool nonblock;		/* O_NONBLOCK, as set through us */
	bool os_hint;		/* poll/epoll saw the kernel socket readable */
	uint32_t os_skip;	/* empty turns not looking at it */
	bool peeked_os;		/* MSG_PEEK came from the kernel socket: the
				 * next receive and FIONREAD read it there
				 */
	uint32_t qtotal;	/* datagrams in all queues (ring locks) */
	uint32_t seq;		/* bumped per queued datagram (for ET) */
	int waiters;		/* threads that may sleep on efd */
	int nmembers;		/* epoll sets holding us */
	/* sending (send.c) */
	pthread_mutex_t txlock;
	struct vhdr *hc;	/* header cache, VHDR_CACHE entries */
	int helper;		/* UDP socket connected for sendto headers */
	struct sockaddr_in6 peer;	/* connected to (IPv4 mapped), port 0:
					 * not connected
					 */
	uint16_t ip_id;
	uint32_t gen;		/* bumped when the rules change: the header
				 * cache is stale
				 */
	struct vmak_sockstat_counters *st;	/* slot->c, or own_st */
	struct vmak_sockstat_counters own_st;
	struct vmak_sockstat *slot;	/* in the shared file, or NULL */
	struct vsock *spare_next;	/* freed, kept for reuse (sock.c) */
};

extern int vmak_active VMAK_HIDDEN;	/* any vsock ever created */

void vmak_init(void) VMAK_HIDDEN;
struct vsock *vsock_new(int fd, int family) VMAK_HIDDEN;
/* Try to offload after bind/connect/join or before the first receive. */
void vsock_offload(struct vsock *vs) VMAK_HIDDEN;
void vsock_detach_all(struct vsock *vs) VMAK_HIDDEN;
/* After att[] changed (vs->lock held for writing): watch[] follows and
 * vs->gen moves on.
 */
void vsock_watch_sync_locked(struct vsock *vs) VMAK_HIDDEN;
/* Join or leave a group: add/remove the group's rule. */
void vsock_group(struct vsock *vs, int join, const struct sockaddr *group,
		 int ifindex) VMAK_HIDDEN;
/*
 * sa (len bytes) as an IPv6 address, IPv4 mapped, with its port; false
 * (and *out zeroed) for anything but AF_INET/AF_INET6 long enough.
 */
bool vsa_mapped(const struct sockaddr *sa, socklen_t len,
		struct sockaddr_in6 *out) VMAK_HIDDEN;
/* setsockopt(SO_VMA_RING_ALLOC_LOGIC): 0, or -1 with errno. */
int vsock_ring_logic(struct vsock *vs, const void *val, socklen_t len)
	VMAK_HIDDEN;
/* A socket option the rings cannot honour: back to the kernel socket. */
void vsock_to_os(struct vsock *vs, const char *why) VMAK_HIDDEN;
void vsock_signal_locked(struct vsock *vs) VMAK_HIDDEN;
/* Drop a reference (vfd_sock()'s, or a table slot's). */
void vsock_release(struct vsock *vs) VMAK_HIDDEN;
/*
 * fd, one of vs's, is about to close (still open): if it is the one vs
 * uses while other fds or a caller in flight still need the socket, vs
 * moves to a private copy of it.
 */
void vsock_fd_closing(struct vsock *vs, int fd) VMAK_HIDDEN;
/* A table slot of vs was cleared (close, dup2 over it). */
void vsock_fd_closed(struct vsock *vs) VMAK_HIDDEN;
/* One DETAILS line with the socket's counters. */
void vsock_log_stats(int fd, struct vsock *vs) VMAK_HIDDEN;

/* ---- send.c ---- */

/*
 * Send on an offloaded socket through a TX ring. Returns the bytes sent,
 * or -1 with errno, or VSEND_OS: this one goes through the kernel socket
 * (options, destination, size or resources the ring path does not take).
 */
#define VSEND_OS	(-2)
ssize_t vsock_sendmsg(struct vsock *vs, const struct msghdr *msg, int flags)
	VMAK_HIDDEN;
void vsock_send_free(struct vsock *vs) VMAK_HIDDEN;
/* One's complement sum helpers (unit-tested). */
uint16_t vcsum_fold(uint32_t sum) VMAK_HIDDEN;
uint32_t vcsum_add(uint32_t sum, const void *p, size_t len) VMAK_HIDDEN;

/* ---- stats.c ---- */

struct vmak_sockstat *vstats_slot_get(int fd, int family) VMAK_HIDDEN;
void vstats_slot_put(struct vmak_sockstat *s) VMAK_HIDDEN;
void vstats_addresses(struct vsock *vs) VMAK_HIDDEN;
void vstats_forget(void) VMAK_HIDDEN;

/* ---- fdtab.c ---- */

enum vfd_kind { VFD_NONE, VFD_SOCK, VFD_EPOLL, VFD_INTERNAL };

/* A referenced vsock for fd, or NULL (not ours). vsock_release() after. */
struct vsock *vfd_sock(int fd) VMAK_HIDDEN;
struct vepoll *vfd_epoll(int fd) VMAK_HIDDEN;
enum vfd_kind vfd_kind(int fd) VMAK_HIDDEN;
void vfd_set_sock(int fd, struct vsock *vs) VMAK_HIDDEN;
void vfd_set_epoll(int fd, struct vepoll *ep) VMAK_HIDDEN;
void vfd_set_internal(int fd, bool on) VMAK_HIDDEN;
/* Remove fd from the table; returns what it held (the caller drops it). */
enum vfd_kind vfd_clear(int fd, void **obj) VMAK_HIDDEN;
/* fd is about to become a copy of oldfd (dup2/dup3/F_DUPFD). */
void vfd_dup(int oldfd, int newfd) VMAK_HIDDEN;
void vfd_forget_all(void) VMAK_HIDDEN;
void vfd_for_each_sock(void (*fn)(int fd, struct vsock *vs)) VMAK_HIDDEN;
/* Move an internal fd out of the application's usual range. */
int vfd_hide(int fd) VMAK_HIDDEN;

/* ---- recv.c ---- */

ssize_t vsock_recvmsg(struct vsock *vs, struct msghdr *msg, int flags)
	VMAK_HIDDEN;
int vsock_recvmmsg(struct vsock *vs, struct mmsghdr *v, unsigned int n,
		   int flags, struct timespec *timeout) VMAK_HIDDEN;
int vsock_fionread(struct vsock *vs, int *out) VMAK_HIDDEN;
/* Datagrams ready in the queues after draining the rings (no syscall). */
bool vsock_readable(struct vsock *vs) VMAK_HIDDEN;
void vsock_clear_efd(struct vsock *vs) VMAK_HIDDEN;

/* ---- sig.c ---- */

/*
 * The program's signal handlers run behind our trampolines, which note
 * here, per thread, that a handler ran and whether one without SA_RESTART
 * did: a receive asleep in poll() is restarted as the kernel would
 * restart it.
 */
struct vsig_seen {
	volatile sig_atomic_t ran, intr;
};
extern __thread struct vsig_seen vsig_seen
	__attribute__((tls_model("initial-exec"))) VMAK_HIDDEN;

static inline void vsig_arm(void)
{
	vsig_seen.ran = 0;
	vsig_seen.intr = 0;
}

/* After EINTR: did only handlers with SA_RESTART (known to us) run? */
static inline bool vsig_restartable(void)
{
	return vsig_seen.ran && !vsig_seen.intr;
}

int vsig_action(int sig, const struct sigaction *act, struct sigaction *oact)
	VMAK_HIDDEN;
typedef void (*vsig_handler)(int);
vsig_handler vsig_signal(int sig, vsig_handler fn) VMAK_HIDDEN;
vsig_handler vsig_sysv_signal(int sig, vsig_handler fn) VMAK_HIDDEN;
vsig_handler vsig_sigset(int sig, vsig_handler fn) VMAK_HIDDEN;
int vsig_siginterrupt(int sig, int flag) VMAK_HIDDEN;

/* ---- poll.c ---- */

int vpoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	  const sigset_t *mask) VMAK_HIDDEN;
int vselect(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timespec *ts,
	    const sigset_t *mask, bool update) VMAK_HIDDEN;
int vepoll_ctl(int epfd, int op, int fd, struct epoll_event *ev) VMAK_HIDDEN;
int vepoll_wait(struct vepoll *ep, struct epoll_event *ev, int max,
		int timeout_ms, const sigset_t *mask) VMAK_HIDDEN;
void vepoll_release(struct vepoll *ep) VMAK_HIDDEN;
/* A vsock is going away: take it out of every epoll set. */
void vepoll_sock_gone(struct vsock *vs) VMAK_HIDDEN;

/* time helpers */
static inline int64_t vnow_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif /* _VMAK_VMA_H */
