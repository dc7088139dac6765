// SPDX-License-Identifier: GPL-2.0
/*
 * The receive path between two netns over veth: steering, payloads,
 * cookies, timestamps, queues, GSO, multicast, counters, device removal.
 */
#include <sys/epoll.h>
#include <sys/ioctl.h>

#include "harness.h"
#include "common.h"

#define PORT 4000

FIXTURE(rx)
{
	struct vnet net;
	struct vmak_ringset rs;
	int udp;		/* the kernel socket whose flow is steered */
};

FIXTURE_VARIANT(rx)
{
	uint32_t ring;		/* RX and FILL entries */
	uint32_t chunk;
	uint32_t headroom;
	bool v6;
};

FIXTURE_VARIANT_ADD(rx, v4_small)
{
	.ring = 256, .chunk = 2048, .headroom = 0,
};

FIXTURE_VARIANT_ADD(rx, v4_headroom)
{
	.ring = 1024, .chunk = 4096, .headroom = 256,
};

FIXTURE_VARIANT_ADD(rx, v6)
{
	.ring = 512, .chunk = 2048, .headroom = 64, .v6 = true,
};

static int ringset_for(struct vmak_ringset *rs, int ifindex, uint32_t ring,
		       uint32_t chunk, uint32_t headroom, uint32_t queue,
		       uint16_t flags)
{
	struct vmak_ringset_config cfg;

	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)ifindex;
	cfg.rx_size = ring;
	cfg.fill_size = ring;
	cfg.chunk_size = chunk;
	cfg.headroom = headroom;
	cfg.umem_len = (uint64_t)ring * 2 * chunk;
	cfg.queue_id = queue;
	cfg.bind_flags = flags;
	return vmak_ringset_open(rs, &cfg);
}

FIXTURE_SETUP(rx)
{
	int fam;

	FAMILY_OR_SKIP(fam);
	self->rs.fd = -1;
	self->udp = -1;
	ASSERT_EQ(0, vnet_setup(&self->net, 1));
	ASSERT_EQ(0, ringset_for(&self->rs, self->net.ifindex_b, variant->ring,
				 variant->chunk, variant->headroom,
				 VMAK_QUEUE_ANY, VMAK_BIND_RX_TIMESTAMP));
	ASSERT_EQ(variant->ring, vmak_ringset_fill(&self->rs, 0, variant->ring));
	self->udp = variant->v6 ? udp_bound(AF_INET6, ADDR6_B, PORT) :
				  udp_bound(AF_INET, ADDR_B, PORT);
	ASSERT_GE(self->udp, 0);
}

FIXTURE_TEARDOWN(rx)
{
	if (self->udp >= 0)
		close(self->udp);
	vmak_ringset_close(&self->rs);
	vnet_teardown(&self->net);
}

static struct send_spec spec_for(struct vnet *net, bool v6, uint32_t count)
{
	struct send_spec s = {
		.ns = net->ns_a,
		.dst = v6 ? ADDR6_B : ADDR_B,
		.dport = PORT,
		.count = count,
	};
	return s;
}

/*
 * Read up to 'want' descriptors (waiting up to timeout_ms for each batch),
 * checking each against the sender's pattern; recycle chunks.
 */
struct rx_result {
	uint32_t got;
	uint32_t bad;
	uint32_t out_of_order;
	uint32_t next_seq;
	uint32_t segments;
	uint32_t per_queue[8];
	uint64_t ts_min, ts_max;
};

static void rx_drain(struct vmak_ringset *rs, uint32_t want, int timeout_ms,
		     uint32_t cookie, const struct send_spec *s,
		     struct rx_result *res)
{
	while (res->got < want) {
		uint32_t idx, n, i;

		n = vmak_ring_peek(rs->rx, 64, &idx);
		if (!n) {
			if (rx_wait(rs, timeout_ms) <= 0)
				break;
			continue;
		}
		for (i = 0; i < n; i++) {
			const struct vmak_rx_desc *d = vmak_ring_rx_desc(rs->rx, idx + i);
			uint8_t *frame = (uint8_t *)rs->umem + d->addr;
			uint32_t seq, plen = d->len - d->payload_off;

			if (d->cookie != cookie ||
			    payload_check(frame + d->payload_off, plen, &seq) ||
			    (s && !s->gso && plen != send_size(s, seq - s->first_seq)))
				res->bad++;
			else if (!s || !s->gso) {
				/* Drops leave gaps; order must still hold. */
				if (seq < res->next_seq)
					res->out_of_order++;
				res->next_seq = seq + 1;
			}
			if (d->flags & VMAK_RX_SEGMENT)
				res->segments++;
			if (d->queue < 8)
				res->per_queue[d->queue]++;
			if (!res->ts_min || d->ts_sw < res->ts_min)
				res->ts_min = d->ts_sw;
			if (d->ts_sw > res->ts_max)
				res->ts_max = d->ts_sw;
			res->got++;
			rx_recycle(rs, d->addr);
		}
		vmak_ring_release(rs->rx, n);
	}
}

