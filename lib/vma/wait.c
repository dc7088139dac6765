// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The wake-up protocol.
 *
 * Datagrams reach a socket's queues in whichever thread drains the ring
 * (its own reader, another socket's reader on the same ring, an epoll
 * wait). A thread of the socket's may be asleep meanwhile in poll() on
 * the ring fds, which the drain has just made unreadable, so the drainer
 * wakes it through the socket's eventfd. Four counters and one fd:
 *
 *   ready     datagrams queued; the producer adds, consumers subtract
 *   sleepers  threads between vwait_sleep_begin() and vwait_sleep_end()
 *   sets      epoll sets holding the socket (a program may wait on a set
 *             through a path we do not see: nested in another set,
 *             poll() on the epoll fd, a raw system call)
 *   armed     the eventfd was written and not read since; while it is,
 *             nobody writes it again (the counter cannot pile up)
 *
 * Producer (vwait_post), after queuing:
 *   P1  ready++                                   (seq_cst)
 *   P2  if sleepers || sets: signal               (seq_cst loads)
 *   signal: if exchange(armed, 1) was 0: write(efd)
 *
 * Sleeper (vwait_sleep_begin), before sleeping:
 *   S1  sleepers++                                (seq_cst)
 *   S2  if ready: do not sleep                    (seq_cst load)
 *
 * P1/P2 against S1/S2 is a store-then-load pair on each side, so with
 * sequential consistency at least one side sees the other: either the
 * sleeper sees ready (S2) or the producer sees the sleeper (P2) and the
 * eventfd becomes readable; a sleeper that passed S2 sleeps on it.
 *
 * Consumer of the eventfd (vwait_consume), once a wait saw it readable:
 *   C1  read(efd)                (the counter to 0)
 *   C2  armed = 0                (seq_cst)
 *   C3  if ready && (sleepers || sets): signal
 * Reading before clearing keeps "armed => readable or about to be":
 * a producer that found armed set between C1 and C2 did not write, and
 * C3 then sees its datagram (P1 before its exchange, C2 before C3).
 *
 * A consumer that takes the last datagram while the eventfd is armed
 * consumes it too, so that an epoll set holding the socket (or a set
 * nesting that one) stops being readable once the socket is not.
 *
 * Sources (the ring sets a sleeper polls) change the same way: the owner
 * stores them, then G1 gen++ (seq_cst), then kicks (P2's loads: signal if
 * anyone sleeps). A sleeper reads gen before laying out its fds and, after
 * S1, S3 compares it (seq_cst): a sleeper that polls the old fds either
 * sees the new gen and does not sleep, or was seen by the kick, and the
 * eventfd (which it always polls) wakes it.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sys.h"
#include "fd.h"
#include "rings.h"
#include "vma.h"
#include "wait.h"

void vwait_init(struct vwait *w)
{
	w->efd = -1;
}

