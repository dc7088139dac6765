// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Ring sets: socket, UMEM, rings, mappings and bind in one call. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "linux/vmak.h"
#include "sys.h"
#include "vmak/ctl.h"
#include "vmak/ringset.h"

/* The one mapping of a ring; the set hands it out as one side's type. */
struct ring_map {
	union {
		struct vmak_ring_prod prod;
		struct vmak_ring_cons cons;
	};
};

struct ringset_priv {
	struct ring_map rx, tx, fill, comp;
};

VMAK_API void vmak_ringset_config_default(struct vmak_ringset_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sz = sizeof(*cfg);
	cfg->queue_id = VMAK_QUEUE_ANY;
	cfg->rx_size = 2048;
	cfg->fill_size = 2048;
	cfg->chunk_size = 2048;
	/* 4 MiB: with its rings (charged with the UMEM) a default ring set
	 * leaves half of Debian's default 8 MiB RLIMIT_MEMLOCK free.
	 */
	cfg->umem_len = 2048ULL * 2048;
	cfg->shared_umem_fd = -1;
}

static int set_ring_size(int fd, int opt, uint32_t n)
{
	if (!n)
		return 0;
	return vmak_sys_setsockopt(fd, SOL_VMAK, opt, &n, sizeof(n)) ? -errno : 0;
}

static int map_ring(int fd, struct ring_map *m, uint32_t n, size_t desc_size,
		    const struct vmak_ring_offset *off, uint64_t pgoff)
{
	size_t len = off->desc + (size_t)n * desc_size;
	struct vmak_ring_prod *r = &m->prod;
	void *map;

	memset(r, 0, sizeof(*r));
	if (!n)
		return 0;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		   fd, (off_t)pgoff);
	if (map == MAP_FAILED)
		return -errno;
	r->map = map;
	r->map_len = len;
	r->mask = n - 1;
	r->size = n;
	r->producer = (uint32_t *)((char *)map + off->producer);
	r->consumer = (uint32_t *)((char *)map + off->consumer);
	r->flags = (uint32_t *)((char *)map + off->flags);
	r->desc = (char *)map + off->desc;
	r->cached_prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	r->cached_cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	return 0;
}

static void unmap_ring(struct ring_map *m)
{
	if (m->prod.map)
		munmap(m->prod.map, m->prod.map_len);
	m->prod.map = NULL;
}

VMAK_API void vmak_ringset_close(struct vmak_ringset *rs)
{
	struct ringset_priv *p = rs->priv;

	if (p) {
		unmap_ring(&p->rx);
		unmap_ring(&p->tx);
		unmap_ring(&p->fill);
		unmap_ring(&p->comp);
		free(p);
	}
	if (rs->fd >= 0)
		vmak_sys_close(rs->fd);
	if (rs->umem_owned && rs->umem)
		munmap(rs->umem, rs->umem_len);
	memset(rs, 0, sizeof(*rs));
	rs->fd = -1;
}

/* The UMEM: the caller's memory or our own mapping, registered. */
static int ringset_umem(struct vmak_ringset *rs,
			const struct vmak_ringset_config *cfg)
{
	struct vmak_umem_reg reg = {
		.len = cfg->umem_len,
		.chunk_size = cfg->chunk_size,
		.headroom = cfg->headroom,
	};

	rs->umem = cfg->umem;
	if (!rs->umem) {
		rs->umem = mmap(NULL, cfg->umem_len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rs->umem == MAP_FAILED) {
			rs->umem = NULL;
			return -errno;
		}
		rs->umem_owned = 1;
	}
	rs->umem_len = cfg->umem_len;
	reg.addr = (uintptr_t)rs->umem;
	if (vmak_sys_setsockopt(rs->fd, SOL_VMAK, VMAK_UMEM_REG, &reg,
				sizeof(reg)))
		return -errno;
	return 0;
}