TEST_F(rx, payloads_in_order_with_cookie_and_timestamp)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 2 * variant->ring + 88);
	struct rx_result res = {};
	struct vmak_statistics st;
	uint64_t t0, t1;
	char buf[16];
	pid_t pid;

	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 0xc0ffee));
	s.pause_us = 50;
	t0 = now_ns();
	pid = sender_start(&s);
	rx_drain(&self->rs, s.count, 2000, 0xc0ffee, &s, &res);
	ASSERT_EQ(0, sender_wait(pid));
	t1 = now_ns();
	/* More than a ring's worth, so chunks were recycled and indexes
	 * wrapped; a slow reader may lose some to a full ring, counted. */
	EXPECT_GE(res.got, variant->ring);
	EXPECT_EQ(0, res.bad);
	EXPECT_EQ(0, res.out_of_order);
	EXPECT_GE(res.ts_min, t0);
	EXPECT_LE(res.ts_max, t1);
	/* Steered traffic no longer reaches the kernel socket. */
	EXPECT_ERRNO(EAGAIN, recv(self->udp, buf, sizeof(buf), MSG_DONTWAIT));

	ASSERT_EQ(0, vmak_statistics_get(self->rs.fd, &st, sizeof(st)));
	EXPECT_EQ(res.got, st.rx_packets);
	EXPECT_EQ(s.count, st.rx_packets + st.rx_ring_full + st.rx_fill_empty);
	EXPECT_EQ(0, st.rx_invalid_fill);
	if (res.got < s.count)
		TH_LOG("%u of %u dropped on a full ring (slow reader)",
		       s.count - res.got, s.count);
}

/* Software timestamps are asked for at bind; without the flag ts_sw is 0. */
TEST_F(rx, no_timestamp_unless_asked)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 20);
	struct rx_result res = {};
	struct vmak_ringset rs2;

	ASSERT_EQ(0, ringset_for(&rs2, self->net.ifindex_b, 64, 2048, 0,
				 VMAK_QUEUE_ANY, 0));
	ASSERT_EQ(64, vmak_ringset_fill(&rs2, 0, 64));
	ASSERT_EQ(0, vmak_rule_add_socket(rs2.fd, self->udp, 3));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	rx_drain(&rs2, 20, 2000, 3, &s, &res);
	EXPECT_EQ(20, res.got);
	EXPECT_EQ(0, res.bad);
	EXPECT_EQ(0, res.ts_max);
	vmak_ringset_close(&rs2);
}

TEST_F(rx, epoll_reports_the_ring)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 3);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int ep = epoll_create1(0);

	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->rs.fd, &ev));
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 2));
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 100));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	ASSERT_EQ(1, epoll_wait(ep, &out, 1, 2000));
	EXPECT_TRUE(out.events & EPOLLIN);
	close(ep);
}

TEST_F(rx, napi_id_recorded)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 5);
	struct vmak_ring_info info;
	socklen_t len = sizeof(info);
	unsigned int napi = 0;
	socklen_t nlen = sizeof(napi);

	/* veth runs NAPI on the receiving side once GRO is on, for packets
	 * from a sender without TSO. */
	if (sh("ethtool -K %s gro on >/dev/null 2>&1", self->net.dev_b) ||
	    sh("ip netns exec %s ethtool -K %s tso off >/dev/null 2>&1",
	       self->net.ns_a, self->net.dev_a))
		SKIP(return, "ethtool cannot set veth's offloads here");
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 2));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	ASSERT_EQ(1, rx_wait(&self->rs, 2000));
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RING_INFO, &info, &len));
	EXPECT_NE(0, info.napi_id);
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &napi, &nlen));
	EXPECT_EQ(info.napi_id, napi);
}

