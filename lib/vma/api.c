// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libvma's extra API: the struct vma_api_t that vma_get_api() asks for with
 * getsockopt(-1, SOL_SOCKET, SO_VMA_GET_API), whether the program links
 * libvmak or preloads it.
 *
 * Every entry is a function: programs call entries without looking at the
 * mask. The mask is truthful, unlike libvma's (which sets every bit): a
 * bit is set only when the call works in this process as it is (the
 * module loaded, offload on; the socketXtreme calls only with
 * VMA_SOCKETXTREME=1). A call whose bit is clear fails as libvma fails for
 * it: EOPNOTSUPP for the socketXtreme calls outside socketXtreme mode, and
 * for what vmak does not do yet (ring profiles, memory on rings, direct
 * descriptors), -1 with EOPNOTSUPP.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "api.h"
#include "rings.h"

static int fail(int err)
{
	errno = err;
	return -1;
}

/*
 * fd's object, referenced, if has says its kind takes the call; else
 * NULL. A ring fd's object is found too: the ring calls are ops of its
 * kind.
 */
#define GET(fd, op) ({							\
	bool internal_;							\
	struct vfd *f_ = vfd_get_api(fd, &internal_);			\
									\
	if (f_ && !f_->ops->op) {					\
		vfd_put(f_);						\
		f_ = NULL;						\
	}								\
	f_;								\
})

/* ---- receive callback, zero copy ---- */

static int register_recv_callback(int fd, vma_recv_callback_t cb, void *ctx)
{
	struct vfd *f = GET(fd, recv_callback);
	int rc;

	if (!f)
		return fail(EINVAL);	/* libvma: not an offloaded socket */
	rc = f->ops->recv_callback(f, fd, cb, ctx);
	vfd_put(f);
	return rc;
}

static bool is_dgram(int fd)
{
	socklen_t len = sizeof(int);
	int type = 0;

	return !vmak_sys_getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) &&
	       type == SOCK_DGRAM;
}

static int recvfrom_zcopy(int fd, void *buf, size_t len, int *flags,
			  struct sockaddr *from, socklen_t *fromlen)
{
	struct vfd *f;
	int in, rc;

	if (!flags)
		return fail(EINVAL);
	in = *flags;
	f = GET(fd, recv_zcopy);
	if (f) {
		rc = f->ops->recv_zcopy(f, fd, buf, len, flags, from, fromlen);
		vfd_put(f);
		return rc;
	}
	if (is_dgram(fd))	/* a UDP socket we leave: as libvma does */
		return (int)vmak_sys_recvfrom(fd, buf, len, in, from, fromlen);
	/* TCP, which libvma would offload: a copy, never with FORCE */
	*flags = in & ~(MSG_VMA_ZCOPY | MSG_VMA_ZCOPY_FORCE);
	if (in & MSG_VMA_ZCOPY_FORCE)
		return fail(EIO);
	return (int)vmak_sys_recvfrom(fd, buf, len, *flags, from, fromlen);
}

static int free_packets(int fd, struct vma_packet_t *pkts, size_t count)
{
	struct vfd *f = GET(fd, free_packets);
	int rc;

	if (!f)
		return fail(EINVAL);
	rc = f->ops->free_packets(f, pkts, count);
	vfd_put(f);
	return rc;
}

/* ---- rules and offload ---- */

static int add_conf_rule(const char *line)
{
	if (!line)
		return fail(EINVAL);
	vproc_init();
	return vrules_add_line(&vrules, line) ? -1 : 0;
}

static int thread_offload(int offload, pthread_t tid)
{
	return vproc_thread_offload(offload, tid) ? fail(ENOMEM) : 0;
}

static int dump_fd_stats(int fd, int level)
{
	struct vfd *f = GET(fd, dump_stats);

	if (!f)
		return 0;	/* libvma: 0 for any fd, nothing said */
	f->ops->dump_stats(f, fd, level);
	vfd_put(f);
	return 0;
}

/* ---- rings ---- */

/* In socketXtreme mode libvma gives a socket one ring, and says so. */
static int rings_said(int n)
{
	return vconf.socketxtreme && n > 1 ? 1 : n;
}

static int get_socket_rings_num(int fd)
{
	struct vfd *f = GET(fd, ring_fds);
	int n;

	if (!f)
		return 0;	/* libvma: no rings */
	n = f->ops->ring_fds(f, NULL, 0);
	vfd_put(f);
	return rings_said(n);
}

static int get_socket_rings_fds(int fd, int *fds, int n)
{
	struct vfd *f;
	int got;

	if (n <= 0 || !fds)
		return fail(EINVAL);
	f = GET(fd, ring_fds);
	if (!f)
		return 0;
	got = f->ops->ring_fds(f, fds, n);
	vfd_put(f);
	return rings_said(got < n ? got : n);
}

static int get_socket_tx_ring_fd(int fd, struct sockaddr *to, socklen_t tolen)
{
	struct vfd *f = GET(fd, tx_ring_fd);
	int rc;

	if (!f)
		return fail(EINVAL);
	rc = f->ops->tx_ring_fd(f, to, tolen);
	vfd_put(f);
	return rc;
}

/* ---- what vmak does not do yet: fails, bit clear ---- */

static int add_ring_profile(struct vma_ring_type_attr *profile,
			    vma_ring_profile_key *res)
{
	(void)profile;
	(void)res;
	return fail(EOPNOTSUPP);
}

/*
 * libvma's two calls: ptr NULL gives the size in *len, then a buffer of
 * that size gets the bytes; EINVAL for an fd it does not offload,
 * ENOTCONN unconnected, ENOBUFS for a short buffer.
 */
