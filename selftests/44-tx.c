// SPDX-License-Identifier: GPL-2.0
/*
 * Transmit: frames built on the VMAK_NET_HEADER template go out of a ring
 * in netns b and reach a UDP socket in netns a byte for byte; completions
 * come back once each, in order; copy and zero-copy; invalid, dummy and
 * spoofed descriptors; a full completion ring; the rate limit; the device
 * deleted under traffic; a process killed with frames in flight; the
 * network header against a capture of the kernel's own datagram. Each on
 * veth and, in the virtio variants, behind the VM's virtio-net pair.
 */
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <sys/wait.h>

#include "harness.h"
#include "common.h"

#define DPORT 4400		/* receiver in a */
#define SPORT 4401		/* our flow's source in b */
#define CHUNK 2048

FIXTURE(tx)
{
	struct vnet net;
	struct vmak_ringset rs;
	int udp;		/* b: bound to SPORT, connected to a:DPORT */
	int rx;			/* a: kernel receiver on DPORT */
	struct vmak_net_header nh;
};

FIXTURE_VARIANT(tx)
{
	uint16_t bind_flags;
	int zerocopy;
	bool virtio;		/* the VM's virtio-net pair instead of veth */
};

FIXTURE_VARIANT_ADD(tx, copy) { .bind_flags = VMAK_BIND_TX_COPY, .zerocopy = 0 };
FIXTURE_VARIANT_ADD(tx, zerocopy) { .bind_flags = VMAK_BIND_TX_ZEROCOPY, .zerocopy = 1 };
/* Behind a driver that takes page fragments and completes them later. */
FIXTURE_VARIANT_ADD(tx, virtio_copy)
{
	.bind_flags = VMAK_BIND_TX_COPY, .zerocopy = 0, .virtio = true,
};
FIXTURE_VARIANT_ADD(tx, virtio_zerocopy)
{
	.bind_flags = VMAK_BIND_TX_ZEROCOPY, .zerocopy = 1, .virtio = true,
};