TEST_F(rx, descriptor_layout)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 1);
	const struct vmak_rx_desc *d;
	uint32_t idx;
	uint8_t *f;

	s.size = 100;
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 7));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	ASSERT_EQ(1, rx_wait(&self->rs, 2000));
	ASSERT_EQ(1, vmak_ring_peek(self->rs.rx, 1, &idx));
	d = vmak_ring_rx_desc(self->rs.rx, idx);
	f = (uint8_t *)self->rs.umem + d->addr;
	EXPECT_EQ(variant->headroom, d->addr % variant->chunk);
	EXPECT_EQ(14, d->l3_off);
	EXPECT_EQ(14 + (variant->v6 ? 40 : 20) + 8, d->payload_off);
	EXPECT_EQ(d->payload_off + 100, d->len);
	EXPECT_EQ(variant->v6 ? 0x86dd : 0x0800, (f[12] << 8) | f[13]);
	EXPECT_EQ(variant->v6 ? VMAK_RX_IPV6 : 0, d->flags & VMAK_RX_IPV6);
	EXPECT_EQ(PORT, (f[d->payload_off - 6] << 8) | f[d->payload_off - 5]);
	EXPECT_EQ(0, d->reserved);
	EXPECT_EQ(0, d->queue);
	vmak_ring_release(self->rs.rx, 1);
}

TEST_F(rx, unmatched_traffic_reaches_the_kernel)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 20);
	struct vmak_statistics st;
	char buf[2048];
	int other, i;

	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 1));
	other = variant->v6 ? udp_bound(AF_INET6, ADDR6_B, PORT + 1) :
			      udp_bound(AF_INET, ADDR_B, PORT + 1);
	ASSERT_GE(other, 0);
	s.dport = PORT + 1;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	for (i = 0; i < 20; i++) {
		struct pollfd p = { .fd = other, .events = POLLIN };

		ASSERT_EQ(1, poll(&p, 1, 2000));
		ASSERT_GT(recv(other, buf, sizeof(buf), 0), 0);
	}
	EXPECT_EQ(0, sh("ip netns exec %s ping -q -c 2 -i 0.2 -W 2 %s >/dev/null",
			self->net.ns_a, variant->v6 ? ADDR6_B : ADDR_B));
	ASSERT_EQ(0, vmak_statistics_get(self->rs.fd, &st, sizeof(st)));
	EXPECT_EQ(0, st.rx_packets);
	close(other);
}

TEST_F(rx, rule_delete_returns_traffic_to_the_kernel)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 10);
	struct rx_result res = {};
	struct pollfd p = { .fd = self->udp, .events = POLLIN };
	char buf[2048];
	int i;

	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 5));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	rx_drain(&self->rs, 10, 2000, 5, &s, &res);
	EXPECT_EQ(10, res.got);
	ASSERT_EQ(0, vmak_rule_del(self->rs.fd, 5));
	EXPECT_EQ(-ENOENT, vmak_rule_del(self->rs.fd, 5));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(1, poll(&p, 1, 2000));
		ASSERT_GT(recv(self->udp, buf, sizeof(buf), 0), 0);
	}
}

TEST_F(rx, closed_socket_stops_steering)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 10);
	struct vmak_statistics st;

	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 9));
	close(self->udp);
	self->udp = -1;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	usleep(200000);
	ASSERT_EQ(0, vmak_statistics_get(self->rs.fd, &st, sizeof(st)));
	EXPECT_EQ(0, st.rx_packets);
	EXPECT_EQ(10, st.rx_rule_dead);
}

TEST_F(rx, ring_full_is_counted)
{
	struct send_spec s = spec_for(&self->net, variant->v6, variant->ring + 50);
	struct vmak_statistics st;
	char buf[16];

	s.size = 64;
	s.pause_us = 20;
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 1));
	/* Twice the chunks: the RX ring, not the FILL ring, runs out. */
	vmak_ringset_fill(&self->rs, variant->ring, variant->ring);
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	usleep(200000);
	ASSERT_EQ(0, vmak_statistics_get(self->rs.fd, &st, sizeof(st)));
	EXPECT_EQ(variant->ring, st.rx_packets);
	EXPECT_EQ(50, st.rx_ring_full);
	EXPECT_EQ(0, st.rx_passed);
	EXPECT_ERRNO(EAGAIN, recv(self->udp, buf, sizeof(buf), MSG_DONTWAIT));
}

