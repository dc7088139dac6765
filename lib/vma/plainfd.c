// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A socket of the program's that the library does not offload (TCP, say)
 * but that was given SO_VMA_USER_DATA, as libvma takes it on any of its
 * sockets: an fd object with nothing but that value, for the socketXtreme
 * completions that name the fd (xtreme.c). Every other call on the fd is
 * the C library's.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "api.h"

struct vplain {
	struct vfd hdr;
	uint64_t user_data;
};

static struct vfd_pool pool = VFD_POOL_INIT(struct vplain);

static void plain_destroy(struct vfd *f)
{
	vfd_pool_free(&pool, f);
}

static int plain_set(struct vfd *f, int fd, int level, int name,
		     const void *val, socklen_t len)
{
	if (level != SOL_SOCKET || name != SO_VMA_USER_DATA)
		return vmak_sys_setsockopt(fd, level, name, val, len);
	if (!val || len != sizeof(uint64_t)) {
		errno = EINVAL;
		return -1;
	}
	__atomic_store_n(&((struct vplain *)f)->user_data,
			 *(const uint64_t *)val, __ATOMIC_RELAXED);
	return 0;
}

static int plain_get(struct vfd *f, int fd, int level, int name, void *val,
		     socklen_t *len)
{
	uint64_t v;

	if (level != SOL_SOCKET || name != SO_VMA_USER_DATA)
		return vmak_sys_getsockopt(fd, level, name, val, len);
	if (!val || !len || *len < sizeof(v)) {
		errno = !val || !len ? EFAULT : EINVAL;
		return -1;
	}
	v = __atomic_load_n(&((struct vplain *)f)->user_data, __ATOMIC_RELAXED);
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}

static uint64_t plain_user_data(struct vfd *f, int fd)
{
	(void)fd;
	return __atomic_load_n(&((struct vplain *)f)->user_data,
			       __ATOMIC_RELAXED);
}

static const struct vfd_ops vplain_ops = {
	.kind = "plain",
	.destroy = plain_destroy,
	.setsockopt = plain_set,
	.getsockopt = plain_get,
	.user_data = plain_user_data,
};

int vplain_user_data(int fd, const void *val, socklen_t len)
{
	socklen_t tl = sizeof(int);
	struct vplain *x;
	int type;

	/* a socket's, or the kernel's error for what is not one */
	if (vmak_sys_getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl))
		return -1;
	if (!val || len != sizeof(uint64_t)) {
		errno = EINVAL;
		return -1;
	}
	x = (struct vplain *)vfd_pool_alloc(&pool);
	if (!x) {
		errno = ENOMEM;
		return -1;
	}
	x->hdr.ops = &vplain_ops;
	x->user_data = *(const uint64_t *)val;
	__atomic_store_n(&x->hdr.refs, 1, __ATOMIC_RELEASE);
	vfd_install(fd, &x->hdr);
	return 0;
}

void vplain_atfork_child(void)
{
	vfd_pool_atfork_child(&pool);
}
