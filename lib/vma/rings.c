// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The process's ring sets and its UMEM.
 *
 * One UMEM per process, registered by the first ring set and shared by
 * the others (VMAK_BIND_SHARED_UMEM); its chunks sit in a pool, and each
 * ring set takes VMA_RX_WRE of them for its FILL ring and a few for TX
 * frames. A received chunk goes round: FILL, RX descriptor, the queue of
 * the socket whose rule cookie it carries (demux.c), and back to the FILL
 * ring of its ring set once the program has read it. Ring sets are bound
 * with VMAK_BIND_PASS_ON_DROP: what a ring cannot take (no chunk free, RX
 * ring full) goes on to the kernel socket, where the receive path finds
 * it, so a slow reader slows, it does not lose.
 *
 * Ring sets outlive their sockets: the next socket of the same device and
 * key reuses one, and the first holds the UMEM. They go with the process.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "addr.h"
#include "rings.h"

#define VRS_TX		256	/* TX and COMPLETION entries */
#define VRS_TX_CHUNKS	64	/* chunks a ring set keeps for TX frames */

static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vringset *rings;

static struct {
	void *base;
	uint64_t len;
	uint32_t chunk, nchunks;
	int owner_fd;		/* the ring set that registered it, -1 */
	uint64_t *pool;		/* free chunk addresses */
	uint32_t npool;
	void *user;		/* what the program's allocator gave, or NULL */
	int failed;		/* -errno: it cannot be had in this process */
	const char *why;
	char whybuf[160];
} umem = { .owner_fd = -1 };

/* The program's allocator for the UMEM (CMSG_VMA_IOCTL_USER_ALLOC). */
static void *(*user_alloc)(size_t);
static void (*user_free)(void *);

char *vrs_umem_base VMAK_HIDDEN;
const struct vfd_ops *vrs_fd_ops VMAK_HIDDEN;
uint32_t vrs_umem_chunk VMAK_HIDDEN;
int (*vrs_umem_hook)(uint32_t nchunks) VMAK_HIDDEN;

void vrs_recycle_locked(struct vringset *r, uint64_t addr)
{
	uint32_t idx;

	addr &= ~(uint64_t)(umem.chunk - 1);
	/* The FILL ring has room for every chunk the ring set owns. */
	if (vmak_ring_reserve(r->rs.fill, 1, &idx)) {
		*vmak_ring_fill_addr(r->rs.fill, idx) = addr;
		vmak_ring_submit(r->rs.fill, 1);
	}
}

static uint32_t dev_mtu(int ifindex)
{
	struct ifreq ifr;
	int s = vmak_sys_socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t mtu = 1500;

	memset(&ifr, 0, sizeof(ifr));
	if (s >= 0 && if_indextoname((unsigned int)ifindex, ifr.ifr_name) &&
	    !vmak_sys_ioctl(s, SIOCGIFMTU, (long)&ifr))
		mtu = (uint32_t)ifr.ifr_mtu;
	if (s >= 0)
		vmak_sys_close(s);
	return mtu;
}

static void pool_reset(void)
{
	uint32_t i;

	for (i = 0; i < umem.nchunks; i++)
		umem.pool[i] = (uint64_t)(umem.nchunks - 1 - i) * umem.chunk;
	umem.npool = umem.nchunks;
}

static int umem_fail(int err, const char *why)
{
	umem.failed = err;
	umem.why = why;
	return err;
}

/*
 * The UMEM, sized to what RLIMIT_MEMLOCK leaves room for (the rings are
 * charged too), at least 128 chunks. Not copied into children (fork()
 * would have to copy the pinned pages at once, and the child never reads
 * them).
 */
/* The process's first UDP socket: the library has started (libvma's). */
static bool started;

int vrs_user_alloc(void *(*alloc)(size_t), void (*release)(void *))
{
	int err = 0;

	pthread_mutex_lock(&rings_lock);
	if (started || umem.base || umem.failed)
		err = -EINVAL;	/* too late: the library runs, or the UMEM */
	else
		user_alloc = alloc, user_free = release;
	pthread_mutex_unlock(&rings_lock);
	return err;
}