/* A connected UDP socket in the current netns: b -> a. */
static int udp_flow(int fam, uint16_t sport)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = udp_bound(fam, fam == AF_INET ? ADDR_B : ADDR6_B, sport);

	if (fd < 0)
		return -1;
	sockaddr_of(fam == AF_INET ? ADDR_A : ADDR6_A, DPORT, &ss, &len);
	if (connect(fd, (struct sockaddr *)&ss, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The template, waiting for neighbour resolution; -errno. */
static int net_header(int ring, int udp, struct vmak_net_header *nh, int *first)
{
	socklen_t len = sizeof(*nh);

	/* Up to 9 s: three rounds of the kernel's solicitations (three,
	 * 1 s apart); a call after a failed round starts another.
	 */
	for (int i = 0; i < 300; i++) {
		memset(nh, 0, sizeof(*nh));
		nh->fd = udp;
		if (!getsockopt(ring, SOL_VMAK, VMAK_NET_HEADER, nh, &len))
			return 0;
		if (first && i == 0)
			*first = errno;
		if (errno != EAGAIN)
			return -errno;
		usleep(30000);
	}
	return -ETIMEDOUT;
}

static uint16_t csum16(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (n & 1)
		s += (uint32_t)b[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons((uint16_t)~s);
}

/* Write a frame of the template's flow with payload seq/len at addr. */
static uint32_t build_frame(struct vmak_ringset *rs, const struct vmak_net_header *nh,
			    uint64_t addr, uint32_t seq, uint32_t plen)
{
	uint8_t *f = (uint8_t *)rs->umem + addr;
	struct udphdr *uh = (struct udphdr *)(f + nh->l4_off);

	memcpy(f, nh->hdr, nh->len);
	payload_fill(f + nh->len, seq, plen);
	uh->len = htons((uint16_t)(8 + plen));
	if (nh->l4_off - nh->l3_off == 20) {
		struct iphdr *iph = (struct iphdr *)(f + nh->l3_off);

		iph->tot_len = htons((uint16_t)(20 + 8 + plen));
		iph->check = 0;
		iph->check = csum16(iph, 20);
	} else {
		struct ip6_hdr *ip6 = (struct ip6_hdr *)(f + nh->l3_off);
		uint8_t ph[40 + 8];
		uint32_t sum = 0;

		ip6->ip6_plen = htons((uint16_t)(8 + plen));
		/* UDP over IPv6 needs its checksum: pseudo-header + datagram. */
		memcpy(ph, &ip6->ip6_src, 32);
		*(uint32_t *)(ph + 32) = htonl(8 + plen);
		memset(ph + 36, 0, 3);
		ph[39] = IPPROTO_UDP;
		uh->check = 0;
		for (size_t i = 0; i < 40; i += 2)
			sum += (uint32_t)(ph[i] << 8 | ph[i + 1]);
		for (size_t i = 0; i < 8 + plen; i += 2)
			sum += (uint32_t)(((uint8_t *)uh)[i] << 8 |
					  (i + 1 < 8 + plen ? ((uint8_t *)uh)[i + 1] : 0));
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		uh->check = htons((uint16_t)~sum) ?: 0xffff;
	}
	return nh->len + plen;
}

static int tx_put(struct vmak_ringset *rs, uint64_t addr, uint32_t len,
		  uint32_t options)
{
	uint32_t idx;

	if (!vmak_ring_reserve(rs->tx, 1, &idx))
		return -1;
	vmak_ring_tx_desc(rs->tx, idx)->addr = addr;
	vmak_ring_tx_desc(rs->tx, idx)->len = len;
	vmak_ring_tx_desc(rs->tx, idx)->options = options;
	vmak_ring_submit(rs->tx, 1);
	return 0;
}

static int kick(struct vmak_ringset *rs)
{
	return (int)sendto(rs->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
}

/* Completions into out[] (up to max), waiting up to ms for want of them. */
static uint32_t cq_take(struct vmak_ringset *rs, uint64_t *out, uint32_t max,
			uint32_t want, int ms)
{
	uint32_t got = 0, idx, n;

	for (int t = 0; t <= ms; t += 10) {
		n = vmak_ring_peek(rs->comp, max - got, &idx);
		for (uint32_t i = 0; i < n; i++)
			out[got + i] = vmak_ring_comp_addr(rs->comp, idx + i);
		vmak_ring_release(rs->comp, n);
		got += n;
		if (got >= want || got == max)
			break;
		usleep(10000);
	}
	return got;
}

static void stats(int fd, struct vmak_statistics *st)
{
	socklen_t len = sizeof(*st);

	memset(st, 0, sizeof(*st));
	getsockopt(fd, SOL_VMAK, VMAK_STATISTICS, st, &len);
}

static int open_tx_ring(struct vmak_ringset *rs, int ifindex, uint16_t flags,
			uint32_t tx, uint32_t comp, uint32_t chunks)
{
	struct vmak_ringset_config cfg;

	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)ifindex;
	cfg.rx_size = cfg.fill_size = 0;
	cfg.tx_size = tx;
	cfg.comp_size = comp;
	cfg.umem_len = (uint64_t)chunks * CHUNK;
	cfg.chunk_size = CHUNK;
	cfg.bind_flags = flags;
	return vmak_ringset_open(rs, &cfg);
}

FIXTURE_SETUP(tx)
{
	int fam, first = 0;

	self->rs.fd = -1;
	self->udp = -1;
	self->rx = -1;
	FAMILY_OR_SKIP(fam);
	if (variant->virtio)
		VIO_OR_SKIP();
	ASSERT_EQ(0, vnet_setup_dev(&self->net, 1, variant->virtio));
	ASSERT_EQ(0, ns_enter(self->net.ns_a));
	self->rx = udp_bound(AF_INET, ADDR_A, DPORT);
	ASSERT_GE(self->rx, 0);
	ASSERT_EQ(0, ns_enter(self->net.ns_b));
	self->udp = udp_flow(AF_INET, SPORT);
	ASSERT_GE(self->udp, 0);
	ASSERT_EQ(0, open_tx_ring(&self->rs, self->net.ifindex_b,
				  variant->bind_flags, 256, 256, 512));
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 1));
	ASSERT_EQ(0, net_header(self->rs.fd, self->udp, &self->nh, &first));
	/* a fresh netns knows no neighbour: the first answer is EAGAIN */
	EXPECT_EQ(EAGAIN, first);
}

FIXTURE_TEARDOWN(tx)
{
	vmak_ringset_close(&self->rs);
	close(self->udp);
	close(self->rx);
	vnet_teardown(&self->net);
}

/* Receive n datagrams in a, in order, with their exact payloads. */
static int rx_check(int fd, uint32_t first, uint32_t n, const uint32_t *plen)
{
	uint8_t buf[2048];
	uint32_t seq;

	for (uint32_t i = 0; i < n; i++) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&p, 1, 3000) != 1)
			return -(int)i - 1000;
		r = recv(fd, buf, sizeof(buf), 0);
		if (r != (ssize_t)plen[i] || payload_check(buf, (uint32_t)r, &seq) ||
		    seq != first + i)
			return -(int)i - 1;
	}
	return 0;
}