TEST_F(rx, fill_empty_sets_need_wakeup)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 40);
	struct vmak_ringset rs2;
	struct vmak_statistics st;
	struct pollfd p;
	uint32_t idx;

	/* A second ring set with only 10 chunks on its FILL ring. */
	ASSERT_EQ(0, ringset_for(&rs2, self->net.ifindex_b, 64, 2048, 0,
				 VMAK_QUEUE_ANY, 0));
	ASSERT_EQ(10, vmak_ringset_fill(&rs2, 0, 10));
	ASSERT_EQ(0, vmak_rule_add_socket(rs2.fd, self->udp, 1));
	s.size = 64;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	usleep(200000);
	ASSERT_EQ(0, vmak_statistics_get(rs2.fd, &st, sizeof(st)));
	EXPECT_EQ(10, st.rx_packets);
	EXPECT_EQ(30, st.rx_fill_empty);
	EXPECT_TRUE(vmak_ring_needs_wakeup(rs2.fill));
	/* Refill and kick: the flag clears. */
	ASSERT_EQ(10, vmak_ring_peek(rs2.rx, 64, &idx));
	vmak_ring_release(rs2.rx, 10);
	ASSERT_EQ(10, vmak_ringset_fill(&rs2, 10, 10));
	p.fd = rs2.fd;
	p.events = POLLIN;
	EXPECT_EQ(0, poll(&p, 1, 0));
	EXPECT_FALSE(vmak_ring_needs_wakeup(rs2.fill));
	vmak_ringset_close(&rs2);
}

TEST_F(rx, pass_on_drop_reaches_the_kernel)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 30);
	struct vmak_ringset rs2;
	struct vmak_statistics st;
	char buf[2048];
	int i;

	ASSERT_EQ(0, ringset_for(&rs2, self->net.ifindex_b, 64, 2048, 0,
				 VMAK_QUEUE_ANY, VMAK_BIND_PASS_ON_DROP));
	ASSERT_EQ(10, vmak_ringset_fill(&rs2, 0, 10));
	ASSERT_EQ(0, vmak_rule_add_socket(rs2.fd, self->udp, 1));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	for (i = 0; i < 20; i++) {
		struct pollfd p = { .fd = self->udp, .events = POLLIN };

		ASSERT_EQ(1, poll(&p, 1, 2000));
		ASSERT_GT(recv(self->udp, buf, sizeof(buf), 0), 0);
	}
	ASSERT_EQ(0, vmak_statistics_get(rs2.fd, &st, sizeof(st)));
	EXPECT_EQ(10, st.rx_packets);
	EXPECT_EQ(20, st.rx_passed);
	vmak_ringset_close(&rs2);
}

TEST_F(rx, invalid_fill_entries_skipped_and_counted)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 4);
	struct vmak_ringset rs2;
	struct vmak_statistics st;
	struct rx_result res = {};
	uint32_t idx;

	ASSERT_EQ(0, ringset_for(&rs2, self->net.ifindex_b, 64, 2048, 0,
				 VMAK_QUEUE_ANY, 0));
	ASSERT_EQ(8, vmak_ring_reserve(rs2.fill, 8, &idx));
	for (int i = 0; i < 8; i++)	/* odd entries point past the UMEM */
		*vmak_ring_fill_addr(rs2.fill, idx + i) = i % 2 ?
			rs2.umem_len + (uint64_t)i * 4096 : (uint64_t)i * 2048;
	*vmak_ring_fill_addr(rs2.fill, idx + 7) = ~0ULL;
	vmak_ring_submit(rs2.fill, 8);
	ASSERT_EQ(0, vmak_rule_add_socket(rs2.fd, self->udp, 3));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	rx_drain(&rs2, 4, 2000, 3, &s, &res);
	EXPECT_EQ(4, res.got);
	EXPECT_EQ(0, res.bad);
	ASSERT_EQ(0, vmak_statistics_get(rs2.fd, &st, sizeof(st)));
	/* Four good chunks were taken past three bad entries. */
	EXPECT_EQ(3, st.rx_invalid_fill);
	vmak_ringset_close(&rs2);
}

TEST_F(rx, ip_fragments_reach_the_kernel)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 3);
	struct pollfd p = { .fd = self->udp, .events = POLLIN };
	struct vmak_statistics st;
	static uint8_t buf[4000];
	uint32_t seq;
	int i;

	/* 3000 bytes over a 1500-byte MTU: sent as fragments, not steered,
	 * reassembled by the kernel for the socket. */
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 2));
	s.size = 3000;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, poll(&p, 1, 2000));
		ASSERT_EQ(3000, recv(self->udp, buf, sizeof(buf), 0));
		EXPECT_EQ(0, payload_check(buf, 3000, &seq));
		EXPECT_EQ((uint32_t)i, seq);
	}
	ASSERT_EQ(0, vmak_statistics_get(self->rs.fd, &st, sizeof(st)));
	EXPECT_EQ(0, st.rx_packets);
}