/*
 * The UMEM's memory: the program's allocator's if it gave one (the
 * block aligned to a page inside a page more, so that MADV_DONTFORK
 * takes only its own pages), else an anonymous mapping.
 */
static void *umem_map(uint64_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (!user_alloc) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	umem.user = user_alloc(len + page);
	if (!umem.user) {
		errno = ENOMEM;
		vlog(VLOG_WARNING, "the program's allocator (CMSG_VMA_IOCTL_USER_ALLOC) gave no memory for the UMEM (%llu bytes)",
		     (unsigned long long)(len + page));
		return NULL;
	}
	return (void *)(((uintptr_t)umem.user + page - 1) & ~(page - 1));
}

static void umem_unmap(void)
{
	if (umem.user)
		user_free(umem.user);
	else
		munmap(umem.base, umem.len);
	umem.user = NULL;
	umem.base = NULL;
}

static int umem_setup(void)
{
	uint64_t len = vconf.umem_size, rings_bytes = 256 << 10;
	struct rlimit rl;

	if (umem.failed)
		return umem.failed;
	if (umem.base)
		return 0;
	umem.chunk = vconf.chunk_size;
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < len + rings_bytes) {
		len = rl.rlim_cur > rings_bytes ? rl.rlim_cur - rings_bytes : 0;
		len &= ~((uint64_t)umem.chunk * 64 - 1);
		if (len < 128ULL * umem.chunk) {
			snprintf(umem.whybuf, sizeof(umem.whybuf),
				 "RLIMIT_MEMLOCK is %llu bytes: too small for the smallest UMEM (%llu bytes and the rings; raise it with ulimit -l)",
				 (unsigned long long)rl.rlim_cur,
				 128ULL * umem.chunk);
			return umem_fail(-ENOBUFS, umem.whybuf);
		}
		vlog(VLOG_INFO, "UMEM cut to %llu bytes to fit RLIMIT_MEMLOCK (%llu)",
		     (unsigned long long)len, (unsigned long long)rl.rlim_cur);
	}
	umem.base = umem_map(len);
	if (!umem.base)
		return -errno;
	madvise(umem.base, len, MADV_DONTFORK);
	umem.len = len;
	umem.nchunks = (uint32_t)(len / umem.chunk);
	umem.pool = malloc(sizeof(*umem.pool) * umem.nchunks);
	if (!umem.pool) {
		umem_unmap();
		return -ENOMEM;
	}
	pool_reset();
	vrs_umem_base = umem.base;
	vrs_umem_chunk = umem.chunk;
	if (vrs_umem_hook && vrs_umem_hook(umem.nchunks)) {
		free(umem.pool);
		umem_unmap();
		vrs_umem_base = NULL;
		return -ENOMEM;
	}
	return 0;
}

void vrs_started(void)
{
	if (__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&rings_lock);
	/* the program's allocator is asked now, as libvma asks it at start */
	if (!started && user_alloc && !umem.base && !umem.failed)
		umem_setup();
	__atomic_store_n(&started, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&rings_lock);
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = VMAK_RING_MIN;

	while (p < n)
		p <<= 1;
	return p;
}

static void config(struct vmak_ringset_config *cfg, int ifindex, uint32_t take)
{
	vmak_ringset_config_default(cfg);
	cfg->ifindex = (unsigned int)ifindex;
	cfg->bind_flags = VMAK_BIND_PASS_ON_DROP |
			  (vconf.rx_timestamp ? VMAK_BIND_RX_TIMESTAMP : 0);
	cfg->rx_size = vconf.rx_ring > take ? vconf.rx_ring : pow2_at_least(take);
	cfg->fill_size = pow2_at_least(take);
	cfg->tx_size = VRS_TX;
	cfg->comp_size = VRS_TX;
	cfg->chunk_size = umem.chunk;
	cfg->umem_len = umem.len;
	if (umem.owner_fd < 0)
		cfg->umem = umem.base;
	else
		cfg->shared_umem_fd = umem.owner_fd;
}

