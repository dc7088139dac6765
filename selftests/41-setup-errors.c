// SPDX-License-Identifier: GPL-2.0
/*
 * Every malformed setsockopt, getsockopt, mmap and bind is refused with
 * the documented errno; privileges and RLIMIT_MEMLOCK are enforced.
 */
#include "harness.h"
#include "common.h"

#define UMEM_LEN (256 * 2048)

FIXTURE(setup)
{
	int fd;
	void *umem;
	struct vnet net;
};

FIXTURE_SETUP(setup)
{
	int fam;

	FAMILY_OR_SKIP(fam);
	/* Sockets belong to the netns they are created in: b's. */
	ASSERT_EQ(0, vnet_setup(&self->net, 2));
	self->fd = socket(fam, SOCK_RAW, 0);
	ASSERT_GE(self->fd, 0);
	self->umem = mmap(NULL, UMEM_LEN, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->umem != MAP_FAILED);
}

FIXTURE_TEARDOWN(setup)
{
	close(self->fd);
	munmap(self->umem, UMEM_LEN);
	vnet_teardown(&self->net);
}

static int reg_umem(int fd, uint64_t addr, uint64_t len, uint32_t chunk,
		    uint32_t headroom)
{
	struct vmak_umem_reg r = {
		.addr = addr, .len = len, .chunk_size = chunk, .headroom = headroom,
	};

	return setsockopt(fd, SOL_VMAK, VMAK_UMEM_REG, &r, sizeof(r));
}

static int ring(int fd, int opt, uint32_t n)
{
	return setsockopt(fd, SOL_VMAK, opt, &n, sizeof(n));
}

static int do_bind(int fd, int ifindex, uint32_t queue, uint16_t flags)
{
	struct sockaddr_vmak sa = {
		.svmak_family = (uint16_t)vmak_family(),
		.svmak_flags = flags,
		.svmak_ifindex = (uint32_t)ifindex,
		.svmak_queue_id = queue,
	};

	return bind(fd, (struct sockaddr *)&sa, sizeof(sa));
}

/* UMEM, RX and FILL rings: ready to bind. */
static int prepare(int fd, void *umem)
{
	return reg_umem(fd, (uintptr_t)umem, UMEM_LEN, 2048, 0) ||
	       ring(fd, VMAK_RX_RING, 64) || ring(fd, VMAK_FILL_RING, 64);
}

TEST_F(setup, umem_reg_rejects_bad_geometry)
{
	uintptr_t a = (uintptr_t)self->umem;
	struct vmak_umem_reg r = { .addr = a, .len = UMEM_LEN, .chunk_size = 2048 };

	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, a + 1, UMEM_LEN - 4096, 2048, 0));
	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, a, 0, 2048, 0));
	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, a, 4096 + 100, 2048, 0));
	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, a, 3 * 4096, 8192, 0));
	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, a, UMEM_LEN, 3000, 0));
	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, a, UMEM_LEN, 1024, 0));
	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, a, UMEM_LEN, 131072, 0));
	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, a, UMEM_LEN, 2048, 1025));
	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, ~0ULL & ~4095ULL, UMEM_LEN, 2048, 0));
	EXPECT_ERRNO(EINVAL, reg_umem(self->fd, a, 1ULL << 40, 2048, 0));
	r.flags = 1;
	EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, VMAK_UMEM_REG, &r, sizeof(r)));
	r.flags = 0;
	r.pad = 1;
	EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, VMAK_UMEM_REG, &r, sizeof(r)));
	r.pad = 0;
	EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, VMAK_UMEM_REG, &r, sizeof(r) - 1));
	EXPECT_ERRNO(EFAULT, setsockopt(self->fd, SOL_VMAK, VMAK_UMEM_REG, (void *)8, sizeof(r)));
}

TEST_F(setup, umem_reg_longer_struct_must_be_zero_padded)
{
	struct { struct vmak_umem_reg r; uint64_t more; } big = {
		.r = { .addr = (uintptr_t)self->umem, .len = UMEM_LEN, .chunk_size = 2048 },
		.more = 1,
	};

	EXPECT_ERRNO(E2BIG, setsockopt(self->fd, SOL_VMAK, VMAK_UMEM_REG, &big, sizeof(big)));
	big.more = 0;
	EXPECT_EQ(0, setsockopt(self->fd, SOL_VMAK, VMAK_UMEM_REG, &big, sizeof(big)));
}

