/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The libvma-compatible layer: what every file of lib/vma/ shares (the
 * process, its configuration, the log, time) and its two conventions.
 *
 * Its files and their floors, from the ground up, are lib/LAYERS: a file
 * calls only files on floors below its own, and `make check-layers` holds
 * every object to that file.
 *
 * Lock order, outer to inner (a lock is never taken while an inner one
 * is held):
 *
 *   epoll set's lock (epoll.c)
 *     -> udp->txlock (send.c)
 *       -> udp->lock (offload.c; read: the data path, write: attach/detach)
 *         -> rings_lock (rings.c: the list of ring sets)
 *         -> ring set's lock (rings.c: RX, FILL, the attachments' queues)
 *           -> ring set's txlock (send.c: TX, COMPLETION)
 *
 * Leaves, taken with nothing else held and holding nothing: tab_lock
 * (fdtab.c), the pools' locks, the stats lock, sig.c's update lock, the
 * list of epoll sets (epoll.c). fork() takes the leaves in its prepare
 * handler and resets the rest in the child (init.c).
 *
 * Errors: internal functions return 0 or -errno (pointers: NULL and a
 * -errno through an out parameter where the reason matters). Only the
 * functions that stand in for a C library call (the ops behind the
 * interposers) set errno and return -1.
 */
#ifndef _VMAK_VMA_H
#define _VMAK_VMA_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "internal.h"
#include "mellanox/vma_extra.h"

/* ---- log.c ---- */

enum vlog_level {
	VLOG_PANIC, VLOG_ERROR, VLOG_WARNING, VLOG_INFO, VLOG_DETAILS,
	VLOG_DEBUG, VLOG_FINE, VLOG_FINER,
};

extern int vlog_level VMAK_HIDDEN;
/*
 * Log to a file (VMA_LOG_FILE, "%d" is the pid): opened without
 * following a symbolic link, created 0600; never under AT_SECURE.
 */
void vlog_open(const char *path) VMAK_HIDDEN;
void vlog(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3))) VMAK_HIDDEN;
/* Once per process for each distinct reason (a static flag at the site). */
#define vlog_once(level, ...) do {					\
	static int __done;						\
	if (!__atomic_exchange_n(&__done, 1, __ATOMIC_RELAXED))		\
		vlog(level, __VA_ARGS__);				\
} while (0)
/* A value from outside (an environment variable) made safe for one line. */
const char *vlog_quote(const char *s, char *buf, size_t len) VMAK_HIDDEN;

/* ---- env.c ---- */