static int rx_nothing(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, ms) == 0;
}

TEST_F(tx, bytes_on_the_wire_and_completions_in_order)
{
	static uint32_t plen[300];
	static uint64_t comp[300];
	struct vmak_ring_info info;
	struct vmak_statistics st;
	socklen_t ilen = sizeof(info);
	uint32_t sent = 0, done = 0, flen;

	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RING_INFO, &info, &ilen));
	EXPECT_EQ(variant->zerocopy ? VMAK_INFO_TX_ZEROCOPY : 0,
		  info.flags & VMAK_INFO_TX_ZEROCOPY);
	EXPECT_EQ(VMAK_INFO_TX_RAW, info.flags & VMAK_INFO_TX_RAW);

	/* 300 frames of 16..1458 payload bytes, in batches of up to 64 */
	while (sent < 300) {
		uint32_t batch = sent + 64 > 300 ? 300 - sent : 64;

		for (uint32_t i = 0; i < batch; i++) {
			uint32_t s = sent + i;

			plen[s] = 16 + (s * 97) % 1443;
			flen = build_frame(&self->rs, &self->nh, (uint64_t)(s % 256) * CHUNK,
					   s, plen[s]);
			ASSERT_EQ(0, tx_put(&self->rs, (uint64_t)(s % 256) * CHUNK, flen, 0));
		}
		ASSERT_EQ(0, kick(&self->rs));
		ASSERT_EQ(0, rx_check(self->rx, sent, batch, plen + sent));
		done += cq_take(&self->rs, comp + done, 300 - done, sent + batch - done, 2000);
		sent += batch;
	}
	ASSERT_EQ(300, done);
	for (uint32_t i = 0; i < 300; i++)
		ASSERT_EQ((uint64_t)(i % 256) * CHUNK, comp[i]);
	/* exactly once: nothing more comes */
	EXPECT_EQ(0, cq_take(&self->rs, comp, 300, 1, 200));
	stats(self->rs.fd, &st);
	EXPECT_EQ(300, st.tx_packets);
	EXPECT_EQ(0, st.tx_invalid);
	EXPECT_EQ(0, st.tx_error);
}

TEST_F(tx, invalid_descriptors_counted_and_completed)
{
	uint32_t good = build_frame(&self->rs, &self->nh, 0, 7, 100);
	uint32_t plen = 100;
	uint64_t comp[8];
	struct vmak_statistics st;

	ASSERT_EQ(0, tx_put(&self->rs, 512ULL * CHUNK, 200, 0));	/* outside */
	ASSERT_EQ(0, tx_put(&self->rs, CHUNK - 100, 200, 0));	/* crosses chunk */
	ASSERT_EQ(0, tx_put(&self->rs, 0, 13, 0));			/* < Ethernet */
	ASSERT_EQ(0, tx_put(&self->rs, 0, 1515, 0));		/* > MTU + 14 */
	ASSERT_EQ(0, tx_put(&self->rs, 0, good, 1U << 7));		/* options */
	ASSERT_EQ(0, tx_put(&self->rs, ~0ULL, 64, 0));		/* wraps */
	ASSERT_EQ(0, tx_put(&self->rs, 0, good, 0));		/* the good one */
	ASSERT_EQ(0, kick(&self->rs));
	ASSERT_EQ(0, rx_check(self->rx, 7, 1, &plen));
	EXPECT_TRUE(rx_nothing(self->rx, 200));
	ASSERT_EQ(7, cq_take(&self->rs, comp, 8, 7, 2000));
	EXPECT_EQ(512ULL * CHUNK, comp[0]);
	EXPECT_EQ(~0ULL, comp[5]);
	stats(self->rs.fd, &st);
	EXPECT_EQ(6, st.tx_invalid);
	EXPECT_EQ(1, st.tx_packets);
}

