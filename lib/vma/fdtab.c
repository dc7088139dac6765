// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The fd table: which fds are the library's objects (fd.h). A slot holds
 * a pointer to a struct vfd (the program's fd), the internal mark (the
 * library's own), both (the library's own fd with an object the extra
 * API finds: objects are aligned, so the mark is the pointer's low bit),
 * or 0; an fd never seen reads 0, and that test, without a lock, is all a
 * call on somebody else's fd costs.
 *
 * A reference is taken without a lock: one more unless the count is
 * already 0, then the slot must still hold the same object, else the
 * reference goes back. That is sound because an object's memory is never
 * given back to malloc: a destroyed object waits in its kind's pool, with
 * refs 0, until the same kind reuses it, so the count we touch is always
 * a vfd's. A reused object found in the slot we looked at is the one the
 * slot holds now, which is what the caller asked for.
 *
 * Writers of the table take tab_lock, a leaf: nothing is called under it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sys.h"
#include "fd.h"

#define PAGE_SLOTS	1024
#define MAX_PAGES	1024		/* fds below 2^20 */
#define INTERNAL	((uintptr_t)1)	/* never a pointer: objects are aligned */

int vfd_active VMAK_HIDDEN;
int vfd_shared VMAK_HIDDEN;
static uintptr_t *pages[MAX_PAGES];
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- pools ---- */

struct vfd *vfd_pool_alloc(struct vfd_pool *p)
{
	struct vfd *f;

	pthread_mutex_lock(&p->lock);
	f = p->spare;
	if (f)
		p->spare = f->pool_next;
	pthread_mutex_unlock(&p->lock);
	if (!f)
		return calloc(1, p->size);
	/*
	 * refs is 0 and stays so until the owner installs the object: a
	 * vfd_get() racing with us never counts up from 0.
	 */
	memset((char *)f + sizeof(f->refs), 0, p->size - sizeof(f->refs));
	return f;
}

void vfd_pool_free(struct vfd_pool *p, struct vfd *f)
{
	pthread_mutex_lock(&p->lock);
	f->pool_next = p->spare;
	p->spare = f;
	pthread_mutex_unlock(&p->lock);
}

void vfd_pool_atfork_child(struct vfd_pool *p)
{
	pthread_mutex_init(&p->lock, NULL);
}

/* ---- slots ---- */

/* The page of fd's slot, if it has one (every lookup's path: inline). */
static inline uintptr_t *page_of(int fd)
{
	unsigned int p = (unsigned int)fd / PAGE_SLOTS;

	if (fd < 0 || p >= MAX_PAGES)
		return NULL;
	return __atomic_load_n(&pages[p], __ATOMIC_ACQUIRE);
}

static uintptr_t *slot(int fd, bool create)
{
	unsigned int p = (unsigned int)fd / PAGE_SLOTS;
	uintptr_t *pg;

	if (fd < 0 || p >= MAX_PAGES)
		return NULL;
	pg = page_of(fd);
	if (!pg && create) {
		pg = calloc(PAGE_SLOTS, sizeof(*pg));
		if (!pg)
			return NULL;
		__atomic_store_n(&pages[p], pg, __ATOMIC_RELEASE);
	}
	return pg ? &pg[(unsigned int)fd % PAGE_SLOTS] : NULL;
}

static inline uintptr_t peek(int fd)
{
	uintptr_t *pg = page_of(fd);

	return pg ? __atomic_load_n(&pg[(unsigned int)fd % PAGE_SLOTS],
				    __ATOMIC_ACQUIRE) : 0;
}

/* The program's object: what the interposers find. */
static bool is_obj(uintptr_t v)
{
	return v && !(v & INTERNAL);
}

static bool is_internal(uintptr_t v)
{
	return v & INTERNAL;
}

/* Any object, the program's or an internal fd's. */
static struct vfd *obj_of(uintptr_t v)
{
	return (struct vfd *)(v & ~INTERNAL);
}

bool vfd_tryref(struct vfd *f)
{
	int refs = __atomic_load_n(&f->refs, __ATOMIC_ACQUIRE);

	do {
		if (refs <= 0)
			return false;	/* being destroyed */
	} while (!__atomic_compare_exchange_n(&f->refs, &refs, refs + 1, true,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return true;
}

/* A reference to the object in fd's slot, if what want says is there. */
static struct vfd *get(int fd, bool any, bool *internal)
{
	struct vfd *f;
	uintptr_t v;

	*internal = false;
	if (!vfd_any())
		return NULL;
	v = peek(fd);
	*internal = is_internal(v);
	if (!(any ? obj_of(v) != NULL : is_obj(v)))
		return NULL;
	f = obj_of(v);
	if (!vfd_tryref(f))
		return NULL;	/* being destroyed: the fd is closing */
	if (peek(fd) != v) {
		vfd_put(f);
		return NULL;
	}
	return f;
}

struct vfd *vfd_get(int fd)
{
	bool internal;

	return get(fd, false, &internal);
}

struct vfd *vfd_get_api(int fd, bool *internal)
{
	return get(fd, true, internal);
}

void vfd_ref(struct vfd *f)
{
	__atomic_add_fetch(&f->refs, 1, __ATOMIC_ACQ_REL);
}

void vfd_put(struct vfd *f)
{
	if (!__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL))
		f->ops->destroy(f);
}

bool vfd_stale(int fd)
{
	return vfd_any() && peek(fd) != 0;
}

bool vfd_internal(int fd)
{
	return vfd_any() && is_internal(peek(fd));
}

/* Store v in fd's slot; the old value back. tab_lock held. */
static uintptr_t swap_locked(int fd, uintptr_t v)
{
	uintptr_t *s = slot(fd, v != 0), old;

	if (!s)
		return 0;
	/* an exchange: vfd_forget_nolock() may empty the slot meanwhile */
	if (is_obj(v))
		__atomic_add_fetch(&((struct vfd *)v)->nfds, 1, __ATOMIC_ACQ_REL);
	old = __atomic_exchange_n(s, v, __ATOMIC_ACQ_REL);
	if (is_obj(old))
		__atomic_sub_fetch(&((struct vfd *)old)->nfds, 1,
				   __ATOMIC_ACQ_REL);
	return old;
}

void (*vfd_last_fd_hook)(struct vfd *f) VMAK_HIDDEN;

/* The object a slot held is gone from fd: tell it, drop the reference. */
static void dropped(uintptr_t old, int fd)
{
	struct vfd *f = (struct vfd *)old;

	if (!is_obj(old))
		return;
	if (!__atomic_load_n(&f->nfds, __ATOMIC_ACQUIRE) && vfd_last_fd_hook)
		vfd_last_fd_hook(f);
	if (f->ops->closed)
		f->ops->closed(f, fd);
	vfd_put(f);
}

/*
 * Slots emptied by a signal handler that interrupted the library, where no
 * lock may be taken: the slot is cleared by an exchange, and telling the
 * object waits here for the next call that enters the library with no
 * lock held (vfd_late_drain()). Full, the object keeps the reference and
 * is never destroyed: a leak, not a fault.
 */
#define LATE_MAX	64
enum { LATE_FREE, LATE_FILLING, LATE_READY };
static struct late {
	int state;
	int fd;
	uintptr_t obj;
} late[LATE_MAX];
int vfd_late VMAK_HIDDEN;

void vfd_forget_nolock(int fd)
{
	uintptr_t *s = slot(fd, false), old;
	int i, st;

	if (!vfd_any() || !s || !__atomic_load_n(s, __ATOMIC_ACQUIRE))
		return;
	old = __atomic_exchange_n(s, 0, __ATOMIC_ACQ_REL);
	if (!is_obj(old))
		return;
	__atomic_sub_fetch(&((struct vfd *)old)->nfds, 1, __ATOMIC_ACQ_REL);
	for (i = 0; i < LATE_MAX; i++) {
		st = LATE_FREE;
		if (!__atomic_compare_exchange_n(&late[i].state, &st,
						 LATE_FILLING, false,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		late[i].fd = fd;
		late[i].obj = old;
		__atomic_store_n(&late[i].state, LATE_READY, __ATOMIC_SEQ_CST);
		__atomic_store_n(&vfd_late, 1, __ATOMIC_SEQ_CST);
		return;
	}
}

/* The first fd in [from, hi] whose slot is as wanted, skipping empty pages. */
static unsigned int next_where(unsigned int from, unsigned int hi,
			       bool internal)
{
	unsigned int fd, p;
	uintptr_t *pg, v;

	for (fd = from; fd <= hi && fd < MAX_PAGES * PAGE_SLOTS;) {
		p = fd / PAGE_SLOTS;
		pg = __atomic_load_n(&pages[p], __ATOMIC_ACQUIRE);
		if (!pg) {
			fd = (p + 1) * PAGE_SLOTS;
			continue;
		}
		v = __atomic_load_n(&pg[fd % PAGE_SLOTS], __ATOMIC_ACQUIRE);
		if (internal ? is_internal(v) : is_obj(v))
			return fd;
		if (fd == hi)
			break;
		fd++;
	}
	return ~0U;
}

int vfd_next_internal(unsigned int from, unsigned int hi)
{
	unsigned int fd = next_where(from, hi, true);

	return fd == ~0U ? -1 : (int)fd;
}

unsigned int vfd_next_stale(unsigned int from, unsigned int hi)
{
	return next_where(from, hi, false);
}

void vfd_late_drain(void)
{
	int i, st;

	/* cleared before the entries are read (a full barrier): an entry
	 * made after this is either seen below or sets vfd_late again
	 */
	__atomic_exchange_n(&vfd_late, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < LATE_MAX; i++) {
		st = LATE_READY;
		if (__atomic_load_n(&late[i].state, __ATOMIC_ACQUIRE) != st)
			continue;
		{
			uintptr_t obj = late[i].obj;
			int fd = late[i].fd;

			if (!__atomic_compare_exchange_n(&late[i].state, &st,
							 LATE_FREE, false,
							 __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED))
				continue;
			dropped(obj, fd);
		}
	}
}

void vfd_install(int fd, struct vfd *f)
{
	uintptr_t old;

	__atomic_store_n(&vfd_active, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&tab_lock);
	old = swap_locked(fd, (uintptr_t)f);
	pthread_mutex_unlock(&tab_lock);
	dropped(old, fd);
}

void vfd_fresh(int fd)
{
	uintptr_t old;

	if (!vfd_any() || !peek(fd))
		return;
	pthread_mutex_lock(&tab_lock);
	old = swap_locked(fd, 0);
	pthread_mutex_unlock(&tab_lock);
	dropped(old, fd);
}

struct vfd *vfd_closing(int fd)
{
	struct vfd *f = vfd_get(fd);

	if (f && f->ops->closing)
		f->ops->closing(f, fd);
	return f;
}

void vfd_closed(int fd, struct vfd *f, int rc)
{
	uintptr_t old = 0;

	/* a failed dup3() or dup2() onto fd left it open: it is ours again */
	if (f && f->undo_fdp) {
		if (rc < 0)
			__atomic_store_n(f->undo_fdp, f->undo_fd, __ATOMIC_RELEASE);
		f->undo_fdp = NULL;
	}
	if (rc >= 0 && f) {
		pthread_mutex_lock(&tab_lock);
		if (peek(fd) == (uintptr_t)f)
			old = swap_locked(fd, 0);
		pthread_mutex_unlock(&tab_lock);
		dropped(old, fd);
	}
	if (f)
		vfd_put(f);
}

int vfd_other_fd(struct vfd *f, int fd)
{
	unsigned int p, i;
	int other = -1;

	if (peek(fd) == (uintptr_t)f &&
	    __atomic_load_n(&f->nfds, __ATOMIC_ACQUIRE) <= 1)
		return -1;
	pthread_mutex_lock(&tab_lock);
	for (p = 0; p < MAX_PAGES && other < 0; p++)
		for (i = 0; pages[p] && i < PAGE_SLOTS; i++)
			if (pages[p][i] == (uintptr_t)f &&
			    (int)(p * PAGE_SLOTS + i) != fd) {
				other = (int)(p * PAGE_SLOTS + i);
				break;
			}
	pthread_mutex_unlock(&tab_lock);
	return other;
}

void vfd_clear_all_of(struct vfd *f)
{
	unsigned int p, i;
	int n = 0;

	pthread_mutex_lock(&tab_lock);
	for (p = 0; p < MAX_PAGES && f->nfds; p++)
		for (i = 0; pages[p] && i < PAGE_SLOTS; i++)
			if (pages[p][i] == (uintptr_t)f &&
			    swap_locked((int)(p * PAGE_SLOTS + i), 0) ==
			    (uintptr_t)f)
				n++;	/* not emptied by a handler meanwhile */
	pthread_mutex_unlock(&tab_lock);
	/* the slots' references; the caller holds its own */
	while (n--)
		vfd_put(f);
}

void vfd_dup(int oldfd, int newfd)
{
	struct vfd *f = vfd_get(oldfd);
	uintptr_t old;

	if (!f) {
		vfd_fresh(newfd);
		return;
	}
	pthread_mutex_lock(&tab_lock);
	old = swap_locked(newfd, (uintptr_t)f);	/* keeps vfd_get()'s ref */
	pthread_mutex_unlock(&tab_lock);
	dropped(old, newfd);
}

static void for_each(const struct vfd_ops *ops,
		     void (*fn)(int fd, struct vfd *f, void *ctx), void *ctx)
{
	unsigned int p, i;
	uintptr_t v;

	for (p = 0; p < MAX_PAGES; p++)
		for (i = 0; pages[p] && i < PAGE_SLOTS; i++) {
			v = pages[p][i];
			if (is_obj(v) && ((struct vfd *)v)->ops == ops)
				fn((int)(p * PAGE_SLOTS + i), (struct vfd *)v,
				   ctx);
		}
}

void vfd_for_each(const struct vfd_ops *ops,
		  void (*fn)(int fd, struct vfd *f, void *ctx), void *ctx)
{
	pthread_mutex_lock(&tab_lock);
	for_each(ops, fn, ctx);
	pthread_mutex_unlock(&tab_lock);
}

void vfd_for_each_in_child(const struct vfd_ops *ops,
			   void (*fn)(int fd, struct vfd *f, void *ctx),
			   void *ctx)
{
	for_each(ops, fn, ctx);
}

int vfd_scan(unsigned int lo, unsigned int hi, bool internal, int *fds,
	     int max)
{
	unsigned int p, i, fd;
	uintptr_t v;
	int n = 0;

	if (!vfd_any())
		return 0;
	pthread_mutex_lock(&tab_lock);
	for (p = lo / PAGE_SLOTS; p < MAX_PAGES && p <= hi / PAGE_SLOTS; p++)
		for (i = 0; pages[p] && i < PAGE_SLOTS; i++) {
			fd = p * PAGE_SLOTS + i;
			v = pages[p][i];
			if (fd < lo || fd > hi || !v ||
			    is_internal(v) != internal)
				continue;
			if (n < max)
				fds[n] = (int)fd;
			n++;
		}
	pthread_mutex_unlock(&tab_lock);
	return n;
}

bool vfd_keep_copy(struct vfd *f, int fd, int *fdp, bool *own, int others)
{
	int nfds = __atomic_load_n(&f->nfds, __ATOMIC_ACQUIRE);
	int calls = __atomic_load_n(&f->refs, __ATOMIC_ACQUIRE) - nfds - 1 -
		    others;
	int copy;

	if (fd != __atomic_load_n(fdp, __ATOMIC_ACQUIRE))
		return true;
	if (nfds <= 1 && calls <= 0) {
		/*
		 * Nobody needs the file after this close: a call that
		 * finds the object from now on (its fd still in the table
		 * until closed()) must not read the number, which the next
		 * open() may reuse. It meets EBADF, as the kernel's would.
		 */
		f->undo_fdp = fdp;
		f->undo_fd = fd;
		__atomic_store_n(fdp, -1, __ATOMIC_RELEASE);
		return true;
	}
	copy = vmak_sys_fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0)
		return false;
	copy = vfd_adopt(copy);
	*own = true;
	__atomic_store_n(fdp, copy, __ATOMIC_RELEASE);
	return true;
}

/* ---- the library's own fds ---- */

/* The library's own fd, moved up and marked with mark (and an object). */
static int adopt(int fd, uintptr_t mark)
{
	struct rlimit rl;
	uintptr_t old;
	int nfd = fd;

	if (fd < 0)
		return fd;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur >= 64) {
		nfd = vmak_sys_fcntl(fd, F_DUPFD_CLOEXEC,
				     (long)(rl.rlim_cur > 1U << 20 ? 1U << 19 :
					    rl.rlim_cur / 2));
		if (nfd >= 0)
			vmak_sys_close(fd);
		else
			nfd = fd;
	}
	__atomic_store_n(&vfd_active, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&tab_lock);
	old = swap_locked(nfd, mark);
	pthread_mutex_unlock(&tab_lock);
	dropped(old, nfd);	/* a stale entry: its fd was closed behind us */
	return nfd;
}

int vfd_adopt(int fd)
{
	return adopt(fd, INTERNAL);
}

int vfd_adopt_object(int fd, struct vfd *f)
{
	return adopt(fd, (uintptr_t)f | INTERNAL);
}

void vfd_unmark_internal(int fd)
{
	uintptr_t old = 0;

	if (fd < 0)
		return;
	pthread_mutex_lock(&tab_lock);
	if (is_internal(peek(fd)))
		old = swap_locked(fd, 0);
	pthread_mutex_unlock(&tab_lock);
	if (obj_of(old))	/* the slot's reference */
		vfd_put(obj_of(old));
}

void vfd_close_internal(int fd)
{
	if (fd < 0)
		return;
	vfd_unmark_internal(fd);
	vmak_sys_close(fd);
}

/* ---- fork ---- */

void vfd_atfork_prepare(void)
{
	pthread_mutex_lock(&tab_lock);
}

void vfd_atfork_parent(void)
{
	pthread_mutex_unlock(&tab_lock);
}

void vfd_atfork_child(void)
{
	pthread_mutex_init(&tab_lock, NULL);
}