struct vconf {
	int trace_level;		/* VMA_TRACELEVEL */
	char log_file[256];		/* VMA_LOG_FILE */
	bool offload;			/* VMA_OFFLOADED_SOCKETS */
	int64_t rx_poll;		/* VMA_RX_POLL: spins before sleeping,
					 * -1 forever
					 */
	int64_t select_poll;		/* VMA_SELECT_POLL: usec, -1 forever */
	int64_t reply_poll_ns;		/* VMAK_REPLY_POLL (usec): a blocking
					 * receive after a send polls this
					 * long (reply.h); 0 never
					 */
	int ring_logic_rx;		/* VMA_RING_ALLOCATION_LOGIC_RX */
	int ring_logic_tx;		/* VMA_RING_ALLOCATION_LOGIC_TX */
	uint32_t rx_ring;		/* VMAK_RX_RING: RX descriptors */
	uint32_t rx_chunks;		/* VMA_RX_WRE: chunks per ring */
	uint32_t chunk_size;		/* VMAK_CHUNK_SIZE */
	uint64_t umem_size;		/* VMAK_UMEM_SIZE: bytes per process */
	uint32_t os_poll_ratio;		/* VMA_RX_UDP_POLL_OS_RATIO */
	bool rx_timestamp;		/* VMAK_RX_TIMESTAMP */
	bool socketxtreme;		/* VMA_SOCKETXTREME */
	char config_file[256];		/* VMA_CONFIG_FILE */
	bool fork_kernel;		/* VMAK_FORK=kernel */
	bool secure;			/* AT_SECURE: the environment ignored */
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
/* A ring_logic_t value we implement. */
bool vconf_logic_valid(int64_t v) VMAK_HIDDEN;
/*
 * Read the environment into vconf (defaults first). A set-user-ID or
 * file-capability program (AT_SECURE) reads none of it: every variable
 * keeps its default, and one line says so if any was set.
 */
void vconf_load(void) VMAK_HIDDEN;
/* getenv(), or NULL under AT_SECURE. */
const char *vconf_getenv(const char *name) VMAK_HIDDEN;

/* ---- rules.c: libvma.conf, "use vma|os <role> <local>[:<peer>]" ---- */

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
/* Read VMA_CONFIG_FILE (vconf.config_file) into vrules. */
void vrules_load(void) VMAK_HIDDEN;
/*
 * The first rule matching role, local address and (for connect) peer
 * decides; no rule: offload (libvma's default is to offload).
 */
bool vrules_offload(const struct vrules *rs, enum vrule_role role,
		    const struct sockaddr *local, const struct sockaddr *peer)
	VMAK_HIDDEN;

extern struct vrules vrules VMAK_HIDDEN;

/* ---- init.c: the process ---- */

/*
 * Configuration read and fork handlers installed, once. Returns whether
 * UDP sockets may be offloaded in this process at all: VMA_OFFLOADED_
 * SOCKETS, and the module loaded (looked up once per process: without
 * it every socket is a plain kernel socket, one log line says so).
 */
bool vproc_init(void) VMAK_HIDDEN;
/*
 * Is this a vfork() child running on its parent's memory? Then the
 * interposers must not touch the fd table (the parent's): they pass
 * through. A system call: only on the calls that change the table.
 */
bool vproc_vforked(void) VMAK_HIDDEN;
/*
 * vma_api_t.thread_offload(): sockets the thread tid creates from now on
 * are offloaded (offload 1, the rules still apply) or not (0). 0, or
 * -ENOMEM. vproc_offload_here(): may this thread's new socket be?
 */
int vproc_thread_offload(int offload, pthread_t tid) VMAK_HIDDEN;
bool vproc_offload_here(void) VMAK_HIDDEN;

/* ---- time ---- */

static inline int64_t vnow_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The same clock to a few milliseconds, without reading the time stamp
 * counter: for what ages in seconds (the send path's cached headers).
 */
static inline int64_t vnow_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The kernel socket's turn, once every VMA_RX_UDP_POLL_OS_RATIO (not 0)
 * calls: *left counts the calls down, without a division per turn.
 * Plain loads and stores: a count two threads race on only moves the
 * next turn by a call.
 */
static inline bool vos_turn(uint32_t *left)
{
	uint32_t k = __atomic_load_n(left, __ATOMIC_RELAXED);

	if (k > 1) {
		__atomic_store_n(left, k - 1, __ATOMIC_RELAXED);
		return false;
	}
	__atomic_store_n(left, vconf.os_poll_ratio, __ATOMIC_RELAXED);
	return true;
}

/* A deadline in CLOCK_MONOTONIC ns from a relative timeout; -1: none. */
static inline int64_t vdeadline_ms(int ms)
{
	return ms < 0 ? -1 : vnow_ns() + ms * 1000000LL;
}

/* ... from a timespec (checked valid); one past 2^63 ns is "never". */
static inline int64_t vdeadline_ts(const struct timespec *t)
{
	int64_t now;

	if (!t)
		return -1;
	now = vnow_ns();
	if (t->tv_sec >= (INT64_MAX - now) / 1000000000LL - 1)
		return INT64_MAX;
	return now + t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* What is left of a deadline: ns (0 if passed), -1 for none. */
static inline int64_t vdeadline_left(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - vnow_ns();
	return left < 0 ? 0 : left;
}

/* ... as poll()'s milliseconds, rounded up, clamped to INT_MAX. */
static inline int vdeadline_ms_left(int64_t deadline)
{
	int64_t left = vdeadline_left(deadline);

	if (left < 0)
		return -1;
	left = (left + 999999) / 1000000;
	return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

static inline struct timespec vns_ts(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000LL),
			       (long)(ns % 1000000000LL) };

	return ts;
}

#endif /* _VMAK_VMA_H */