TEST_F(tx, dummy_sends_never_reach_the_peer)
{
	uint32_t flen = build_frame(&self->rs, &self->nh, 0, 1, 64), plen = 64;
	struct vmak_statistics st;
	uint64_t comp[16];

	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, tx_put(&self->rs, 0, flen, VMAK_TX_DUMMY));
	ASSERT_EQ(0, kick(&self->rs));
	EXPECT_TRUE(rx_nothing(self->rx, 300));
	ASSERT_EQ(10, cq_take(&self->rs, comp, 16, 10, 1000));
	ASSERT_EQ(0, tx_put(&self->rs, 0, flen, 0));
	ASSERT_EQ(0, kick(&self->rs));
	ASSERT_EQ(0, rx_check(self->rx, 1, 1, &plen));
	stats(self->rs.fd, &st);
	EXPECT_EQ(10, st.tx_dummy);
	EXPECT_EQ(1, st.tx_packets);
}

TEST_F(tx, full_completion_ring_holds_back)
{
	struct vmak_ringset small;
	struct vmak_statistics st;
	struct vmak_net_header nh;
	static uint32_t plen[20];
	uint64_t comp[32];
	uint32_t got = 0;

	/* a second ring: 64 TX entries, 8 completions */
	ASSERT_EQ(0, open_tx_ring(&small, self->net.ifindex_b, variant->bind_flags,
				  64, 8, 64));
	ASSERT_EQ(0, net_header(small.fd, self->udp, &nh, NULL));
	for (uint32_t i = 0; i < 20; i++) {
		plen[i] = 200;
		ASSERT_EQ(0, tx_put(&small, (uint64_t)i * CHUNK,
				    build_frame(&small, &nh, (uint64_t)i * CHUNK, i, 200), 0));
	}
	EXPECT_ERRNO(EAGAIN, kick(&small));
	ASSERT_EQ(0, rx_check(self->rx, 0, 8, plen));
	EXPECT_TRUE(rx_nothing(self->rx, 200));
	stats(small.fd, &st);
	EXPECT_GE(st.tx_cq_full, 1);
	EXPECT_EQ(8, st.tx_packets);
	/* drain completions and kick until all 20 went, none lost */
	for (int round = 0; round < 10 && got < 20; round++) {
		got += cq_take(&small, comp, 32, 1, 500);
		kick(&small);
	}
	got += cq_take(&small, comp, 32, 20 - got, 500);
	EXPECT_EQ(20, got);
	ASSERT_EQ(0, rx_check(self->rx, 8, 12, plen));
	vmak_ringset_close(&small);
}

TEST_F(tx, rate_limit_10_mbit)
{
	struct vmak_rate_limit rl = { .rate = 10000 }, back;
	struct vmak_statistics st0, st1;
	socklen_t len = sizeof(back);
	uint64_t comp[256];
	uint32_t flen = build_frame(&self->rs, &self->nh, 0, 0, 1000);
	double t0, t1;

	for (uint32_t c = 1; c < 256; c++)
		build_frame(&self->rs, &self->nh, (uint64_t)c * CHUNK, c, 1000);
	ASSERT_EQ(0, setsockopt(self->rs.fd, SOL_VMAK, VMAK_TX_RATE_LIMIT, &rl, sizeof(rl)));
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_VMAK, VMAK_TX_RATE_LIMIT, &back, &len));
	EXPECT_EQ(10000, back.rate);
	stats(self->rs.fd, &st0);
	t0 = mono();
	/* keep the ring full for 3 s; completions give the chunks back */
	uint32_t next = 0;
	while ((t1 = mono()) - t0 < 3.0) {
		uint32_t n = cq_take(&self->rs, comp, 256, 0, 0);

		(void)n;
		while (vmak_ring_free(self->rs.tx, 1) &&
		       !tx_put(&self->rs, (uint64_t)(next % 256) * CHUNK, flen, 0))
			next++;
		kick(&self->rs);
		usleep(2000);
	}
	stats(self->rs.fd, &st1);
	double mbit = (double)(st1.tx_bytes - st0.tx_bytes) * 8 / (t1 - t0) / 1e6;
	TH_LOG("%.2f Mbit/s over %.2f s (%llu frames)", mbit, t1 - t0,
	       (unsigned long long)(st1.tx_packets - st0.tx_packets));
	/* Under KASAN and lockdep the sender cannot keep 10 Mbit/s queued;
	 * the rate is held to 9-11 Mbit/s on the Debian kernels. */
	SKIP_ON_DEBUG_KERNEL("the rate is not measured here");
	EXPECT_GE((long)(mbit * 100), 900);
	EXPECT_LE((long)(mbit * 100), 1100);
	/* rate 0 lifts the limit */
	rl.rate = 0;
	ASSERT_EQ(0, setsockopt(self->rs.fd, SOL_VMAK, VMAK_TX_RATE_LIMIT, &rl, sizeof(rl)));
	rl.pad = 1;
	EXPECT_ERRNO(EINVAL, setsockopt(self->rs.fd, SOL_VMAK, VMAK_TX_RATE_LIMIT, &rl, sizeof(rl)));
	EXPECT_ERRNO(EINVAL, setsockopt(self->rs.fd, SOL_VMAK, VMAK_TX_RATE_LIMIT, &rl, 4));
}