TEST_F(rx, hostile_fill_producer_index)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 5);
	struct vmak_ringset rs2;
	struct vmak_statistics st;

	ASSERT_EQ(0, ringset_for(&rs2, self->net.ifindex_b, 64, 2048, 0,
				 VMAK_QUEUE_ANY, 0));
	/* Every entry invalid, and the producer 2^31 ahead of the consumer. */
	for (uint32_t i = 0; i < 64; i++)
		*vmak_ring_fill_addr(rs2.fill, i) = ~0ULL;
	__atomic_store_n(rs2.fill->producer, 0x80000000u, __ATOMIC_RELEASE);
	ASSERT_EQ(0, vmak_rule_add_socket(rs2.fd, self->udp, 3));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	usleep(200000);
	ASSERT_EQ(0, vmak_statistics_get(rs2.fd, &st, sizeof(st)));
	EXPECT_EQ(0, st.rx_packets);
	EXPECT_EQ(5, st.rx_fill_empty);
	/* Each packet looked at no more than one ring's worth of entries. */
	EXPECT_LE(st.rx_invalid_fill, 5 * 64);
	EXPECT_GE(st.rx_invalid_fill, 64);
	vmak_ringset_close(&rs2);
}

TEST_F(rx, too_big_for_a_chunk)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 3);
	struct vmak_ringset rs2;
	struct vmak_statistics st;

	/* 2048-byte chunks with 1024 of headroom leave 1024 for the frame. */
	ASSERT_EQ(0, ringset_for(&rs2, self->net.ifindex_b, 64, 2048, 1024,
				 VMAK_QUEUE_ANY, 0));
	vmak_ringset_fill(&rs2, 0, 64);
	ASSERT_EQ(0, vmak_rule_add_socket(rs2.fd, self->udp, 3));
	s.size = 1200;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	s.size = 900;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	usleep(200000);
	ASSERT_EQ(0, vmak_statistics_get(rs2.fd, &st, sizeof(st)));
	EXPECT_EQ(3, st.rx_too_big);
	EXPECT_EQ(3, st.rx_packets);
	vmak_ringset_close(&rs2);
}

TEST_F(rx, udp_segment_sender_yields_datagrams)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 5);
	struct rx_result res = {};
	uint32_t idx, n, i, seen[5] = {};

	/* Five sends of 10 datagrams of 300 bytes (the last 200). */
	s.gso = 300;
	s.size = 2900;
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 11));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	while (res.got < 50 && rx_wait(&self->rs, 2000) > 0) {
		n = vmak_ring_peek(self->rs.rx, 64, &idx);
		for (i = 0; i < n; i++) {
			const struct vmak_rx_desc *d = vmak_ring_rx_desc(self->rs.rx, idx + i);
			uint8_t *f = (uint8_t *)self->rs.umem + d->addr;
			uint32_t plen = d->len - d->payload_off, seq;
			uint8_t *l4 = f + d->payload_off - 8;

			if (payload_check(f + d->payload_off, plen, &seq) ||
			    seq / 1000 >= 5 || plen != (seq % 1000 == 9 ? 200u : 300u) ||
			    (uint32_t)((l4[4] << 8) | l4[5]) != plen + 8)
				res.bad++;
			else
				seen[seq / 1000] |= 1u << (seq % 1000);
			if (d->flags & VMAK_RX_SEGMENT)
				res.segments++;
			res.got++;
			rx_recycle(&self->rs, d->addr);
		}
		vmak_ring_release(self->rs.rx, n);
	}
	EXPECT_EQ(50, res.got);
	EXPECT_EQ(0, res.bad);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0x3ffu, seen[i]);
	TH_LOG("%u of 50 datagrams were split out of GSO packets by vmak",
	       res.segments);
}

