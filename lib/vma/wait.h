/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A socket's wake state (wait.c): how many datagrams the library holds for
 * it, and how a thread that queued one wakes the threads and epoll sets
 * that may be waiting for it. Only wait.c touches these fields; the
 * protocol is written there, once.
 */
#ifndef _VMAK_VMA_WAIT_H
#define _VMAK_VMA_WAIT_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

#define VWAIT_MAX_SRC	8

struct vringset;

struct vwait {
	int efd;		/* eventfd; -1 until the first source */
	int armed;		/* efd written and not read since */
	uint32_t ready;		/* datagrams queued for the socket */
	uint64_t bytes;		/* ... their payload bytes */
	uint32_t seq;		/* bumped per datagram queued (EPOLLET) */
	int sleepers;		/* threads between sleep_begin and _end */
	int sets;		/* epoll sets watching it */
	bool os_hint;		/* a wait saw the kernel socket readable */
	/*
	 * The ring sets its datagrams come from, for waits to sleep on,
	 * and gen, bumped whenever they change. Written by the owner under
	 * its own lock, read by waits without one: a ring set lives as long
	 * as the process, so a stale pointer is only a wasted look.
	 */
	uint32_t gen;
	int nsrc;
	struct vringset *src[VWAIT_MAX_SRC];
};

void vwait_init(struct vwait *w) VMAK_HIDDEN;
void vwait_destroy(struct vwait *w) VMAK_HIDDEN;
/* The eventfd, made on first need: 0 or -errno. */
int vwait_efd(struct vwait *w) VMAK_HIDDEN;
/* Replace the sources (the owner's lock held). */
void vwait_set_sources(struct vwait *w, struct vringset *const *src, int n)
	VMAK_HIDDEN;

/*
 * A wait saw the socket's kernel socket readable: its next receive or
 * socketXtreme poll looks there, and so does the next poll of each ring
 * set it takes datagrams from.
 */
void vwait_hint_os(struct vwait *w) VMAK_HIDDEN;

/* Producer: one datagram of bytes queued (the ring set's lock held). */
void vwait_post(struct vwait *w, uint32_t bytes) VMAK_HIDDEN;
/* Consumer: n datagrams (bytes in all) taken or dropped from the queues. */
void vwait_take(struct vwait *w, uint32_t n, uint64_t bytes) VMAK_HIDDEN;

static inline uint64_t vwait_bytes(const struct vwait *w)
{
	return __atomic_load_n(&w->bytes, __ATOMIC_RELAXED);
}

static inline uint32_t vwait_ready(const struct vwait *w)
{
	return __atomic_load_n(&w->ready, __ATOMIC_SEQ_CST);
}

static inline uint32_t vwait_seq(const struct vwait *w)
{
	return __atomic_load_n(&w->seq, __ATOMIC_RELAXED);
}

/*
 * The readers' verbs: the sources, the eventfd and the kernel socket's
 * hint are read only through these (the protocol at the top of wait.c
 * says which loads pair with which stores).
 */
static inline int vwait_nsrc(const struct vwait *w)
{
	return __atomic_load_n(&w->nsrc, __ATOMIC_ACQUIRE);
}

/* Source i (< vwait_nsrc()); a stale one is only a wasted look. */
static inline struct vringset *vwait_src(const struct vwait *w, int i)
{
	return __atomic_load_n(&w->src[i], __ATOMIC_ACQUIRE);
}

/* fn on each source (fn may drain it or run its callbacks). */
static inline void vwait_each_source(const struct vwait *w,
				     void (*fn)(struct vringset *r))
{
	int i, n = vwait_nsrc(w);

	for (i = 0; i < n; i++)
		fn(vwait_src(w, i));
}

/* The eventfd, or -1 before its first need. */
static inline int vwait_efd_of(const struct vwait *w)
{
	return __atomic_load_n(&w->efd, __ATOMIC_ACQUIRE);
}

/*
 * A sleeper's fds for poll(): the eventfd (if it has one; *efd says),
 * then each source's fd, POLLIN, into p (room for 1 + VWAIT_MAX_SRC).
 * Returns how many.
 */
int vwait_pollfds(const struct vwait *w, struct pollfd *p, bool *efd)
	VMAK_HIDDEN;

/* Did a wait see the kernel socket readable? Taken: the next looks. */
static inline bool vwait_os_hint_take(struct vwait *w)
{
	return __atomic_exchange_n(&w->os_hint, false, __ATOMIC_RELAXED);
}

/* The sources' generation, read before a sleeper lays out its fds. */
static inline uint32_t vwait_gen(const struct vwait *w)
{
	return __atomic_load_n(&w->gen, __ATOMIC_SEQ_CST);
}

/*
 * A thread about to sleep on the socket (in poll(), a receive, an epoll
 * wait), on the fds of sources generation gen: true if it must not,
 * because datagrams are queued already or the sources changed since.
 * Every sleep_begin is paired with a sleep_end; efd_fired: the wait
 * reported the eventfd readable.
 */
bool vwait_sleep_begin(struct vwait *w, uint32_t gen) VMAK_HIDDEN;
void vwait_sleep_end(struct vwait *w, bool efd_fired) VMAK_HIDDEN;
/*
 * Batches. A receive that cannot return before it has count more
 * datagrams (a blocking recvmmsg() without MSG_WAITFORONE) may ask the
 * module to wake it after count descriptors instead of each one
 * (VMAK_RX_BATCH). Only the socket's one sleeper, on a ring set that
 * carries its datagrams alone, watched by no epoll set and not handed to
 * the program; whoever starts to sleep on the ring set's fd meanwhile
 * arms it (a wake at the next descriptor), so a batch never delays
 * another's wake. vwait_batch_begin() after vwait_sleep_begin(): true if
 * the batch is set, and then vwait_batch_end() after the sleep, whatever
 * ended it. usec: a wake at most that long after the first descriptor.
 */
bool vwait_batch_begin(struct vwait *w, struct vringset *r, uint32_t count,
		       uint32_t usec) VMAK_HIDDEN;
void vwait_batch_end(struct vringset *r) VMAK_HIDDEN;
/* A socket attached to r (after counting it in natt): its sleepers and
 * epoll sets may sleep on r's fd from now on.
 */
void vwait_ring_watch(struct vringset *r) VMAK_HIDDEN;
/* r's fd is handed to the program, which may sleep on it: no more batches. */
void vwait_ring_export(struct vringset *r) VMAK_HIDDEN;

/* An epoll set starts or stops watching the socket. */
void vwait_set_add(struct vwait *w, int delta) VMAK_HIDDEN;
/* The eventfd was seen readable by an epoll set: consume it. */
void vwait_consume(struct vwait *w) VMAK_HIDDEN;
/* Wake every sleeper to look again (the sources changed). */
void vwait_kick(struct vwait *w) VMAK_HIDDEN;

/* In the child of fork(): the eventfd is the parent's. */
void vwait_atfork_child(struct vwait *w) VMAK_HIDDEN;

#endif /* _VMAK_VMA_WAIT_H */