TEST_F(tx, unprivileged_ring_sends_only_its_own_flow)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };
	struct vmak_ringset u;
	struct vmak_net_header nh;
	struct vmak_ring_info info;
	struct vmak_statistics st;
	socklen_t ilen = sizeof(info);
	uint32_t flen, plen = 400;
	uint64_t comp[8];
	int mine;

	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, drop_privileges());
	mine = udp_flow(AF_INET, SPORT + 1);
	ASSERT_GE(mine, 0);
	ASSERT_EQ(0, open_tx_ring(&u, self->net.ifindex_b, variant->bind_flags, 64, 64, 64));
	ASSERT_EQ(0, getsockopt(u.fd, SOL_VMAK, VMAK_RING_INFO, &info, &ilen));
	EXPECT_EQ(0, info.flags & VMAK_INFO_TX_RAW);
	ASSERT_EQ(0, vmak_rule_add_socket(u.fd, mine, 5));
	ASSERT_EQ(0, net_header(u.fd, mine, &nh, NULL));

	/* its own flow goes out */
	flen = build_frame(&u, &nh, 0, 3, plen);
	ASSERT_EQ(0, tx_put(&u, 0, flen, 0));
	ASSERT_EQ(0, kick(&u));
	ASSERT_EQ(0, rx_check(self->rx, 3, 1, &plen));

	/* spoofed source address, source port, destination port, MAC */
	build_frame(&u, &nh, CHUNK, 4, plen);
	((uint8_t *)u.umem)[CHUNK + nh.l3_off + 15] ^= 0x40;		/* saddr */
	((struct iphdr *)((uint8_t *)u.umem + CHUNK + nh.l3_off))->check = 0;
	((struct iphdr *)((uint8_t *)u.umem + CHUNK + nh.l3_off))->check =
		csum16((uint8_t *)u.umem + CHUNK + nh.l3_off, 20);
	build_frame(&u, &nh, 2 * CHUNK, 5, plen);
	((struct udphdr *)((uint8_t *)u.umem + 2 * CHUNK + nh.l4_off))->source = htons(SPORT);
	build_frame(&u, &nh, 3 * CHUNK, 6, plen);
	((struct udphdr *)((uint8_t *)u.umem + 3 * CHUNK + nh.l4_off))->dest = htons(DPORT + 1);
	build_frame(&u, &nh, 4 * CHUNK, 7, plen);
	((uint8_t *)u.umem)[4 * CHUNK + 6] ^= 0x02;			/* src MAC */
	for (int i = 1; i <= 4; i++)
		ASSERT_EQ(0, tx_put(&u, (uint64_t)i * CHUNK, flen, 0));
	ASSERT_EQ(0, kick(&u));
	EXPECT_TRUE(rx_nothing(self->rx, 300));
	EXPECT_EQ(5, cq_take(&u, comp, 8, 5, 1000));
	stats(u.fd, &st);
	EXPECT_EQ(4, st.tx_header_drop);
	EXPECT_EQ(1, st.tx_packets);

	/* and nothing once its socket is closed */
	close(mine);
	ASSERT_EQ(0, tx_put(&u, 0, flen, 0));
	ASSERT_EQ(0, kick(&u));
	EXPECT_TRUE(rx_nothing(self->rx, 300));
	stats(u.fd, &st);
	EXPECT_EQ(5, st.tx_header_drop);
	vmak_ringset_close(&u);
	regain_privileges();
}