/* Size each ring the config asks for, then map them all. */
static int ringset_rings(struct vmak_ringset *rs, struct ringset_priv *p,
			 const struct vmak_ringset_config *cfg)
{
	struct vmak_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	int err;

	err = set_ring_size(rs->fd, VMAK_RX_RING, cfg->rx_size);
	if (!err)
		err = set_ring_size(rs->fd, VMAK_TX_RING, cfg->tx_size);
	if (!err)
		err = set_ring_size(rs->fd, VMAK_FILL_RING, cfg->fill_size);
	if (!err)
		err = set_ring_size(rs->fd, VMAK_COMPLETION_RING, cfg->comp_size);
	if (err)
		return err;

	if (vmak_sys_getsockopt(rs->fd, SOL_VMAK, VMAK_MMAP_OFFSETS, &off,
				&optlen))
		return -errno;
	err = map_ring(rs->fd, &p->rx, cfg->rx_size, sizeof(struct vmak_rx_desc),
		       &off.rx, VMAK_PGOFF_RX_RING);
	if (!err)
		err = map_ring(rs->fd, &p->tx, cfg->tx_size,
			       sizeof(struct vmak_tx_desc), &off.tx,
			       VMAK_PGOFF_TX_RING);
	if (!err)
		err = map_ring(rs->fd, &p->fill, cfg->fill_size, sizeof(uint64_t),
			       &off.fr, VMAK_PGOFF_FILL_RING);
	if (!err)
		err = map_ring(rs->fd, &p->comp, cfg->comp_size, sizeof(uint64_t),
			       &off.cr, VMAK_PGOFF_COMPLETION_RING);
	if (err)
		return err;
	rs->rx = cfg->rx_size ? &p->rx.cons : NULL;
	rs->tx = cfg->tx_size ? &p->tx.prod : NULL;
	rs->fill = cfg->fill_size ? &p->fill.prod : NULL;
	rs->comp = cfg->comp_size ? &p->comp.cons : NULL;
	return 0;
}