TEST_F(rx, multicast_joined_by_kernel_socket)
{
	const char *group = variant->v6 ? "ff15::77" : "239.7.7.7";
	struct send_spec s = spec_for(&self->net, variant->v6, 50);
	struct sockaddr_storage g;
	struct rx_result res = {};
	socklen_t glen;
	int m;

	m = variant->v6 ? udp_bound(AF_INET6, "::", PORT + 2) :
			  udp_bound(AF_INET, "0.0.0.0", PORT + 2);
	ASSERT_GE(m, 0);
	sockaddr_of(group, 0, &g, &glen);
	/* Not joined yet: refused. */
	EXPECT_EQ(-EADDRNOTAVAIL, vmak_rule_add_group(self->rs.fd, m,
						      (struct sockaddr *)&g, 4));
	if (variant->v6) {
		struct ipv6_mreq mr = { .ipv6mr_interface = self->net.ifindex_b };

		mr.ipv6mr_multiaddr = ((struct sockaddr_in6 *)&g)->sin6_addr;
		ASSERT_EQ(0, setsockopt(m, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr, sizeof(mr)));
	} else {
		struct ip_mreqn mr = { .imr_ifindex = self->net.ifindex_b };

		mr.imr_multiaddr = ((struct sockaddr_in *)&g)->sin_addr;
		ASSERT_EQ(0, setsockopt(m, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)));
	}
	ASSERT_EQ(0, vmak_rule_add_group(self->rs.fd, m, (struct sockaddr *)&g, 4));
	s.dst = group;
	s.dport = PORT + 2;
	s.mcast_if = self->net.dev_a;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	rx_drain(&self->rs, 50, 2000, 4, &s, &res);
	EXPECT_EQ(50, res.got);
	EXPECT_EQ(0, res.bad);
	close(m);
}

TEST_F(rx, device_deleted_under_traffic)
{
	struct send_spec s = spec_for(&self->net, variant->v6, 1000000);
	struct pollfd p = { .fd = self->rs.fd, .events = POLLIN };
	int err = 0, i;
	socklen_t len = sizeof(err);
	struct rx_result res = {};
	pid_t pid;

	s.size = 64;
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 1));
	pid = sender_start(&s);
	rx_drain(&self->rs, 100, 2000, 1, NULL, &res);
	ASSERT_GE(res.got, 100);
	ASSERT_EQ(0, sh("ip -n %s link del %s", self->net.ns_b, self->net.dev_b));
	for (i = 0; i < 50 && !(p.revents & POLLERR); i++) {
		/* Drain what arrived before the device went away. */
		uint32_t idx, n = vmak_ring_peek(self->rs.rx, 4096, &idx);

		vmak_ring_release(self->rs.rx, n);
		poll(&p, 1, 100);
	}
	EXPECT_TRUE(p.revents & POLLERR);
	EXPECT_TRUE(p.revents & POLLHUP);
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_SOCKET, SO_ERROR, &err, &len));
	EXPECT_EQ(ENETDOWN, err);
	EXPECT_EQ(-ENETDOWN, vmak_rule_add_socket(self->rs.fd, self->udp, 2));
	EXPECT_ERRNO(ENXIO, recv(self->rs.fd, NULL, 0, MSG_DONTWAIT));
	kill(pid, SIGKILL);
	sender_wait(pid);
}

/* ---- several rings: queues, fan-out, shared UMEM ------------------------- */