/*
 * The module charges the UMEM and the rings to the user's locked memory,
 * summed over all of the user's processes: a second program of the same
 * user may find less room. Halve until it fits (first ring set only).
 */
static int open_fitting(struct vringset *r, uint32_t *take)
{
	struct vmak_ringset_config cfg;
	int err;

	config(&cfg, r->ifindex, *take);
	err = vmak_ringset_open(&r->rs, &cfg);
	while (err == -ENOBUFS && umem.owner_fd < 0 && umem.nchunks / 2 >= 128) {
		umem.len /= 2;
		umem.nchunks /= 2;
		pool_reset();
		if (*take > umem.npool / 2)
			*take = umem.npool / 2 >= 64 ? umem.npool / 2 : umem.npool;
		config(&cfg, r->ifindex, *take);
		vlog(VLOG_INFO, "UMEM cut to %llu bytes: the user's locked memory is near RLIMIT_MEMLOCK",
		     (unsigned long long)umem.len);
		err = vmak_ringset_open(&r->rs, &cfg);
	}
	if (err == -ENOENT || err == -EAFNOSUPPORT)	/* module gone */
		return umem_fail(-ENOBUFS, "the vmak module is not loaded");
	if (err == -ENOBUFS)
		umem.why = "the module refused the UMEM: this user's locked memory would pass RLIMIT_MEMLOCK (ulimit -l)";
	return err;
}

/*
 * The ring fd the program gets: an epoll set holding r's fd (and later
 * its sockets' kernel sockets), marked internal with r as its object; r's
 * own fd, so marked, without a set.
 */
static int ring_fd_open(struct vringset *r)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = vmak_sys_epoll_create1(EPOLL_CLOEXEC);

	r->hdr.ops = vrs_fd_ops;
	r->hdr.refs = 1;	/* the slot's, for good */
	if (fd >= 0 && vmak_sys_epoll_ctl(fd, EPOLL_CTL_ADD, r->rs.fd, &ev)) {
		vmak_sys_close(fd);
		fd = -1;
	}
	if (fd >= 0)
		return vrs_fd_ops ? vfd_adopt_object(fd, &r->hdr) : vfd_adopt(fd);
	vlog_once(VLOG_WARNING, "no epoll set for a ring fd (%s): a program asleep on one wakes only for what its ring brings",
		  strerror(errno));
	if (vrs_fd_ops) {	/* the ring's own fd, with its object */
		vfd_unmark_internal(r->rs.fd);
		r->rs.fd = vfd_adopt_object(r->rs.fd, &r->hdr);
	}
	return r->rs.fd;
}

static void ring_fd_close(struct vringset *r)
{
	if (r->xfd != r->rs.fd)
		vfd_close_internal(r->xfd);
	else
		vfd_unmark_internal(r->xfd);
}

void vrs_watch(struct vringset *r, int fd, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN };

	/* VMA_RX_UDP_POLL_OS_RATIO=0: the ring form never reads them */
	if (r->xfd == r->rs.fd || !vconf.os_poll_ratio || fd < 0)
		return;
	vmak_sys_epoll_ctl(r->xfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev);
}

static struct vringset *ring_open(int ifindex, uint64_t key, int *err)
{
	struct vringset *r;
	uint32_t take, idx, i;