int vwait_efd(struct vwait *w)
{
	int fd;

	if (__atomic_load_n(&w->efd, __ATOMIC_ACQUIRE) >= 0)
		return 0;
	fd = vmak_sys_eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	fd = vfd_adopt(fd);
	/* the first wins (an attach, a sleeper, an epoll set): others close theirs */
	{
		int none = -1;

		if (!__atomic_compare_exchange_n(&w->efd, &none, fd, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			vfd_close_internal(fd);
	}
	return 0;
}

void vwait_destroy(struct vwait *w)
{
	if (w->efd >= 0)
		vfd_close_internal(w->efd);
	w->efd = -1;
}

void vwait_set_sources(struct vwait *w, struct vringset *const *src, int n)
{
	int i;

	for (i = 0; i < n && i < VWAIT_MAX_SRC; i++)
		__atomic_store_n(&w->src[i], src[i], __ATOMIC_RELEASE);
	__atomic_store_n(&w->nsrc, i, __ATOMIC_RELEASE);
	__atomic_add_fetch(&w->gen, 1, __ATOMIC_SEQ_CST);	/* G1 */
}

void vwait_hint_os(struct vwait *w)
{
	int i, n = __atomic_load_n(&w->nsrc, __ATOMIC_ACQUIRE);
	struct vringset *r;

	__atomic_store_n(&w->os_hint, true, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		r = __atomic_load_n(&w->src[i], __ATOMIC_ACQUIRE);
		__atomic_store_n(&r->os_hint, true, __ATOMIC_RELAXED);
	}
}

static void signal_efd(struct vwait *w)
{
	uint64_t one = 1;
	int fd = __atomic_load_n(&w->efd, __ATOMIC_ACQUIRE);

	if (fd < 0 || __atomic_exchange_n(&w->armed, 1, __ATOMIC_SEQ_CST))
		return;
	/* cannot fail but for a bad fd: the counter never reaches its max */
	if (vmak_sys_write(fd, &one, sizeof(one)) < 0)
		__atomic_store_n(&w->armed, 0, __ATOMIC_SEQ_CST);
}

static bool watched(struct vwait *w)
{
	return __atomic_load_n(&w->sleepers, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&w->sets, __ATOMIC_SEQ_CST);
}

void vwait_post(struct vwait *w, uint32_t bytes)
{
	__atomic_add_fetch(&w->bytes, bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w->ready, 1, __ATOMIC_SEQ_CST);	/* P1 */
	__atomic_add_fetch(&w->seq, 1, __ATOMIC_RELAXED);
	if (watched(w))						/* P2 */
		signal_efd(w);
}

void vwait_consume(struct vwait *w)
{
	uint64_t v;
	int fd = __atomic_load_n(&w->efd, __ATOMIC_ACQUIRE);

	if (fd < 0 || !__atomic_load_n(&w->armed, __ATOMIC_SEQ_CST))
		return;
	if (vmak_sys_read(fd, &v, sizeof(v)) < 0)		/* C1 */
		v = 0;	/* EAGAIN: a racing consumer read it first */
	__atomic_store_n(&w->armed, 0, __ATOMIC_SEQ_CST);	/* C2 */
	if (vwait_ready(w) && watched(w))			/* C3 */
		signal_efd(w);
}

void vwait_take(struct vwait *w, uint32_t n, uint64_t bytes)
{
	if (!n)
		return;
	__atomic_sub_fetch(&w->bytes, bytes, __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&w->ready, n, __ATOMIC_SEQ_CST) == 0 &&
	    __atomic_load_n(&w->armed, __ATOMIC_RELAXED))
		vwait_consume(w);
}

/* Each source of w: a batch on it must not hold a new sleeper's wake. */
static void watch_sources(struct vwait *w)
{
	int i, n = __atomic_load_n(&w->nsrc, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		vwait_ring_watch(__atomic_load_n(&w->src[i], __ATOMIC_ACQUIRE));
}

bool vwait_sleep_begin(struct vwait *w, uint32_t gen)
{
	__atomic_add_fetch(&w->sleepers, 1, __ATOMIC_SEQ_CST);	/* S1 */
	watch_sources(w);					/* W2 */
	return vwait_ready(w) != 0 ||				/* S2 */
	       vwait_gen(w) != gen;				/* S3 */
}

/*
 * Batches, against a thread or an epoll set that starts to sleep on the
 * ring set's fd meanwhile:
 *
 *   batcher (after its own S1)              newcomer
 *   B1  CAS batching false -> true          W1  sleepers++ (S1), sets++,
 *   B2  sleepers == 1, sets == 0,               natt++ or exported = true
 *       natt == 1, !exported: else undo     W2  if batching: arm
 *   B3  VMAK_RX_BATCH                       (all seq_cst)
 *   B4  B2 again: else end the batch
 *
 * Store then load on both sides: the batcher sees the newcomer and
 * gives up, or the newcomer sees batching and arms, and an arm wins
 * over a batch in the module whether it comes before or after B3. A
 * datagram between W2 and B3 spends the arm, and a newcomer that arms
 * once (an epoll set) may take it and sleep again under the batch: B4
 * sees that newcomer and ends the batch. Only the batcher that set
 * batching clears it, after ending the batch.
 */
static void ring_arm(struct vringset *r)
{
	vmak_ringset_arm(&r->rs);
}

void vwait_ring_watch(struct vringset *r)
{
	if (__atomic_load_n(&r->batching, __ATOMIC_SEQ_CST))	/* W2 */
		ring_arm(r);
}

void vwait_ring_export(struct vringset *r)
{
	__atomic_store_n(&r->exported, true, __ATOMIC_SEQ_CST);	/* W1 */
	vwait_ring_watch(r);
}

/* Nothing but w's one sleeper can sleep on r's fd (B2). */
static bool alone(struct vwait *w, struct vringset *r)
{
	return __atomic_load_n(&w->sleepers, __ATOMIC_SEQ_CST) == 1 &&
	       !__atomic_load_n(&w->sets, __ATOMIC_SEQ_CST) &&
	       __atomic_load_n(&r->natt, __ATOMIC_SEQ_CST) == 1 &&
	       !__atomic_load_n(&r->exported, __ATOMIC_SEQ_CST);
}

bool vwait_batch_begin(struct vwait *w, struct vringset *r, uint32_t count,
		       uint32_t usec)
{
	bool no = false;
	int err = 0;

	if (__atomic_load_n(&r->batch_no, __ATOMIC_RELAXED) ||
	    !__atomic_compare_exchange_n(&r->batching, &no, true, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return false;					/* B1 */
	if (!alone(w, r))					/* B2 */
		goto undo;
	err = -vmak_ringset_batch(&r->rs, count, usec);		/* B3 */
	if (!err) {
		/*
		 * A newcomer's arm can be spent by a datagram before B3
		 * (and one that armed once, an epoll set, takes it and
		 * sleeps again): look once more, after B3.
		 */
		if (alone(w, r))
			return true;
		vwait_batch_end(r);
		return false;
	}
undo:
	__atomic_store_n(&r->batching, false, __ATOMIC_SEQ_CST);
	/* a module without batches: sleep as before, and do not ask again */
	if (err == ENOPROTOOPT && !__atomic_exchange_n(&r->batch_no, true,
						       __ATOMIC_RELAXED)) {
		int old;

		/* the caller's cleanup is not in place yet: no cancel here */
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
		vlog(VLOG_DEBUG, "ring set fd %d: the module has no batched wakes",
		     vrs_fd(r));
		pthread_setcancelstate(old, NULL);
	}
	return false;
}

void vwait_batch_end(struct vringset *r)
{
	/* woken by the module, the batch is over; otherwise this ends it */
	vmak_ringset_batch(&r->rs, 0, 0);
	__atomic_store_n(&r->batching, false, __ATOMIC_SEQ_CST);
}

void vwait_sleep_end(struct vwait *w, bool efd_fired)
{
	__atomic_sub_fetch(&w->sleepers, 1, __ATOMIC_SEQ_CST);
	if (efd_fired)
		vwait_consume(w);
}

void vwait_set_add(struct vwait *w, int delta)
{
	if (__atomic_add_fetch(&w->sets, delta, __ATOMIC_SEQ_CST) &&	/* W1 */
	    delta > 0)
		watch_sources(w);				/* W2 */
}

void vwait_kick(struct vwait *w)
{
	if (watched(w))
		signal_efd(w);
}

void vwait_atfork_child(struct vwait *w)
{
	/*
	 * The eventfd is shared with the parent, whose threads write and
	 * read it: the child's copy goes, and a new one comes with the
	 * child's own rings.
	 */
	if (w->efd >= 0)
		vfd_close_internal(w->efd);
	w->efd = -1;
	w->armed = 0;
	w->sleepers = 0;
	w->nsrc = 0;
	w->gen++;
	/* what the queues held is the parent's to read */
	__atomic_store_n(&w->ready, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->bytes, 0, __ATOMIC_RELAXED);
}

int vwait_pollfds(const struct vwait *w, struct pollfd *p, bool *efd)
{
	int i, n = 0, fd = vwait_efd_of(w), nsrc = vwait_nsrc(w);

	*efd = fd >= 0;
	if (*efd)
		p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	for (i = 0; i < nsrc; i++)
		p[n++] = (struct pollfd){ .fd = vrs_fd(vwait_src(w, i)),
					  .events = POLLIN };
	return n;
}