TEST_F(tx, errors)
{
	struct vmak_net_header nh = { 0 };
	struct vmak_ringset rx_only;
	struct vmak_ringset_config cfg;
	socklen_t len = sizeof(nh);
	struct sockaddr_vmak sa = { 0 };
	int fd, unconnected, tcp;

	/* not bound */
	fd = socket(vmak_family(), SOCK_RAW, 0);
	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(ENOBUFS, sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0));
	nh.fd = self->udp;
	EXPECT_ERRNO(ENXIO, getsockopt(fd, SOL_VMAK, VMAK_NET_HEADER, &nh, &len));
	sa.svmak_family = (uint16_t)vmak_family();
	sa.svmak_ifindex = (uint32_t)self->net.ifindex_b;
	sa.svmak_flags = VMAK_BIND_TX_COPY | VMAK_BIND_TX_ZEROCOPY;
	EXPECT_ERRNO(EINVAL, bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	close(fd);

	/* an RX-only ring has nothing to send */
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)self->net.ifindex_b;
	ASSERT_EQ(0, vmak_ringset_open(&rx_only, &cfg));
	EXPECT_ERRNO(ENOBUFS, sendto(rx_only.fd, NULL, 0, MSG_DONTWAIT, NULL, 0));
	vmak_ringset_close(&rx_only);

	EXPECT_ERRNO(EOPNOTSUPP, sendto(self->rs.fd, NULL, 0, MSG_OOB, NULL, 0));
	EXPECT_EQ(0, sendto(self->rs.fd, NULL, 0, 0, NULL, 0));	/* blocking kick */

	/* network header: bad fd, not UDP, not connected, short optlen */
	nh.fd = 9999;
	EXPECT_ERRNO(EBADF, getsockopt(self->rs.fd, SOL_VMAK, VMAK_NET_HEADER, &nh, &len));
	tcp = socket(AF_INET, SOCK_STREAM, 0);
	nh.fd = tcp;
	EXPECT_ERRNO(EINVAL, getsockopt(self->rs.fd, SOL_VMAK, VMAK_NET_HEADER, &nh, &len));
	unconnected = udp_bound(AF_INET, ADDR_B, SPORT + 2);
	nh.fd = (uint32_t)unconnected;
	EXPECT_ERRNO(ENOTCONN, getsockopt(self->rs.fd, SOL_VMAK, VMAK_NET_HEADER, &nh, &len));
	len = sizeof(nh) - 1;
	nh.fd = self->udp;
	EXPECT_ERRNO(EINVAL, getsockopt(self->rs.fd, SOL_VMAK, VMAK_NET_HEADER, &nh, &len));
	close(tcp);
	close(unconnected);
}

/*
 * The template against the kernel's own datagram, captured on the peer;
 * pmtu >= 0: the socket's IP_MTU_DISCOVER (DF follows it).
 */