TEST(four_queues_four_rings_hash_mapping)
{
	struct vmak_ringset rs[4];
	uint32_t flow_ring[64], total = 0;
	struct vnet net = {};
	int fam, udp, q, f, used = 0;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, vnet_setup(&net, 4));
	udp = udp_bound(AF_INET, ADDR_B, PORT);
	ASSERT_GE(udp, 0);
	for (q = 0; q < 4; q++) {
		ASSERT_EQ(0, ringset_for(&rs[q], net.ifindex_b, 2048, 2048, 0,
					 (uint32_t)q, VMAK_BIND_SW_QUEUE));
		vmak_ringset_fill(&rs[q], 0, 2048);
		ASSERT_EQ(0, vmak_rule_add_socket(rs[q].fd, udp, 100 + q));
	}
	/* 64 flows (source ports), 20 datagrams each. */
	for (f = 0; f < 64; f++) {
		struct send_spec s = {
			.ns = net.ns_a, .dst = ADDR_B, .dport = PORT,
			.sport = 20000 + f, .count = 20, .size = 32,
			.first_seq = f * 100,
		};

		ASSERT_EQ(0, sender_wait(sender_start(&s)));
		flow_ring[f] = ~0u;
	}
	usleep(300000);
	for (q = 0; q < 4; q++) {
		uint32_t idx, n, i, got = 0;

		while ((n = vmak_ring_peek(rs[q].rx, 256, &idx))) {
			for (i = 0; i < n; i++) {
				const struct vmak_rx_desc *d = vmak_ring_rx_desc(rs[q].rx, idx + i);
				uint8_t *fr = (uint8_t *)rs[q].umem + d->addr;
				uint32_t seq;

				ASSERT_EQ(0, payload_check(fr + d->payload_off,
							   d->len - d->payload_off, &seq));
				EXPECT_EQ((uint32_t)q, d->queue);
				EXPECT_EQ(100u + q, d->cookie);
				f = seq / 100;
				/* A flow never splits across rings. */
				if (flow_ring[f] == ~0u)
					flow_ring[f] = q;
				/* The documented mapping: hash mod queues. */
				EXPECT_EQ(d->hash % 4, d->queue);
				EXPECT_EQ((uint32_t)q, flow_ring[f]);
				got++;
			}
			vmak_ring_release(rs[q].rx, n);
		}
		TH_LOG("queue %d: %u datagrams", q, got);
		used += got > 0;
		total += got;
	}
	EXPECT_EQ(64 * 20, total);
	EXPECT_GE(used, 3);
	for (q = 0; q < 4; q++)
		vmak_ringset_close(&rs[q]);
	close(udp);
	vnet_teardown(&net);
}

TEST(shared_umem_two_rings)
{
	struct vmak_ringset_config cfg;
	struct vmak_ringset a, b;
	struct vnet net = {};
	struct vmak_statistics sa, sb;
	int fam, u1, u2;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, vnet_setup(&net, 1));
	ASSERT_EQ(0, ringset_for(&a, net.ifindex_b, 64, 2048, 0, VMAK_QUEUE_ANY, 0));
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)net.ifindex_b;
	cfg.rx_size = cfg.fill_size = 64;
	cfg.shared_umem_fd = a.fd;
	ASSERT_EQ(0, vmak_ringset_open(&b, &cfg));
	/* Chunks 0..31 for a, 32..63 for b, in the one UMEM of a. */
	b.umem = a.umem;
	b.umem_len = a.umem_len;
	vmak_ringset_fill(&a, 0, 32);
	vmak_ringset_fill(&b, 32, 32);
	u1 = udp_bound(AF_INET, ADDR_B, PORT);
	u2 = udp_bound(AF_INET, ADDR_B, PORT + 1);
	ASSERT_EQ(0, vmak_rule_add_socket(a.fd, u1, 1));
	ASSERT_EQ(0, vmak_rule_add_socket(b.fd, u2, 2));
	struct send_spec s = { .ns = net.ns_a, .dst = ADDR_B, .dport = PORT,
			       .count = 20, .size = 64 };
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	s.dport = PORT + 1;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	usleep(200000);
	ASSERT_EQ(0, vmak_statistics_get(a.fd, &sa, sizeof(sa)));
	ASSERT_EQ(0, vmak_statistics_get(b.fd, &sb, sizeof(sb)));
	EXPECT_EQ(20, sa.rx_packets);
	EXPECT_EQ(20, sb.rx_packets);
	uint32_t idx;

	ASSERT_EQ(20, vmak_ring_peek(b.rx, 64, &idx));
	for (int i = 0; i < 20; i++) {
		const struct vmak_rx_desc *d = vmak_ring_rx_desc(b.rx, idx + i);

		EXPECT_GE(d->addr, 32 * 2048);
		EXPECT_EQ(2u, d->cookie);
	}
	b.umem = NULL;
	vmak_ringset_close(&b);
	vmak_ringset_close(&a);
	close(u1);
	close(u2);
	vnet_teardown(&net);
}

