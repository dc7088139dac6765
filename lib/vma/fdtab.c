// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The fd table: what each fd of the process is to us. A slot holds a
 * tagged pointer (the low bits say which kind); an fd never seen reads 0,
 * and that test, without a lock, is all a call on somebody else's fd costs.
 * A vsock's memory is never given back (sock.c keeps freed ones for reuse),
 * so a reference is taken without a lock: one more unless the count is
 * already 0, then the slot must still hold the same vsock, else the
 * reference goes back (it was a vsock being freed, or reused for another
 * fd). Writers of the table take its lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"

#define PAGE_SLOTS	1024
#define MAX_PAGES	1024		/* fds below 2^20 */
#define KIND_MASK	3UL

static uintptr_t *pages[MAX_PAGES];
static pthread_rwlock_t tab_lock = PTHREAD_RWLOCK_INITIALIZER;

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

enum vfd_kind vfd_kind(int fd)
{
	uintptr_t v = peek(fd);

	return v ? (enum vfd_kind)(v & KIND_MASK) : VFD_NONE;
}

struct vsock *vfd_sock(int fd)
{
	struct vsock *vs;
	uintptr_t v;
	int refs;

	if (!__atomic_load_n(&vmak_active, __ATOMIC_RELAXED))
		return NULL;
	v = peek(fd);
	if ((v & KIND_MASK) != VFD_SOCK)
		return NULL;
	vs = (struct vsock *)(v & ~KIND_MASK);
	refs = __atomic_load_n(&vs->refs, __ATOMIC_ACQUIRE);
	do {
		if (refs <= 0)
			return NULL;	/* being freed: the fd is closing */
	} while (!__atomic_compare_exchange_n(&vs->refs, &refs, refs + 1, true,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (peek(fd) != v) {
		vsock_release(vs);
		return NULL;
	}
	return vs;
}

struct vepoll *vfd_epoll(int fd)
{
	uintptr_t v = peek(fd);

	if ((v & KIND_MASK) != VFD_EPOLL)
		return NULL;
	return (struct vepoll *)(v & ~KIND_MASK);
}

static void set(int fd, uintptr_t v)
{
	uintptr_t *s;

	pthread_rwlock_wrlock(&tab_lock);
	s = slot(fd, true);
	if (s)
		__atomic_store_n(s, v, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&tab_lock);
}

void vfd_set_sock(int fd, struct vsock *vs)
{
	__atomic_store_n(&vmak_active, 1, __ATOMIC_RELAXED);
	set(fd, (uintptr_t)vs | VFD_SOCK);
}

void vfd_set_epoll(int fd, struct vepoll *ep)
{
	set(fd, (uintptr_t)ep | VFD_EPOLL);
}

void vfd_set_internal(int fd, bool on)
{
	/* a non-null pointer that is never dereferenced */
	set(fd, on ? ((uintptr_t)&pages | VFD_INTERNAL) : 0);
}

enum vfd_kind vfd_clear(int fd, void **obj)
{
	uintptr_t *s, v = 0;

	*obj = NULL;
	if (!peek(fd))
		return VFD_NONE;
	pthread_rwlock_wrlock(&tab_lock);
	s = slot(fd, false);
	if (s) {
		v = *s;
		__atomic_store_n(s, 0, __ATOMIC_RELEASE);
	}
	pthread_rwlock_unlock(&tab_lock);
	if (!v)
		return VFD_NONE;
	*obj = (void *)(v & ~KIND_MASK);
	return (enum vfd_kind)(v & KIND_MASK);
}

/*
 * newfd now refers to oldfd's file. A vsock is shared (one more table
 * reference); an epoll set's copy is an epoll fd of the same set, which we
 * do not follow (a copy of a vepoll fd is passed to the C library and
 * sees only the kernel's half of the set), so only sockets are copied.
 */
void vfd_dup(int oldfd, int newfd)
{
	struct vsock *vs = vfd_sock(oldfd);

	if (!vs)
		return;
	__atomic_add_fetch(&vs->nfds, 1, __ATOMIC_ACQ_REL);
	set(newfd, (uintptr_t)vs | VFD_SOCK);	/* keeps vfd_sock()'s ref */
}

void vfd_forget_all(void)
{
	unsigned int p;

	pthread_rwlock_wrlock(&tab_lock);
	for (p = 0; p < MAX_PAGES; p++) {
		free(pages[p]);
		pages[p] = NULL;
	}
	pthread_rwlock_unlock(&tab_lock);
}

/*
 * Internal fds (ring sockets, eventfds, the log) are moved to the top half
 * of the soft RLIMIT_NOFILE, where programs that allocate the lowest free
 * fd rarely reach, and marked close-on-exec.
 */
int vfd_hide(int fd)
{
	struct rlimit rl;
	int nfd;

	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur < 64)
		return fd;
	nfd = vmak_sys_fcntl(fd, F_DUPFD_CLOEXEC,
			     (long)(rl.rlim_cur > 1U << 20 ? 1U << 19 :
				    rl.rlim_cur / 2));
	if (nfd < 0)
		return fd;
	vmak_sys_close(fd);
	return nfd;
}

void vfd_for_each_sock(void (*fn)(int fd, struct vsock *vs))
{
	unsigned int p, i;
	uintptr_t v;

	pthread_rwlock_rdlock(&tab_lock);
	for (p = 0; p < MAX_PAGES; p++)
		for (i = 0; pages[p] && i < PAGE_SLOTS; i++) {
			v = pages[p][i];
			if ((v & KIND_MASK) == VFD_SOCK)
				fn((int)(p * PAGE_SLOTS + i),
				   (struct vsock *)(v & ~KIND_MASK));
		}
	pthread_rwlock_unlock(&tab_lock);
}
