// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The fd table: which fds are the library's objects (fd.h). A slot holds
 * a pointer to a struct vfd, or the internal mark, or 0; an fd never seen
 * reads 0, and that test, without a lock, is all a call on somebody
 * else's fd costs.
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

static uintptr_t *slot(int fd, bool create)
{
	unsigned int p = (unsigned int)fd / PAGE_SLOTS;
	uintptr_t *pg;

	if (fd < 0 || p >= MAX_PAGES)
		return NULL;
	pg = __atomic_load_n(&pages[p], __ATOMIC_ACQUIRE);
	if (!pg && create) {
		pg = calloc(PAGE_SLOTS, sizeof(*pg));
		if (!pg)
			return NULL;
		__atomic_store_n(&pages[p], pg, __ATOMIC_RELEASE);
	}
	return pg ? &pg[(unsigned int)fd % PAGE_SLOTS] : NULL;
}

static uintptr_t peek(int fd)
{
	uintptr_t *s = slot(fd, false);

	return s ? __atomic_load_n(s, __ATOMIC_ACQUIRE) : 0;
}

static bool is_obj(uintptr_t v)
{
	return v && v != INTERNAL;
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

struct vfd *vfd_get(int fd)
{
	struct vfd *f;
	uintptr_t v;

	if (!vfd_any())
		return NULL;
	v = peek(fd);
	if (!is_obj(v))
		return NULL;
	f = (struct vfd *)v;
	if (!vfd_tryref(f))
		return NULL;	/* being destroyed: the fd is closing */
	if (peek(fd) != v) {
		vfd_put(f);
		return NULL;
	}
	return f;
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
	return vfd_any() && peek(fd) == INTERNAL;
}

/* Store v in fd's slot; the old value back. tab_lock held. */
static uintptr_t swap_locked(int fd, uintptr_t v)
{
	uintptr_t *s = slot(fd, v != 0), old;

	if (!s)
		return 0;
	old = *s;
	__atomic_store_n(s, v, __ATOMIC_RELEASE);
	if (is_obj(old))
		((struct vfd *)old)->nfds--;
	if (is_obj(v))
		((struct vfd *)v)->nfds++;
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

void vfd_clear_all_of(struct vfd *f)
{
	unsigned int p, i;
	int n = 0;

	pthread_mutex_lock(&tab_lock);
	for (p = 0; p < MAX_PAGES && f->nfds; p++)
		for (i = 0; pages[p] && i < PAGE_SLOTS; i++)
			if (pages[p][i] == (uintptr_t)f) {
				swap_locked((int)(p * PAGE_SLOTS + i), 0);
				n++;
			}
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

void vfd_for_each(const struct vfd_ops *ops, void (*fn)(int fd, struct vfd *f))
{
	unsigned int p, i;
	uintptr_t v;

	pthread_mutex_lock(&tab_lock);
	for (p = 0; p < MAX_PAGES; p++)
		for (i = 0; pages[p] && i < PAGE_SLOTS; i++) {
			v = pages[p][i];
			if (is_obj(v) && ((struct vfd *)v)->ops == ops)
				fn((int)(p * PAGE_SLOTS + i), (struct vfd *)v);
		}
	pthread_mutex_unlock(&tab_lock);
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
			    (v == INTERNAL) != internal)
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

	if (fd != __atomic_load_n(fdp, __ATOMIC_ACQUIRE) ||
	    (nfds <= 1 && calls <= 0))
		return true;
	copy = vmak_sys_fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0)
		return false;
	copy = vfd_adopt(copy);
	*own = true;
	__atomic_store_n(fdp, copy, __ATOMIC_RELEASE);
	return true;
}

/* ---- the library's own fds ---- */

int vfd_adopt(int fd)
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
	old = swap_locked(nfd, INTERNAL);
	pthread_mutex_unlock(&tab_lock);
	dropped(old, nfd);	/* a stale entry: its fd was closed behind us */
	return nfd;
}

void vfd_unmark_internal(int fd)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&tab_lock);
	if (peek(fd) == INTERNAL)
		swap_locked(fd, 0);
	pthread_mutex_unlock(&tab_lock);
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