TEST(multicast_fan_out_to_two_rings)
{
	struct vmak_ringset a, b;
	struct vnet net = {};
	struct vmak_statistics sa, sb;
	struct ip_mreqn mr = {};
	struct sockaddr_in g = { .sin_family = AF_INET };
	int fam, m1, m2, one = 1;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, vnet_setup(&net, 1));
	ASSERT_EQ(0, ringset_for(&a, net.ifindex_b, 64, 2048, 0, VMAK_QUEUE_ANY, 0));
	ASSERT_EQ(0, ringset_for(&b, net.ifindex_b, 64, 2048, 0, VMAK_QUEUE_ANY, 0));
	vmak_ringset_fill(&a, 0, 64);
	vmak_ringset_fill(&b, 0, 64);
	/* Two receivers of one group share the port with SO_REUSEPORT. */
	for (int i = 0; i < 2; i++) {
		int *m = i ? &m2 : &m1;
		struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(PORT) };

		*m = socket(AF_INET, SOCK_DGRAM, 0);
		ASSERT_EQ(0, setsockopt(*m, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)));
		ASSERT_EQ(0, bind(*m, (struct sockaddr *)&any, sizeof(any)));
		inet_pton(AF_INET, "239.9.9.9", &mr.imr_multiaddr);
		mr.imr_ifindex = net.ifindex_b;
		ASSERT_EQ(0, setsockopt(*m, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)));
	}
	g.sin_addr = mr.imr_multiaddr;
	ASSERT_EQ(0, vmak_rule_add_group(a.fd, m1, (struct sockaddr *)&g, 1));
	ASSERT_EQ(0, vmak_rule_add_group(b.fd, m2, (struct sockaddr *)&g, 2));
	/*
	 * A second member socket on ring set a too: its own copy there (two
	 * SO_REUSEADDR members of one process on one ring); the same socket
	 * twice is refused.
	 */
	EXPECT_EQ(0, vmak_rule_add_group(a.fd, m2, (struct sockaddr *)&g, 3));
	EXPECT_EQ(-EEXIST, vmak_rule_add_group(a.fd, m1, (struct sockaddr *)&g, 4));
	struct send_spec s = { .ns = net.ns_a, .dst = "239.9.9.9", .dport = PORT,
			       .count = 30, .size = 64, .mcast_if = net.dev_a };
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	usleep(200000);
	ASSERT_EQ(0, vmak_statistics_get(a.fd, &sa, sizeof(sa)));
	ASSERT_EQ(0, vmak_statistics_get(b.fd, &sb, sizeof(sb)));
	EXPECT_EQ(60, sa.rx_packets);	/* m1's copy and m2's */
	EXPECT_EQ(30, sb.rx_packets);
	vmak_ringset_close(&a);
	vmak_ringset_close(&b);
	close(m1);
	close(m2);
	vnet_teardown(&net);
}

/* ---- process death -------------------------------------------------------- */

TEST(killed_under_traffic_leaves_no_pinned_pages)
{
	uint64_t acq0, rel0, acq, rel;
	struct vnet net = {};
	int fam, i, st, pipefd[2];
	pid_t rx, tx;
	char c;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, vnet_setup(&net, 1));
	acq0 = vmstat("nr_foll_pin_acquired");
	rel0 = vmstat("nr_foll_pin_released");
	ASSERT_EQ(0, pipe(pipefd));
	rx = fork_child();
	if (!rx) {
		struct vmak_ringset rs;
		int udp = udp_bound(AF_INET, ADDR_B, PORT);

		if (ringset_for(&rs, net.ifindex_b, 1024, 4096, 0,
				VMAK_QUEUE_ANY, 0) ||
		    vmak_rule_add_socket(rs.fd, udp, 1))
			_exit(1);
		vmak_ringset_fill(&rs, 0, 1024);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		for (;;) {	/* consume and recycle forever */
			uint32_t idx, n = vmak_ring_peek(rs.rx, 64, &idx);

			for (uint32_t k = 0; k < n; k++)
				rx_recycle(&rs, vmak_ring_rx_desc(rs.rx, idx + k)->addr);
			vmak_ring_release(rs.rx, n);
			if (!n)
				rx_wait(&rs, 100);
		}
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	EXPECT_GT(vmstat("nr_foll_pin_acquired"), acq0);
	struct send_spec s = { .ns = net.ns_a, .dst = ADDR_B, .dport = PORT,
			       .count = 1000000, .size = 64 };
	tx = sender_start(&s);
	usleep(500000);
	kill(rx, SIGKILL);
	ASSERT_EQ(rx, waitpid(rx, &st, 0));
	/* Pages are unpinned from a workqueue after an RCU grace period. */
	for (i = 0; i < 100; i++) {
		acq = vmstat("nr_foll_pin_acquired") - acq0;
		rel = vmstat("nr_foll_pin_released") - rel0;
		if (acq == rel)
			break;
		usleep(50000);
	}
	EXPECT_EQ(acq, rel);
	EXPECT_GE(acq, 1024);
	kill(tx, SIGKILL);
	sender_wait(tx);
	vnet_teardown(&net);
}

TEST_HARNESS_MAIN
