/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * One fd, one interface: every fd the library owns is a struct vfd with a
 * reference count and an ops table, as the kernel's struct file has its
 * file_operations. The fd table (fdtab.c) maps numbers to these objects
 * and knows nothing else about them; an interposer looks the fd up, calls
 * the op (or the C library when the kind has none) and drops its
 * reference. A new kind of fd is a new ops table.
 *
 * Kinds: an offloaded UDP socket (udpsock.c), an epoll set with
 * offloaded members (epoll.c), a ring set's fd (ringfd.c) and a socket
 * the library does not offload that carries SO_VMA_USER_DATA (plainfd.c).
 * libvma's extra API goes through the same table: each vma_api_t entry
 * that takes an fd looks it up and calls an op of its kind (api.c,
 * xtreme.c), as the interposers do for the C library's calls.
 *
 * The library's own fds (eventfds, helpers, the log, ring sets) are
 * marked internal: they look closed to the program's calls. A ring set's
 * fd is internal and still carries its object, which only the extra API
 * finds (vfd_get_api()): the program names it to socketxtreme_poll() and
 * the ring calls, never to close() or dup2().
 *
 * Lifetime. Each table slot holding a vfd owns one reference, and so does
 * every caller between vfd_get() and vfd_put(). The last vfd_put() calls
 * ops->destroy. Objects are allocated from a struct vfd_pool of their
 * kind and, once destroyed, are kept there for reuse by the same kind:
 * their memory stays a vfd of that kind for good, which is what lets
 * vfd_get() take a reference without a lock (fdtab.c says how).
 */
#ifndef _VMAK_VMA_FD_H
#define _VMAK_VMA_FD_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "internal.h"
#include "mellanox/vma_extra.h"

struct vfd;
struct vwait;

/*
 * What socketXtreme's epoll form asks of the layer above it (xtreme.c):
 * is fd a listening socket; one completion (or more) for a kernel event
 * on fd (-1: an fd the set does not know).
 */
struct vxt_env {
	bool (*listening)(int fd);
	unsigned int (*event)(int fd, bool listening,
			      const struct epoll_event *ev,
			      struct vma_completion_t *c, unsigned int max);
};

struct vfd_ops {
	const char *kind;		/* for logs */
	/* The last reference went: free what the object holds. */
	void (*destroy)(struct vfd *f);
	/*
	 * fd, one of f's, is about to close (still open; its slot may
	 * already be empty): the object stops using it. Then closed(),
	 * once fd is gone and its slot empty; the table drops the slot's
	 * reference after it. Either may be NULL.
	 */
	void (*closing)(struct vfd *f, int fd);
	void (*closed)(struct vfd *f, int fd);

	/*
	 * The calls. NULL: the interposer calls the C library. Each op
	 * makes the system call itself and returns what the C library
	 * would (errno set on failure).
	 */
	int (*bind)(struct vfd *f, int fd, const struct sockaddr *sa,
		    socklen_t len);
	int (*connect)(struct vfd *f, int fd, const struct sockaddr *sa,
		       socklen_t len);
	int (*setsockopt)(struct vfd *f, int fd, int level, int name,
			  const void *val, socklen_t len);
	int (*getsockopt)(struct vfd *f, int fd, int level, int name,
			  void *val, socklen_t *len);
	int (*fcntl)(struct vfd *f, int fd, int cmd, long arg);
	int (*ioctl)(struct vfd *f, int fd, unsigned long req, long arg);
	ssize_t (*recvmsg)(struct vfd *f, int fd, struct msghdr *msg,
			   int flags);
	int (*recvmmsg)(struct vfd *f, int fd, struct mmsghdr *v,
			unsigned int n, int flags, struct timespec *t);
	ssize_t (*sendmsg)(struct vfd *f, int fd, const struct msghdr *msg,
			   int flags);
	int (*sendmmsg)(struct vfd *f, int fd, struct mmsghdr *v,
			unsigned int n, int flags);
	/* deadline: CLOCK_MONOTONIC ns, -1 for none (vma.h) */
	int (*epoll_wait)(struct vfd *f, struct epoll_event *ev, int n,
			  int64_t deadline, const sigset_t *mask);

	/*
	 * Readiness the kernel does not see (datagrams already in the
	 * library's queues): poll, select and epoll sleep on the object's
	 * wait state (wait.h) beside the fd itself. NULL: only the kernel
	 * knows this fd's readiness.
	 */
	struct vwait *(*wait)(struct vfd *f);