TEST_F(setup, umem_of_unmapped_memory)
{
	ASSERT_EQ(0, munmap(self->umem, UMEM_LEN));
	EXPECT_ERRNO(EFAULT, reg_umem(self->fd, (uintptr_t)self->umem, UMEM_LEN, 2048, 0));
	self->umem = mmap(NULL, UMEM_LEN, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

TEST_F(setup, umem_twice_is_busy)
{
	ASSERT_EQ(0, reg_umem(self->fd, (uintptr_t)self->umem, UMEM_LEN, 2048, 0));
	EXPECT_ERRNO(EBUSY, reg_umem(self->fd, (uintptr_t)self->umem, UMEM_LEN, 2048, 0));
}

TEST_F(setup, ring_sizes)
{
	static const int opts[] = { VMAK_RX_RING, VMAK_TX_RING, VMAK_FILL_RING,
				    VMAK_COMPLETION_RING };
	uint16_t small = 64;

	for (int i = 0; i < 4; i++) {
		EXPECT_ERRNO(EINVAL, ring(self->fd, opts[i], 0));
		EXPECT_ERRNO(EINVAL, ring(self->fd, opts[i], 4));
		EXPECT_ERRNO(EINVAL, ring(self->fd, opts[i], 100));
		EXPECT_ERRNO(EINVAL, ring(self->fd, opts[i], 1U << 21));
		EXPECT_ERRNO(EINVAL, ring(self->fd, opts[i], ~0U));
		EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, opts[i], &small, sizeof(small)));
		EXPECT_EQ(0, ring(self->fd, opts[i], 64));
		EXPECT_ERRNO(EBUSY, ring(self->fd, opts[i], 64));
	}
}

TEST_F(setup, unknown_options)
{
	uint32_t v = 64;
	socklen_t len = sizeof(v);

	EXPECT_ERRNO(ENOPROTOOPT, setsockopt(self->fd, SOL_VMAK, 999, &v, sizeof(v)));
	EXPECT_ERRNO(ENOPROTOOPT, setsockopt(self->fd, SOL_VMAK, VMAK_MMAP_OFFSETS, &v, sizeof(v)));
	EXPECT_ERRNO(ENOPROTOOPT, setsockopt(self->fd, SOL_IP, VMAK_RX_RING, &v, sizeof(v)));
	EXPECT_ERRNO(ENOPROTOOPT, getsockopt(self->fd, SOL_VMAK, 999, &v, &len));
	EXPECT_ERRNO(ENOPROTOOPT, getsockopt(self->fd, SOL_VMAK, VMAK_RX_RING, &v, &len));
}

TEST_F(setup, getsockopt_lengths)
{
	struct vmak_mmap_offsets off;
	struct vmak_statistics st;
	struct vmak_ring_info info;
	socklen_t len;
	int neg = -1;

	len = sizeof(off) - 1;
	EXPECT_ERRNO(EINVAL, getsockopt(self->fd, SOL_VMAK, VMAK_MMAP_OFFSETS, &off, &len));
	len = sizeof(off);
	EXPECT_EQ(0, getsockopt(self->fd, SOL_VMAK, VMAK_MMAP_OFFSETS, &off, &len));
	EXPECT_EQ(sizeof(off), len);
	EXPECT_GE(off.rx.desc, off.rx.flags + 4);
	EXPECT_NE(off.rx.producer, off.rx.consumer);
	len = 4;
	EXPECT_ERRNO(EINVAL, getsockopt(self->fd, SOL_VMAK, VMAK_STATISTICS, &st, &len));
	len = 12;	/* an old binary: whole counters only */
	EXPECT_EQ(0, getsockopt(self->fd, SOL_VMAK, VMAK_STATISTICS, &st, &len));
	EXPECT_EQ(8, len);
	len = sizeof(info) - 1;
	EXPECT_ERRNO(EINVAL, getsockopt(self->fd, SOL_VMAK, VMAK_RING_INFO, &info, &len));
	len = sizeof(info);
	EXPECT_EQ(0, getsockopt(self->fd, SOL_VMAK, VMAK_RING_INFO, &info, &len));
	EXPECT_EQ(VMAK_STATE_READY, info.state);
	EXPECT_ERRNO(EINVAL, syscall(SYS_getsockopt, self->fd, SOL_VMAK,
				     VMAK_STATISTICS, &st, &neg));
	len = sizeof(st);
	EXPECT_ERRNO(EFAULT, getsockopt(self->fd, SOL_VMAK, VMAK_STATISTICS, (void *)8, &len));
}