VMAK_API int vmak_ringset_open(struct vmak_ringset *rs,
			       const struct vmak_ringset_config *config)
{
	struct vmak_ringset_config c, *cfg = &c;
	struct sockaddr_vmak sa;
	struct ringset_priv *p;
	int fam, err;

	memset(rs, 0, sizeof(*rs));
	rs->fd = -1;
	vmak_ringset_config_default(cfg);
	if (!VMAK_SZ_IN(vmak_ringset_config, cfg, config) || cfg->reserved)
		return -EINVAL;
	fam = vmak_family();
	if (fam < 0)
		return fam;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	rs->priv = p;
	rs->fd = vmak_sys_socket(fam, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (rs->fd < 0) {
		err = -errno;
		goto err;
	}
	if (cfg->shared_umem_fd < 0) {
		err = ringset_umem(rs, cfg);
		if (err)
			goto err;
	}
	rs->chunk_size = cfg->chunk_size;
	rs->headroom = cfg->headroom;
	err = ringset_rings(rs, p, cfg);
	if (err)
		goto err;

	memset(&sa, 0, sizeof(sa));
	sa.svmak_family = (uint16_t)fam;
	sa.svmak_flags = cfg->bind_flags;
	sa.svmak_ifindex = cfg->ifindex;
	sa.svmak_queue_id = cfg->queue_id;
	if (cfg->shared_umem_fd >= 0) {
		sa.svmak_flags |= VMAK_BIND_SHARED_UMEM;
		sa.svmak_shared_umem_fd = (uint32_t)cfg->shared_umem_fd;
	}
	if (vmak_sys_bind(rs->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto err;
	}
	return 0;

err:
	vmak_ringset_close(rs);
	return err;
}

VMAK_API uint32_t vmak_ringset_fill(struct vmak_ringset *rs, uint32_t first,
				    uint32_t n)
{
	uint32_t idx, i, nchunks = (uint32_t)(rs->umem_len / rs->chunk_size);

	if (!rs->fill)
		return 0;
	if (n > rs->fill->size)
		n = rs->fill->size;
	while (n && !vmak_ring_reserve(rs->fill, n, &idx))
		n--;
	for (i = 0; i < n; i++)
		*vmak_ring_fill_addr(rs->fill, idx + i) =
			(uint64_t)((first + i) % nchunks) * rs->chunk_size;
	if (n)
		vmak_ring_submit(rs->fill, n);
	return n;
}

VMAK_API int vmak_rule_add_socket(int ring_fd, int udp_fd, uint32_t cookie)
{
	struct vmak_rule r = {
		.kind = VMAK_RULE_SOCKET,
		.fd = udp_fd,
		.cookie = cookie,
	};

	return vmak_sys_setsockopt(ring_fd, SOL_VMAK, VMAK_RULE_ADD, &r,
				   sizeof(r)) ? -errno : 0;
}

VMAK_API int vmak_rule_add_group(int ring_fd, int udp_fd,
				 const struct sockaddr *group, uint32_t cookie)
{
	struct vmak_rule r = {
		.kind = VMAK_RULE_SOCKET,
		.fd = udp_fd,
		.cookie = cookie,
	};

	if (group->sa_family == AF_INET) {
		r.af = AF_INET;
		memcpy(r.dst_addr, &((const struct sockaddr_in *)group)->sin_addr, 4);
	} else if (group->sa_family == AF_INET6) {
		r.af = AF_INET6;
		memcpy(r.dst_addr, &((const struct sockaddr_in6 *)group)->sin6_addr, 16);
	} else {
		return -EAFNOSUPPORT;
	}
	return vmak_sys_setsockopt(ring_fd, SOL_VMAK, VMAK_RULE_ADD, &r,
				   sizeof(r)) ? -errno : 0;
}

VMAK_API int vmak_rule_del(int ring_fd, uint32_t cookie)
{
	return vmak_sys_setsockopt(ring_fd, SOL_VMAK, VMAK_RULE_DEL, &cookie,
			  sizeof(cookie)) ? -errno : 0;
}

VMAK_API int vmak_statistics_get(int ring_fd, struct vmak_statistics *st,
				 size_t sz)
{
	socklen_t len = (socklen_t)sz;

	/* The kernel fills what it has and says how much: the rest reads 0. */
	memset(st, 0, sz);
	return vmak_sys_getsockopt(ring_fd, SOL_VMAK, VMAK_STATISTICS, st,
				   &len) ? -errno : 0;
}

static void direct_ring(const struct vmak_ring_prod *r, uint32_t stride,
			struct vmak_direct_ring *d)
{
	d->desc = r->desc;
	d->count = r->size;
	d->stride = stride;
	d->producer = r->producer;
	d->consumer = r->consumer;
}

VMAK_API int vmak_ringset_direct(const struct vmak_ringset *rs,
				 struct vmak_direct *d)
{
	struct ringset_priv *p = rs->priv;
	struct vmak_ring_info info;
	socklen_t len = sizeof(info);
	struct vmak_direct out;

	memset(&out, 0, sizeof(out));
	out.sz = sizeof(out);
	if (vmak_sys_getsockopt(rs->fd, SOL_VMAK, VMAK_RING_INFO, &info, &len))
		return -errno;
	if (rs->tx)
		direct_ring(&p->tx.prod, sizeof(struct vmak_tx_desc), &out.send);
	if (rs->comp)
		direct_ring(&p->comp.prod, sizeof(uint64_t), &out.send_cq);
	if (rs->fill)
		direct_ring(&p->fill.prod, sizeof(uint64_t), &out.recv);
	if (rs->rx)
		direct_ring(&p->rx.prod, sizeof(struct vmak_rx_desc), &out.recv_cq);
	out.ring_id = info.id;
	out.queue_id = info.queue_id;
	return VMAK_SZ_OUT(vmak_direct, d, &out) ? 0 : -EINVAL;
}

VMAK_API int vmak_ringset_net_header(const struct vmak_ringset *rs, int udp_fd,
				     struct vmak_net_header *nh)
{
	socklen_t len = sizeof(*nh);

	memset(nh, 0, sizeof(*nh));
	nh->fd = udp_fd;
	if (vmak_sys_getsockopt(rs->fd, SOL_VMAK, VMAK_NET_HEADER, nh, &len))
		return -errno;
	return 0;
}

VMAK_API int vmak_ringset_arm(const struct vmak_ringset *rs)
{
	uint32_t one = 1;

	if (vmak_sys_setsockopt(rs->fd, SOL_VMAK, VMAK_RX_ARM, &one,
				sizeof(one)))
		return -errno;
	return 0;
}

VMAK_API int vmak_ringset_batch(const struct vmak_ringset *rs, uint32_t count,
				uint32_t usec)
{
	struct vmak_moderation m = { .count = count, .usec = usec };

	if (vmak_sys_setsockopt(rs->fd, SOL_VMAK, VMAK_RX_BATCH, &m, sizeof(m)))
		return -errno;
	return 0;
}

VMAK_API int vmak_ringset_kick(const struct vmak_ringset *rs)
{
	/* raw: a kick never leaves a cancelled thread's locks behind */
	if (syscall(SYS_sendto, rs->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0)
		return -errno;
	return 0;
}