	/*
	 * libvma's extra API. NULL: the kind does not take the call, which
	 * fails as libvma fails for such an fd (api.c says how). Each
	 * returns what the vma_api_t entry returns, errno set on failure.
	 */
	int (*recv_callback)(struct vfd *f, int fd, vma_recv_callback_t cb,
			     void *ctx);
	int (*recv_zcopy)(struct vfd *f, int fd, void *buf, size_t len,
			  int *flags, struct sockaddr *from, socklen_t *fromlen);
	int (*free_packets)(struct vfd *f, struct vma_packet_t *pkts,
			    size_t count);
	/* the ring fds it receives through, up to max into fds (NULL: count) */
	int (*ring_fds)(struct vfd *f, int *fds, int max);
	int (*tx_ring_fd)(struct vfd *f, const struct sockaddr *to,
			  socklen_t len);
	void (*dump_stats)(struct vfd *f, int fd, int level);
	/* vma_modify_ring(): 0, 1 (busy: completions wait), -1 and errno */
	int (*modify_ring)(struct vfd *f, const struct vma_modify_ring_attr *a);
	/* the headers of its sends (buf NULL: their size into *len) */
	int (*net_header)(struct vfd *f, void *buf, uint16_t *len);
	/* SO_VMA_USER_DATA as completions name the fd (fd: the default) */
	uint64_t (*user_data)(struct vfd *f, int fd);
	/*
	 * socketXtreme: completions for what the object has, up to max,
	 * never blocking; xt_kernel: what its kernel socket has, as packets
	 * (the epoll form, once the kernel said it is readable).
	 */
	unsigned int (*xt_poll)(struct vfd *f, struct vma_completion_t *c,
				unsigned int max, const struct vxt_env *env);
	unsigned int (*xt_kernel)(struct vfd *f, struct vma_completion_t *c,
				  unsigned int max);
};

struct vfd {
	int refs;
	int nfds;			/* table slots holding it */
	const struct vfd_ops *ops;
	struct vfd *pool_next;		/* in its pool, once destroyed */
	/*
	 * vfd_keep_copy() gave up the kernel fd for a close (or a dup onto
	 * it) that may yet fail: vfd_closed() puts undo_fd back in *undo_fdp
	 * if it did.
	 */
	int *undo_fdp;
	int undo_fd;
};

/* Freed objects of one kind, kept for reuse (see the lifetime above). */
struct vfd_pool {
	size_t size;			/* of the kind's struct; vfd first */
	pthread_mutex_t lock;
	struct vfd *spare;
};

#define VFD_POOL_INIT(type) \
	{ .size = sizeof(type), .lock = PTHREAD_MUTEX_INITIALIZER }

/* A zeroed object with refs 0 (not yet findable); NULL without memory. */
struct vfd *vfd_pool_alloc(struct vfd_pool *p) VMAK_HIDDEN;
/* Called by ops->destroy at its end. */
void vfd_pool_free(struct vfd_pool *p, struct vfd *f) VMAK_HIDDEN;
/* In the child of fork(): the pool's lock may have been held. */
void vfd_pool_atfork_child(struct vfd_pool *p) VMAK_HIDDEN;

/*
 * Any object ever installed: until then every lookup is one load and a
 * branch, and the interposers call the C library at once.
 */
extern int vfd_active VMAK_HIDDEN;

static inline bool vfd_any(void)
{
	return __atomic_load_n(&vfd_active, __ATOMIC_RELAXED);
}

/*
 * This process forked: its fds' open file descriptions may be shared with
 * another process, which can change their flags (O_NONBLOCK) behind us.
 */
extern int vfd_shared VMAK_HIDDEN;

/*
 * Called when an object's last fd is gone, before its closed(): epoll.c
 * takes it out of every set (as the kernel's __fput() calls
 * eventpoll_release()). Set once by epoll.c.
 */
extern void (*vfd_last_fd_hook)(struct vfd *f) VMAK_HIDDEN;

/* A referenced object for fd, or NULL (not ours). vfd_put() after. */
struct vfd *vfd_get(int fd) VMAK_HIDDEN;
/*
 * For the extra API: vfd_get(), and an internal fd's object too (a ring
 * set's fd). *internal: fd is one of the library's own.
 */
struct vfd *vfd_get_api(int fd, bool *internal) VMAK_HIDDEN;
void vfd_ref(struct vfd *f) VMAK_HIDDEN;
/* A reference unless the object is being destroyed (refs 0). */
bool vfd_tryref(struct vfd *f) VMAK_HIDDEN;
void vfd_put(struct vfd *f) VMAK_HIDDEN;
/* Does the table hold anything for fd (an object, or one of ours)? */
bool vfd_stale(int fd) VMAK_HIDDEN;
/* Is fd one of the library's own (it then looks closed)? */
bool vfd_internal(int fd) VMAK_HIDDEN;

/*
 * Put a new object in fd's slot: the slot takes the caller's reference
 * (refs set to 1 before). Whatever the slot held (a stale entry: its fd
 * was closed behind our back) is dropped.
 */
void vfd_install(int fd, struct vfd *f) VMAK_HIDDEN;
/*
 * fd is closing or was replaced: closing() before the system call (fd
 * still open), then the system call, then closed() with its result.
 * vfd_closed() empties the slot, tells the object and drops the slot's
 * reference; it does nothing if rc < 0 (the fd was not closed).
 */