TEST_F(setup, mmap_errors)
{
	long pg = sysconf(_SC_PAGESIZE);

	/* No ring yet. */
	EXPECT_TRUE(mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
			 VMAK_PGOFF_RX_RING) == MAP_FAILED);
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, ring(self->fd, VMAK_RX_RING, 64));
	/* An offset that names no ring. */
	EXPECT_TRUE(mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
			 pg) == MAP_FAILED);
	EXPECT_EQ(EINVAL, errno);
	/* Larger than the ring. */
	EXPECT_TRUE(mmap(NULL, 64 * pg, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, VMAK_PGOFF_RX_RING) == MAP_FAILED);
	EXPECT_EQ(EINVAL, errno);
	/* The ring itself maps. */
	void *m = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		       VMAK_PGOFF_RX_RING);
	EXPECT_TRUE(m != MAP_FAILED);
	munmap(m, pg);
}

TEST_F(setup, bind_errors)
{
	struct sockaddr_vmak sa = { .svmak_family = (uint16_t)vmak_family(),
				    .svmak_ifindex = 1 };

	/* Nothing set up yet. */
	EXPECT_ERRNO(EINVAL, do_bind(self->fd, self->net.ifindex_b, 0, 0));
	ASSERT_EQ(0, reg_umem(self->fd, (uintptr_t)self->umem, UMEM_LEN, 2048, 0));
	EXPECT_ERRNO(EINVAL, do_bind(self->fd, self->net.ifindex_b, 0, 0));
	ASSERT_EQ(0, ring(self->fd, VMAK_RX_RING, 64));
	/* RX without FILL. */
	EXPECT_ERRNO(EINVAL, do_bind(self->fd, self->net.ifindex_b, 0, 0));
	ASSERT_EQ(0, ring(self->fd, VMAK_FILL_RING, 64));
	ASSERT_EQ(0, ring(self->fd, VMAK_TX_RING, 64));
	/* TX without COMPLETION. */
	EXPECT_ERRNO(EINVAL, do_bind(self->fd, self->net.ifindex_b, 0, 0));
	ASSERT_EQ(0, ring(self->fd, VMAK_COMPLETION_RING, 64));

	EXPECT_ERRNO(EINVAL, bind(self->fd, (struct sockaddr *)&sa, sizeof(sa) - 1));
	sa.svmak_family = AF_INET;
	EXPECT_ERRNO(EINVAL, bind(self->fd, (struct sockaddr *)&sa, sizeof(sa)));
	EXPECT_ERRNO(EINVAL, do_bind(self->fd, self->net.ifindex_b, 0, 0x100));
	EXPECT_ERRNO(ENODEV, do_bind(self->fd, 99999, 0, 0));
	EXPECT_ERRNO(EINVAL, do_bind(self->fd, self->net.ifindex_b, 2, 0));
	/* Shared UMEM with our own UMEM set, or with a non-vmak fd. */
	EXPECT_ERRNO(EINVAL, do_bind(self->fd, self->net.ifindex_b, 0,
				     VMAK_BIND_SHARED_UMEM));
	EXPECT_EQ(0, do_bind(self->fd, self->net.ifindex_b, 1, 0));
	EXPECT_ERRNO(EBUSY, do_bind(self->fd, self->net.ifindex_b, 1, 0));
	/* Setup after bind. */
	EXPECT_ERRNO(EBUSY, reg_umem(self->fd, (uintptr_t)self->umem, UMEM_LEN, 2048, 0));
	EXPECT_ERRNO(EBUSY, ring(self->fd, VMAK_RX_RING, 64));

	struct vmak_ring_info info;
	socklen_t len = sizeof(info);

	ASSERT_EQ(0, getsockopt(self->fd, SOL_VMAK, VMAK_RING_INFO, &info, &len));
	EXPECT_EQ(VMAK_STATE_BOUND, info.state);
	EXPECT_EQ((uint32_t)self->net.ifindex_b, info.ifindex);
	EXPECT_EQ(1, info.queue_id);
}