static int get_socket_network_header(int fd, void *ptr, uint16_t *len)
{
	struct vfd *f;
	int rc;

	if (!len)
		return fail(EINVAL);
	f = GET(fd, net_header);
	if (!f)
		return fail(EINVAL);
	rc = f->ops->net_header(f, ptr, len);
	vfd_put(f);
	return rc;
}

static int get_ring_direct_descriptors(int fd,
				       struct vma_mlx_hw_device_data *data)
{
	(void)fd;
	(void)data;
	return fail(EOPNOTSUPP);
}

static int register_memory_on_ring(int fd, void *addr, size_t len,
				   uint32_t *key)
{
	(void)fd;
	(void)addr;
	(void)len;
	(void)key;
	return fail(EOPNOTSUPP);
}

static int deregister_memory_on_ring(int fd, void *addr, size_t len)
{
	(void)fd;
	(void)addr;
	(void)len;
	return fail(EOPNOTSUPP);
}

/* The ring named by attr->ring_fd (ringfd.c); EBADF for any other fd. */
static int modify_ring(struct vma_modify_ring_attr *attr)
{
	struct vfd *f;
	int rc;

	if (!attr)
		return fail(EINVAL);
	f = GET(attr->ring_fd, modify_ring);
	if (!f)
		return fail(EBADF);
	rc = f->ops->modify_ring(f, attr);
	vfd_put(f);
	return rc;
}

/*
 * libvma's requests as control messages; it knows one,
 * CMSG_VMA_IOCTL_USER_ALLOC: the program's allocator for the library's
 * buffers (vmak's UMEM, for RX and TX alike), EINVAL once they exist, or
 * for data of another size, no function or no pool named. Other types:
 * ignored, as libvma ignores them.
 */
static int api_ioctl(void *cmsg_hdr, size_t cmsg_len)
{
	struct msghdr m = { .msg_control = cmsg_hdr,
			    .msg_controllen = cmsg_len };
	struct vma_cmsg_ioctl_user_alloc_t a;
	struct cmsghdr *c;
	int err;

	for (c = cmsg_hdr && cmsg_len >= sizeof(*c) ? CMSG_FIRSTHDR(&m) : NULL;
	     c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_type != CMSG_VMA_IOCTL_USER_ALLOC)
			continue;
		/* its whole length in the buffer given, or it is not read */
		if (c->cmsg_len != CMSG_LEN(sizeof(a)) ||
		    (char *)c + c->cmsg_len > (char *)cmsg_hdr + cmsg_len)
			return fail(EINVAL);
		memcpy(&a, CMSG_DATA(c), sizeof(a));
		if (!a.memalloc || !a.memfree ||
		    !(a.flags & (VMA_IOCTL_USER_ALLOC_FLAG_TX |
				 VMA_IOCTL_USER_ALLOC_FLAG_RX)))
			return fail(EINVAL);
		err = vrs_user_alloc(a.memalloc, a.memfree);
		if (err)
			return fail(-err);
	}
	return 0;
}

/* ---- the table ---- */

static struct vma_api_t api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void api_fill(void)
{
	bool rings = vproc_init(), xt = rings && vconf.socketxtreme;
	uint64_t m = VMA_EXTRA_API_ADD_CONF_RULE | VMA_EXTRA_API_THREAD_OFFLOAD;

	api.register_recv_callback = register_recv_callback;
	api.recvfrom_zcopy = recvfrom_zcopy;
	api.free_packets = free_packets;
	api.add_conf_rule = add_conf_rule;
	api.thread_offload = thread_offload;
	api.socketxtreme_poll = vxt_poll;
	api.get_socket_rings_num = get_socket_rings_num;
	api.get_socket_rings_fds = get_socket_rings_fds;
	api.get_socket_tx_ring_fd = get_socket_tx_ring_fd;
	api.socketxtreme_free_vma_packets = vxt_free_packets;
	api.socketxtreme_ref_vma_buff = vxt_ref_buff;
	api.socketxtreme_free_vma_buff = vxt_free_buff;
	api.dump_fd_stats = dump_fd_stats;
	api.vma_add_ring_profile = add_ring_profile;
	api.get_socket_network_header = get_socket_network_header;
	api.get_ring_direct_descriptors = get_ring_direct_descriptors;
	api.register_memory_on_ring = register_memory_on_ring;
	api.deregister_memory_on_ring = deregister_memory_on_ring;
	api.vma_modify_ring = modify_ring;
	api.ioctl = api_ioctl;
	if (rings)
		m |= VMA_EXTRA_API_REGISTER_RECV_CALLBACK |
		     VMA_EXTRA_API_RECVFROM_ZCOPY | VMA_EXTRA_API_FREE_PACKETS |
		     VMA_EXTRA_API_GET_SOCKET_RINGS_NUM |
		     VMA_EXTRA_API_GET_SOCKET_RINGS_FDS |
		     VMA_EXTRA_API_GET_SOCKET_TX_RING_FD |
		     VMA_EXTRA_API_GET_SOCKET_NETWORK_HEADER |
		     VMA_EXTRA_API_DUMP_FD_STATS | VMA_EXTRA_API_IOCTL |
		     VMA_EXTRA_API_MODIFY_RING;
	if (xt)
		m |= VMA_EXTRA_API_SOCKETXTREME_POLL |
		     VMA_EXTRA_API_SOCKETXTREME_FREE_VMA_PACKETS |
		     VMA_EXTRA_API_SOCKETXTREME_REF_VMA_BUFF |
		     VMA_EXTRA_API_SOCKETXTREME_FREE_VMA_BUFF;
	api.vma_extra_supported_mask = m;
}

struct vma_api_t *vapi_get(void)
{
	pthread_once(&api_once, api_fill);
	return &api;
}