struct vfd *vfd_closing(int fd) VMAK_HIDDEN;
void vfd_closed(int fd, struct vfd *f, int rc) VMAK_HIDDEN;
/* A number the kernel just handed out (open(), pipe()...) has no past. */
void vfd_fresh(int fd) VMAK_HIDDEN;
/*
 * The same, for a signal handler that interrupted the library: no lock is
 * taken, and the object hears of it from vfd_late_drain(), which the next
 * entry into the library calls while vfd_late is set.
 */
void vfd_forget_nolock(int fd) VMAK_HIDDEN;
extern int vfd_late VMAK_HIDDEN;
/* Without a lock: the next internal fd (or -1), object fd (or ~0U) in range */
int vfd_next_internal(unsigned int from, unsigned int hi) VMAK_HIDDEN;
unsigned int vfd_next_stale(unsigned int from, unsigned int hi) VMAK_HIDDEN;
void vfd_late_drain(void) VMAK_HIDDEN;
/*
 * Another fd of f's than fd (f has several: a dup), or -1. Looks through
 * the table only when fd's slot is not f's only one.
 */
int vfd_other_fd(struct vfd *f, int fd) VMAK_HIDDEN;
/* Every slot holding f is emptied (f stops being ours: a plain socket). */
void vfd_clear_all_of(struct vfd *f) VMAK_HIDDEN;
/* newfd is now a copy of oldfd: it gets oldfd's object, if any. */
void vfd_dup(int oldfd, int newfd) VMAK_HIDDEN;
/*
 * The fds in [lo, hi] that hold objects (internal false) or are the
 * library's own (true): up to max of them in fds[]; returns how many
 * there are.
 */
int vfd_scan(unsigned int lo, unsigned int hi, bool internal, int *fds,
	     int max) VMAK_HIDDEN;
/*
 * For closing(): fd, one of f's, is about to close. If it is the one the
 * object reaches the kernel through (*fdp) while other fds or calls in
 * flight still need the file, *fdp becomes a hidden copy (*own set), as
 * the kernel keeps a file while any fd or call holds it. others: the
 * object's references that are neither fds nor calls (epoll members).
 * Nothing needs the file past this close: *fdp becomes -1 (back to fd
 * if the close, or the dup onto fd, fails: vfd_closed()). The caller of
 * closing() holds one reference, and excludes from this call the object's
 * own readers of *fdp that did not come through fd. False: no fd left for
 * a copy.
 */
bool vfd_keep_copy(struct vfd *f, int fd, int *fdp, bool *own, int others)
	VMAK_HIDDEN;
/* fn on every slot of a kind (the table's lock held: no table calls). */
void vfd_for_each(const struct vfd_ops *ops,
		  void (*fn)(int fd, struct vfd *f, void *ctx), void *ctx)
	VMAK_HIDDEN;

/*
 * The same in the child of fork(), which is one thread: without the lock,
 * so that fn may call the table.
 */
void vfd_for_each_in_child(const struct vfd_ops *ops,
			   void (*fn)(int fd, struct vfd *f, void *ctx),
			   void *ctx) VMAK_HIDDEN;

/*
 * The library's own fds: moved to the top half of the soft RLIMIT_NOFILE,
 * where programs that take the lowest free fd rarely reach, close-on-exec,
 * and marked internal. vfd_adopt() returns the new number (or fd itself
 * if it could not move it); vfd_close_internal() closes and unmarks.
 */
int vfd_adopt(int fd) VMAK_HIDDEN;
/*
 * The same, keeping an object there that the extra API finds: the slot
 * takes a reference (f's refs set to 1 before, as for vfd_install()).
 */
int vfd_adopt_object(int fd, struct vfd *f) VMAK_HIDDEN;
void vfd_close_internal(int fd) VMAK_HIDDEN;
/* The mark alone, for an fd closed elsewhere (the native layer). */
void vfd_unmark_internal(int fd) VMAK_HIDDEN;

/*
 * The fd table's protocol for the calls that make, copy and end fds
 * (fdlife.c): each stands in for the C library's call of its name (errno
 * set on failure). vfd_copied(): nfd, just made a copy of fd by the
 * kernel (or the failed call's -1); vfd_new(): fd, just handed out.
 */
int vfd_close(int fd) VMAK_HIDDEN;
int vfd_copied(int fd, int nfd) VMAK_HIDDEN;
int vfd_dup_onto(int fd, int nfd, int flags, bool three) VMAK_HIDDEN;
int vfd_close_range(unsigned int lo, unsigned int hi, int flags) VMAK_HIDDEN;
int vfd_fclose(FILE *fp) VMAK_HIDDEN;
int vfd_new(int fd) VMAK_HIDDEN;
/* Is this a vfork() child (on its parent's memory)? Set by init.c. */
extern bool (*vfd_vforked)(void) VMAK_HIDDEN;

/* In the child of fork(): the table's lock may have been held. */
void vfd_atfork_prepare(void) VMAK_HIDDEN;
void vfd_atfork_parent(void) VMAK_HIDDEN;
void vfd_atfork_child(void) VMAK_HIDDEN;

#endif /* _VMAK_VMA_FD_H */