static void header_vs_capture(struct __test_metadata *_metadata, struct vnet *net,
			      int ring, int fam, int pmtu)
{
	struct sockaddr_ll ll = { 0 };
	struct vmak_net_header nh;
	uint8_t frame[256];
	int cap, udp, hl;
	ssize_t n;

	ASSERT_EQ(0, ns_enter(net->ns_a));
	cap = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	ASSERT_GE(cap, 0);
	ll.sll_family = AF_PACKET;
	ll.sll_protocol = htons(ETH_P_ALL);
	ll.sll_ifindex = (int)if_nametoindex(net->dev_a);
	ASSERT_EQ(0, bind(cap, (struct sockaddr *)&ll, sizeof(ll)));
	ASSERT_EQ(0, ns_enter(net->ns_b));
	udp = udp_flow(fam, SPORT + 10);
	ASSERT_GE(udp, 0);
	if (pmtu >= 0)
		ASSERT_EQ(0, setsockopt(udp, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu,
					sizeof(pmtu)));
	ASSERT_EQ(0, net_header(ring, udp, &nh, NULL));
	ASSERT_EQ(5, send(udp, "hello", 5, 0));
	for (;;) {	/* skip neighbour discovery and the like */
		struct pollfd p = { cap, POLLIN, 0 };

		ASSERT_EQ(1, poll(&p, 1, 3000));
		n = recv(cap, frame, sizeof(frame), 0);
		ASSERT_GT(n, (ssize_t)nh.len);
		if (!memcmp(frame + 12, nh.hdr + 12, 2) &&
		    frame[nh.l3_off + (fam == AF_INET ? 9 : 6)] == IPPROTO_UDP)
			break;
	}
	hl = nh.l4_off - nh.l3_off;
	EXPECT_EQ(ETH_HLEN, nh.l3_off);
	EXPECT_EQ(fam == AF_INET ? 20 : 40, hl);
	EXPECT_EQ(0, memcmp(frame, nh.hdr, ETH_HLEN));		/* MACs, type */
	if (fam == AF_INET) {
		struct iphdr *k = (struct iphdr *)(frame + ETH_HLEN);
		struct iphdr *m = (struct iphdr *)(nh.hdr + ETH_HLEN);

		EXPECT_EQ((int)k->version, (int)m->version);
		EXPECT_EQ((int)k->ihl, (int)m->ihl);
		EXPECT_EQ(k->tos, m->tos);
		EXPECT_EQ(k->ttl, m->ttl);
		EXPECT_EQ(k->frag_off, m->frag_off);
		EXPECT_EQ(k->protocol, m->protocol);
		EXPECT_EQ(k->saddr, m->saddr);
		EXPECT_EQ(k->daddr, m->daddr);
	} else {
		/* version, traffic class, next header, hop limit, addresses
		 * (the kernel may set a flow label: bytes 1-3 are skipped) */
		EXPECT_EQ(frame[ETH_HLEN] & 0xf0, nh.hdr[ETH_HLEN] & 0xf0);
		EXPECT_EQ(0, memcmp(frame + ETH_HLEN + 6, nh.hdr + ETH_HLEN + 6, 2 + 32));
	}
	EXPECT_EQ(0, memcmp(frame + nh.l4_off, nh.hdr + nh.l4_off, 4));	/* ports */
	close(udp);
	close(cap);
}

TEST_F(tx, network_header_matches_the_kernel)
{
	header_vs_capture(_metadata, &self->net, self->rs.fd, AF_INET, -1);
	header_vs_capture(_metadata, &self->net, self->rs.fd, AF_INET6, -1);
	/* DF as each IP_MTU_DISCOVER has the kernel set it */
	header_vs_capture(_metadata, &self->net, self->rs.fd, AF_INET,
			  IP_PMTUDISC_DONT);
	header_vs_capture(_metadata, &self->net, self->rs.fd, AF_INET,
			  IP_PMTUDISC_DO);
	header_vs_capture(_metadata, &self->net, self->rs.fd, AF_INET,
			  IP_PMTUDISC_PROBE);
}

TEST_F(tx, ipv6_frames_reach_the_peer)
{
	struct vmak_net_header nh;
	uint32_t plen = 300;
	int rx6, udp6;

	ASSERT_EQ(0, ns_enter(self->net.ns_a));
	rx6 = udp_bound(AF_INET6, ADDR6_A, DPORT);
	ASSERT_GE(rx6, 0);
	ASSERT_EQ(0, ns_enter(self->net.ns_b));
	udp6 = udp_flow(AF_INET6, SPORT);
	ASSERT_GE(udp6, 0);
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, udp6, 6));
	ASSERT_EQ(0, net_header(self->rs.fd, udp6, &nh, NULL));
	ASSERT_EQ(0, tx_put(&self->rs, 0, build_frame(&self->rs, &nh, 0, 9, plen), 0));
	ASSERT_EQ(0, kick(&self->rs));
	ASSERT_EQ(0, rx_check(rx6, 9, 1, &plen));
	close(udp6);
	close(rx6);
}