	*err = umem_setup();
	if (*err)
		return NULL;
	take = vconf.rx_chunks < umem.npool ? vconf.rx_chunks : umem.npool;
	if (take < 32) {
		snprintf(umem.whybuf, sizeof(umem.whybuf),
			 "the UMEM's %u chunks are all given to rings (raise VMAK_UMEM_SIZE)",
			 umem.nchunks);
		umem.why = umem.whybuf;
		*err = -ENOBUFS;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->txlock, NULL);
	r->ifindex = ifindex;
	r->key = key;
	*err = open_fitting(r, &take);
	if (*err) {
		free(r);
		return NULL;
	}
	r->rs.fd = vfd_adopt(r->rs.fd);
	r->xfd = ring_fd_open(r);
	if (umem.owner_fd < 0)
		umem.owner_fd = r->rs.fd;
	if (!vmak_ring_reserve(r->rs.fill, take, &idx)) {
		ring_fd_close(r);
		vfd_unmark_internal(r->rs.fd);
		vmak_ringset_close(&r->rs);
		/*
		 * Not freed: its fd's slot carried it, and a lookup of that
		 * number may hold it still (fdtab.c: objects stay objects)
		 */
		*err = -ENOBUFS;
		return NULL;
	}
	for (i = 0; i < take; i++)
		*vmak_ring_fill_addr(r->rs.fill, idx + i) = umem.pool[--umem.npool];
	vmak_ring_submit(r->rs.fill, take);
	r->chunks = take;
	/* TX frames: a few chunks of their own, if the pool has them */
	r->txchunks = umem.npool >= 2 * VRS_TX_CHUNKS ? VRS_TX_CHUNKS :
		      umem.npool / 2;
	r->txfree = malloc(sizeof(*r->txfree) * (r->txchunks ? r->txchunks : 1));
	if (!r->txfree)
		r->txchunks = 0;
	for (i = 0; i < r->txchunks; i++)
		r->txfree[r->ntxfree++] = umem.pool[--umem.npool];
	r->mtu = dev_mtu(ifindex);
	r->spec_dst = vaddr_device_v4(ifindex);
	return r;
}

struct vringset *vrs_get(int ifindex, uint64_t key, int *err, const char **why)
{
	struct vringset *r;

	*err = 0;
	*why = NULL;
	pthread_mutex_lock(&rings_lock);
	for (r = rings; r; r = r->next)
		if (r->ifindex == ifindex && r->key == key)
			break;
	if (!r) {
		r = ring_open(ifindex, key, err);
		if (r) {
			r->refs = 1;		/* the list's */
			r->next = rings;
			/* vrs_each() walks it without the lock */
			__atomic_store_n(&rings, r, __ATOMIC_RELEASE);
		} else if (*err == -ENOBUFS) {
			*why = umem.why;
		}
	}
	if (r)
		r->refs++;
	pthread_mutex_unlock(&rings_lock);
	return r;
}

void vrs_each(void (*fn)(struct vringset *r))
{
	struct vringset *r;

	/*
	 * No lock: the list only grows at its head, each ring set complete
	 * before it is published, and ring sets live as long as the process
	 * (a fork child's go while it has one thread).
	 */
	for (r = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); r; r = r->next)
		fn(r);
}

void vrs_put(struct vringset *r)
{
	pthread_mutex_lock(&rings_lock);
	r->refs--;
	pthread_mutex_unlock(&rings_lock);
}

void vrs_atfork_prepare(void)
{
	pthread_mutex_lock(&rings_lock);
}

void vrs_atfork_parent(void)
{
	pthread_mutex_unlock(&rings_lock);
}

void vrs_atfork_child(void)
{
	struct vringset *r, *n;

	for (r = rings; r; r = n) {
		n = r->next;
		ring_fd_close(r);
		vfd_unmark_internal(r->rs.fd);
		/* the UMEM is not mapped here (MADV_DONTFORK) */
		r->rs.umem_owned = 0;
		vmak_ringset_close(&r->rs);
		free(r->tab);
		free(r->txfree);
		free(r);
	}
	rings = NULL;
	pthread_mutex_init(&rings_lock, NULL);
	free(umem.pool);
	memset(&umem, 0, sizeof(umem));
	umem.owner_fd = -1;
	vrs_umem_base = NULL;
	vrs_umem_chunk = 0;
}