TEST_F(setup, bind_shared_umem_errors)
{
	int fam = vmak_family(), other, pipefd[2];
	struct sockaddr_vmak sa = { .svmak_family = (uint16_t)fam,
				    .svmak_flags = VMAK_BIND_SHARED_UMEM };

	other = socket(fam, SOCK_RAW, 0);
	ASSERT_GE(other, 0);
	ASSERT_EQ(0, ring(other, VMAK_RX_RING, 64));
	ASSERT_EQ(0, ring(other, VMAK_FILL_RING, 64));
	sa.svmak_ifindex = (uint32_t)self->net.ifindex_b;
	ASSERT_EQ(0, pipe(pipefd));
	sa.svmak_shared_umem_fd = (uint32_t)pipefd[0];
	EXPECT_ERRNO(ENOTSOCK, bind(other, (struct sockaddr *)&sa, sizeof(sa)));
	sa.svmak_shared_umem_fd = 9999;
	EXPECT_ERRNO(EBADF, bind(other, (struct sockaddr *)&sa, sizeof(sa)));
	/* A vmak socket without a UMEM, and the socket itself. */
	sa.svmak_shared_umem_fd = (uint32_t)self->fd;
	EXPECT_ERRNO(EBADF, bind(other, (struct sockaddr *)&sa, sizeof(sa)));
	sa.svmak_shared_umem_fd = (uint32_t)other;
	EXPECT_ERRNO(EBADF, bind(other, (struct sockaddr *)&sa, sizeof(sa)));
	/* A UDP socket. */
	int u = socket(AF_INET, SOCK_DGRAM, 0);

	sa.svmak_shared_umem_fd = (uint32_t)u;
	EXPECT_ERRNO(EBADF, bind(other, (struct sockaddr *)&sa, sizeof(sa)));
	/* Without the flag the fd must be 0. */
	sa.svmak_flags = 0;
	EXPECT_ERRNO(EINVAL, bind(other, (struct sockaddr *)&sa, sizeof(sa)));
	close(u);
	close(other);
	close(pipefd[0]);
	close(pipefd[1]);
}

static int rule(int fd, uint32_t kind, int sfd, uint32_t cookie, uint16_t af,
		uint8_t proto, uint16_t dport, const char *dst)
{
	struct vmak_rule r = { .kind = kind, .fd = sfd, .cookie = cookie,
			       .af = af, .proto = proto, .dst_port = htons(dport) };

	if (dst)
		inet_pton(af, dst, r.dst_addr);
	return setsockopt(fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r));
}