TEST_F(tx, direct_descriptors_drive_the_rings)
{
	struct vmak_direct d = VMAK_DIRECT_INIT;
	struct vmak_tx_desc *desc;
	uint32_t plen = 120, prod, flen;
	uint64_t comp;

	ASSERT_EQ(0, vmak_ringset_direct(&self->rs, &d));
	EXPECT_TRUE(d.send.desc == self->rs.tx->desc);
	EXPECT_EQ(256, d.send.count);
	EXPECT_EQ(16, d.send.stride);
	EXPECT_TRUE(d.send_cq.desc == self->rs.comp->desc);
	EXPECT_EQ(8, d.send_cq.stride);
	EXPECT_TRUE(d.recv.desc == NULL);
	EXPECT_TRUE(d.recv_cq.desc == NULL);
	EXPECT_NE(0, d.ring_id);
	EXPECT_EQ(VMAK_QUEUE_ANY, d.queue_id);

	/* Post one frame through the arrays and the doorbell record only. */
	flen = build_frame(&self->rs, &self->nh, 5 * CHUNK, 11, plen);
	prod = *d.send.producer;
	desc = (struct vmak_tx_desc *)((uint8_t *)d.send.desc +
				       (prod & (d.send.count - 1)) * d.send.stride);
	desc->addr = 5 * CHUNK;
	desc->len = flen;
	desc->options = 0;
	__atomic_store_n(d.send.producer, prod + 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, kick(&self->rs));
	ASSERT_EQ(0, rx_check(self->rx, 11, 1, &plen));
	for (int i = 0; i < 100 && __atomic_load_n(d.send_cq.producer, __ATOMIC_ACQUIRE) ==
			       *d.send_cq.consumer; i++)
		usleep(10000);
	ASSERT_NE(*d.send_cq.consumer, __atomic_load_n(d.send_cq.producer, __ATOMIC_ACQUIRE));
	comp = *(uint64_t *)((uint8_t *)d.send_cq.desc +
			     (*d.send_cq.consumer & (d.send_cq.count - 1)) * d.send_cq.stride);
	EXPECT_EQ(5 * CHUNK, comp);
}

/* ---- faults -------------------------------------------------------------- */

TEST_F(tx, device_deleted_mid_send)
{
	uint32_t flen = build_frame(&self->rs, &self->nh, 0, 0, 500);
	uint64_t comp[256];
	int err = 0, i;

	for (i = 0; i < 2000 && !err; i++) {
		cq_take(&self->rs, comp, 256, 0, 0);
		while (vmak_ring_free(self->rs.tx, 1) && !tx_put(&self->rs, 0, flen, 0))
			;
		if (i == 200)
			vnet_remove_b(&self->net, true);
		if (kick(&self->rs) < 0 && errno != EAGAIN)
			err = errno;
		usleep(1000);
	}
	TH_LOG("send failed after %d kicks: %s", i, strerror(err));
	EXPECT_EQ(ENETDOWN, err);
	struct pollfd p = { self->rs.fd, POLLIN, 0 };
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLERR);
}

TEST_F(tx, killed_with_frames_in_flight_leaves_no_pinned_pages)
{
	uint64_t p0 = module_pinned(), p1, p = 0;
	int pipefd[2], st, i;
	pid_t child;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	child = fork_child();
	if (!child) {
		struct vmak_rate_limit rl = { .rate = 1000 };	/* 1 Mbit/s */
		struct vmak_ringset rs;
		struct vmak_net_header nh;
		uint32_t flen;

		if (open_tx_ring(&rs, self->net.ifindex_b, variant->bind_flags,
				 256, 256, 256) ||
		    net_header(rs.fd, self->udp, &nh, NULL) ||
		    setsockopt(rs.fd, SOL_VMAK, VMAK_TX_RATE_LIMIT, &rl, sizeof(rl)))
			_exit(1);
		flen = build_frame(&rs, &nh, 0, 0, 1400);
		for (uint32_t k = 0; k < 256; k++) {
			memcpy((uint8_t *)rs.umem + k * CHUNK, rs.umem, flen);
			tx_put(&rs, (uint64_t)k * CHUNK, flen, 0);
		}
		kick(&rs);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			kick(&rs), usleep(1000);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	p1 = module_pinned();
	EXPECT_EQ(p0 + 256 * CHUNK / 4096, p1);
	usleep(200000);
	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	/* Pages are unpinned from a workqueue once the frames are done. */
	for (i = 0; i < 100; i++) {
		p = module_pinned();
		if (p == p0)
			break;
		usleep(50000);
	}
	TH_LOG("pinned pages: %llu before, %llu with the ring, %llu after",
	       (unsigned long long)p0, (unsigned long long)p1,
	       (unsigned long long)p);
	EXPECT_EQ(p0, p);
}

TEST_HARNESS_MAIN