TEST_F(setup, rule_errors)
{
	struct vmak_rule r = { .kind = VMAK_RULE_RAW, .af = AF_INET,
			       .proto = IPPROTO_UDP, .dst_port = htons(1) };
	int udp, tcp, unbound, pipefd[2];

	udp = udp_bound(AF_INET, ADDR_B, 5000);
	ASSERT_GE(udp, 0);
	/* Before bind. */
	EXPECT_ERRNO(EINVAL, rule(self->fd, VMAK_RULE_SOCKET, udp, 1, 0, 0, 0, NULL));
	EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, VMAK_RULE_DEL, &r.cookie, 4));
	ASSERT_EQ(0, prepare(self->fd, self->umem));
	ASSERT_EQ(0, do_bind(self->fd, self->net.ifindex_b, VMAK_QUEUE_ANY, 0));

	EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r) - 1));
	EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, VMAK_RULE_DEL, &r, 2));
	EXPECT_ERRNO(EINVAL, rule(self->fd, 0, udp, 1, 0, 0, 0, NULL));
	EXPECT_ERRNO(EINVAL, rule(self->fd, 3, udp, 1, 0, 0, 0, NULL));
	r.flags = 1;
	EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r)));
	r.flags = 0;
	r.pad = 1;
	EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r)));
	/* Raw rules: family, protocol, port, stray bytes. */
	EXPECT_ERRNO(EAFNOSUPPORT, rule(self->fd, VMAK_RULE_RAW, 0, 1, 99, IPPROTO_UDP, 1, NULL));
	EXPECT_ERRNO(EPROTONOSUPPORT, rule(self->fd, VMAK_RULE_RAW, 0, 1, AF_INET, IPPROTO_TCP, 1, NULL));
	EXPECT_ERRNO(EINVAL, rule(self->fd, VMAK_RULE_RAW, 0, 1, AF_INET, IPPROTO_UDP, 0, NULL));
	EXPECT_ERRNO(EINVAL, rule(self->fd, VMAK_RULE_RAW, 5, 1, AF_INET, IPPROTO_UDP, 1, NULL));
	memset(&r, 0, sizeof(r));
	r.kind = VMAK_RULE_RAW;
	r.af = AF_INET;
	r.proto = IPPROTO_UDP;
	r.dst_port = htons(1);
	r.dst_addr[9] = 1;
	EXPECT_ERRNO(EINVAL, setsockopt(self->fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r)));
	/* Socket rules: bad fds and sockets. */
	EXPECT_ERRNO(EBADF, rule(self->fd, VMAK_RULE_SOCKET, -1, 1, 0, 0, 0, NULL));
	ASSERT_EQ(0, pipe(pipefd));
	EXPECT_ERRNO(ENOTSOCK, rule(self->fd, VMAK_RULE_SOCKET, pipefd[0], 1, 0, 0, 0, NULL));
	tcp = socket(AF_INET, SOCK_STREAM, 0);
	EXPECT_ERRNO(EINVAL, rule(self->fd, VMAK_RULE_SOCKET, tcp, 1, 0, 0, 0, NULL));
	EXPECT_ERRNO(EINVAL, rule(self->fd, VMAK_RULE_SOCKET, self->fd, 1, 0, 0, 0, NULL));
	unbound = socket(AF_INET, SOCK_DGRAM, 0);
	EXPECT_ERRNO(EINVAL, rule(self->fd, VMAK_RULE_SOCKET, unbound, 1, 0, 0, 0, NULL));
	EXPECT_ERRNO(EINVAL, rule(self->fd, VMAK_RULE_SOCKET, udp, 1, 0, IPPROTO_UDP, 0, NULL));
	EXPECT_ERRNO(EINVAL, rule(self->fd, VMAK_RULE_SOCKET, udp, 1, 0, 0, 7, NULL));
	/* A group it did not join; a unicast "group". */
	EXPECT_ERRNO(EADDRNOTAVAIL, rule(self->fd, VMAK_RULE_SOCKET, udp, 1, AF_INET, 0, 0, "239.1.1.1"));
	EXPECT_ERRNO(EADDRNOTAVAIL, rule(self->fd, VMAK_RULE_SOCKET, udp, 1, AF_INET, 0, 0, ADDR_B));
	EXPECT_ERRNO(EADDRNOTAVAIL, rule(self->fd, VMAK_RULE_SOCKET, udp, 1, AF_INET6, 0, 0, "ff02::1:2"));
	/* Duplicates. */
	EXPECT_EQ(0, rule(self->fd, VMAK_RULE_SOCKET, udp, 1, 0, 0, 0, NULL));
	EXPECT_ERRNO(EEXIST, rule(self->fd, VMAK_RULE_SOCKET, udp, 1, 0, 0, 0, NULL));
	EXPECT_ERRNO(EEXIST, rule(self->fd, VMAK_RULE_SOCKET, udp, 2, 0, 0, 0, NULL));
	EXPECT_ERRNO(EEXIST, rule(self->fd, VMAK_RULE_RAW, 0, 1, AF_INET, IPPROTO_UDP, 9, ADDR_B));
	EXPECT_EQ(0, rule(self->fd, VMAK_RULE_RAW, 0, 3, AF_INET, IPPROTO_UDP, 9, ADDR_B));
	uint32_t c = 77;

	EXPECT_ERRNO(ENOENT, setsockopt(self->fd, SOL_VMAK, VMAK_RULE_DEL, &c, 4));
	c = 3;
	EXPECT_EQ(0, setsockopt(self->fd, SOL_VMAK, VMAK_RULE_DEL, &c, 4));
	EXPECT_ERRNO(ENOENT, setsockopt(self->fd, SOL_VMAK, VMAK_RULE_DEL, &c, 4));
	close(tcp);
	close(unbound);
	close(udp);
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST_F(setup, recvmsg_errors)
{
	char buf[4];

	EXPECT_ERRNO(ENXIO, recv(self->fd, buf, sizeof(buf), MSG_DONTWAIT));
	ASSERT_EQ(0, prepare(self->fd, self->umem));
	ASSERT_EQ(0, do_bind(self->fd, self->net.ifindex_b, VMAK_QUEUE_ANY, 0));
	EXPECT_EQ(0, recv(self->fd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_ERRNO(EOPNOTSUPP, recv(self->fd, buf, sizeof(buf), MSG_PEEK));
	/* Blocking with a receive timeout and nothing arriving. */
	struct timeval tv = { 0, 100000 };

	ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	EXPECT_ERRNO(EAGAIN, recv(self->fd, buf, sizeof(buf), 0));
}

/* ---- privileges ------------------------------------------------------------- */

TEST_F(setup, unprivileged_own_socket_only)
{
	int udp, reuse, foreign, one = 1;

	/* A socket of netns a. */
	ASSERT_EQ(0, ns_enter(self->net.ns_a));
	foreign = udp_bound(AF_INET, ADDR_A, 5000);
	ASSERT_GE(foreign, 0);
	ASSERT_EQ(0, ns_enter(self->net.ns_b));
	udp = udp_bound(AF_INET, ADDR_B, 5000);
	reuse = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_EQ(0, setsockopt(reuse, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(5001) };

	ASSERT_EQ(0, bind(reuse, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_EQ(0, drop_privileges());
	/* Privilege is the opener's: the ring is opened unprivileged. */
	close(self->fd);
	self->fd = socket(vmak_family(), SOCK_RAW, 0);
	ASSERT_GE(self->fd, 0);

	ASSERT_EQ(0, prepare(self->fd, self->umem));
	ASSERT_EQ(0, do_bind(self->fd, self->net.ifindex_b, VMAK_QUEUE_ANY, 0));
	EXPECT_EQ(0, rule(self->fd, VMAK_RULE_SOCKET, udp, 1, 0, 0, 0, NULL));
	EXPECT_ERRNO(EPERM, rule(self->fd, VMAK_RULE_RAW, 0, 2, AF_INET, IPPROTO_UDP, 53, NULL));
	EXPECT_ERRNO(EPERM, rule(self->fd, VMAK_RULE_SOCKET, foreign, 3, 0, 0, 0, NULL));
	/* SO_REUSEADDR lets other users share the port: not ours alone. */
	EXPECT_ERRNO(EPERM, rule(self->fd, VMAK_RULE_SOCKET, reuse, 4, 0, 0, 0, NULL));
	close(udp);
	close(reuse);
	close(foreign);
}

TEST_F(setup, rlimit_memlock_enforced)
{
	struct rlimit rl = { 64 * 1024, 64 * 1024 };
	int fam = vmak_family(), fd2;

	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	/* A user of its own: others' charges may still be on their way out. */
	ASSERT_EQ(0, drop_privileges_to(4242));
	/* 512 KiB over a 64 KiB limit. */
	EXPECT_ERRNO(ENOBUFS, reg_umem(self->fd, (uintptr_t)self->umem, UMEM_LEN, 2048, 0));
	/* 48 KiB fits; another 32 KiB does not. */
	EXPECT_EQ(0, reg_umem(self->fd, (uintptr_t)self->umem, 48 * 1024, 2048, 0));
	fd2 = socket(fam, SOCK_RAW, 0);
	ASSERT_GE(fd2, 0);
	EXPECT_ERRNO(ENOBUFS, reg_umem(fd2, (uintptr_t)self->umem + 65536, 32 * 1024, 2048, 0));
	/* The charge goes away with the socket (after a grace period). */
	close(self->fd);
	self->fd = -1;
	for (int i = 0; i < 50; i++) {
		if (!reg_umem(fd2, (uintptr_t)self->umem + 65536, 32 * 1024, 2048, 0))
			break;
		EXPECT_EQ(ENOBUFS, errno);
		usleep(20000);
	}
	struct vmak_ring_info info;
	socklen_t len = sizeof(info);

	EXPECT_ERRNO(EBUSY, reg_umem(fd2, (uintptr_t)self->umem + 65536, 32 * 1024, 2048, 0));
	EXPECT_EQ(0, getsockopt(fd2, SOL_VMAK, VMAK_RING_INFO, &info, &len));
	close(fd2);
}

TEST_HARNESS_MAIN
