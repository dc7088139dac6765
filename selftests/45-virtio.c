// SPDX-License-Identifier: GPL-2.0
/*
 * The receive path behind a real driver: the VM's virtio-net pair (4 queue
 * pairs each, NAPI, GRO, the receive queue recorded by the driver; see
 * selftests/vm/run). A ring per queue without VMAK_BIND_SW_QUEUE, one ring
 * on every queue, the NAPI id, datagrams that GRO merged split again, the
 * device unplugged under traffic. TX (copy and zero-copy) on virtio-net is
 * in 44-tx's virtio variants.
 */
#include "harness.h"
#include "common.h"

#define PORT	4500
#define FLOWS	64

static int ring_on(struct vmak_ringset *rs, int ifindex, uint32_t queue,
		   uint32_t n)
{
	struct vmak_ringset_config cfg;

	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)ifindex;
	cfg.rx_size = n;
	cfg.fill_size = n;
	cfg.chunk_size = 2048;
	cfg.umem_len = (uint64_t)n * 2 * 2048;
	cfg.queue_id = queue;
	cfg.bind_flags = 0;
	if (vmak_ringset_open(rs, &cfg))
		return -1;
	return vmak_ringset_fill(rs, 0, n) == n ? 0 : -1;
}

/* FLOWS flows (source ports) of n datagrams each, seq = flow * 1000 + i. */
static int send_flows(struct vnet *net, uint32_t n)
{
	for (int f = 0; f < FLOWS; f++) {
		struct send_spec s = {
			.ns = net->ns_a, .dst = ADDR_B, .dport = PORT,
			.sport = (uint16_t)(21000 + f), .count = n, .size = 48,
			.first_seq = (uint32_t)f * 1000,
		};

		if (sender_wait(sender_start(&s)))
			return -1;
	}
	return 0;
}

struct tally {
	uint32_t got, bad, segments;
	uint32_t per_queue[4];
	int8_t flow_queue[FLOWS];	/* -1: not seen */
	uint32_t split_flows;		/* flows seen on two queues */
};

/* Take what rs holds (waiting up to ms for more while fewer than want). */
static void take(struct vmak_ringset *rs, uint32_t cookie, uint32_t want,
		 int ms, struct tally *t)
{
	uint32_t idx, n, i, seq;

	while (t->got < want) {
		n = vmak_ring_peek(rs->rx, 256, &idx);
		if (!n) {
			if (rx_wait(rs, ms) <= 0)
				break;
			continue;
		}
		for (i = 0; i < n; i++) {
			const struct vmak_rx_desc *d = vmak_ring_rx_desc(rs->rx, idx + i);
			uint8_t *fr = (uint8_t *)rs->umem + d->addr;
			uint32_t f;

			if (d->cookie != cookie || d->queue >= 4 ||
			    payload_check(fr + d->payload_off,
					  d->len - d->payload_off, &seq)) {
				t->bad++;
			} else {
				f = seq / 1000;
				t->per_queue[d->queue]++;
				if (f < FLOWS && t->flow_queue[f] < 0)
					t->flow_queue[f] = (int8_t)d->queue;
				else if (f < FLOWS && t->flow_queue[f] != d->queue)
					t->split_flows++;
			}
			if (d->flags & VMAK_RX_SEGMENT)
				t->segments++;
			t->got++;
			rx_recycle(rs, d->addr);
		}
		vmak_ring_release(rs->rx, n);
	}
}

static void tally_init(struct tally *t)
{
	memset(t, 0, sizeof(*t));
	memset(t->flow_queue, -1, sizeof(t->flow_queue));
}

FIXTURE(vio)
{
	struct vnet net;
	struct vmak_ringset rs[4];
	int udp;
};

FIXTURE_SETUP(vio)
{
	int fam, q;

	for (q = 0; q < 4; q++)
		self->rs[q].fd = -1;
	self->udp = -1;
	FAMILY_OR_SKIP(fam);
	VIO_OR_SKIP();
	ASSERT_EQ(0, vnet_setup_dev(&self->net, 4, true));
	self->udp = udp_bound(AF_INET, ADDR_B, PORT);
	ASSERT_GE(self->udp, 0);
}

FIXTURE_TEARDOWN(vio)
{
	for (int q = 0; q < 4; q++)
		if (self->rs[q].fd >= 0)
			vmak_ringset_close(&self->rs[q]);
	if (self->udp >= 0)
		close(self->udp);
	vnet_teardown(&self->net);
}

/*
 * The driver records the queue each packet came in on: a ring bound to a
 * queue gets that queue's packets, a flow stays on one queue, and the
 * four rings together get everything.
 */
TEST_F(vio, a_ring_per_queue_gets_the_queue_the_driver_recorded)
{
	struct tally t[4];
	uint32_t total = 0;
	int q, used = 0;

	for (q = 0; q < 4; q++) {
		ASSERT_EQ(0, ring_on(&self->rs[q], self->net.ifindex_b, (uint32_t)q, 2048));
		ASSERT_EQ(0, vmak_rule_add_socket(self->rs[q].fd, self->udp, 100 + q));
	}
	ASSERT_EQ(0, send_flows(&self->net, 20));
	for (q = 0; q < 4; q++) {
		tally_init(&t[q]);
		take(&self->rs[q], 100 + q, FLOWS * 20, 300, &t[q]);
		EXPECT_EQ(0, t[q].bad);
		EXPECT_EQ(0, t[q].split_flows);
		/* only its own queue's packets */
		EXPECT_EQ(t[q].got, t[q].per_queue[q]);
		TH_LOG("queue %d: %u datagrams", q, t[q].got);
		total += t[q].got;
		used += t[q].got > 0;
	}
	EXPECT_EQ(FLOWS * 20, total);
	EXPECT_GE(used, 2);
}

/* VMAK_QUEUE_ANY: one ring gets every queue's packets; the NAPI id. */
TEST_F(vio, queue_any_gets_every_queue_and_the_napi_id)
{
	struct vmak_ring_info info;
	socklen_t len = sizeof(info);
	unsigned int napi = 0;
	socklen_t nlen = sizeof(napi);
	struct tally t;
	int q, used = 0;

	ASSERT_EQ(0, ring_on(&self->rs[0], self->net.ifindex_b, VMAK_QUEUE_ANY, 2048));
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs[0].fd, self->udp, 7));
	ASSERT_EQ(0, send_flows(&self->net, 10));
	tally_init(&t);
	take(&self->rs[0], 7, FLOWS * 10, 2000, &t);
	EXPECT_EQ(FLOWS * 10, t.got);
	EXPECT_EQ(0, t.bad);
	EXPECT_EQ(0, t.split_flows);
	for (q = 0; q < 4; q++)
		used += t.per_queue[q] > 0;
	TH_LOG("per queue: %u %u %u %u", t.per_queue[0], t.per_queue[1],
	       t.per_queue[2], t.per_queue[3]);
	EXPECT_GE(used, 2);
	/* virtio-net receives in NAPI: the ring reports the last id */
	ASSERT_EQ(0, getsockopt(self->rs[0].fd, SOL_VMAK, VMAK_RING_INFO, &info, &len));
	EXPECT_NE(0, info.napi_id);
	ASSERT_EQ(0, getsockopt(self->rs[0].fd, SOL_SOCKET, SO_INCOMING_NAPI_ID,
				&napi, &nlen));
	EXPECT_EQ(info.napi_id, napi);
}

/*
 * A socket with UDP_GRO has the stack merge a flow's datagrams into one
 * GSO packet in the driver's NAPI poll; the ring still gets each datagram
 * by itself, with its own headers.
 */
TEST_F(vio, datagrams_merged_by_gro_are_split)
{
	struct send_spec s = {
		.ns = self->net.ns_a, .dst = ADDR_B, .dport = PORT,
		.count = 20, .size = 2900, .gso = 300,
	};
	uint32_t idx, n, i, got = 0, bad = 0, segments = 0, seen[20] = {};
	int one = 1;

	ASSERT_EQ(0, setsockopt(self->udp, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)));
	ASSERT_EQ(0, ring_on(&self->rs[0], self->net.ifindex_b, VMAK_QUEUE_ANY, 1024));
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs[0].fd, self->udp, 9));
	/* 20 sends of 10 datagrams of 300 bytes (the last 200) */
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	while (got < 200 && rx_wait(&self->rs[0], 2000) > 0) {
		n = vmak_ring_peek(self->rs[0].rx, 64, &idx);
		for (i = 0; i < n; i++) {
			const struct vmak_rx_desc *d = vmak_ring_rx_desc(self->rs[0].rx, idx + i);
			uint8_t *f = (uint8_t *)self->rs[0].umem + d->addr;
			uint32_t plen = d->len - d->payload_off, seq;
			uint8_t *l4 = f + d->payload_off - 8;

			if (payload_check(f + d->payload_off, plen, &seq) ||
			    seq / 1000 >= 20 || plen != (seq % 1000 == 9 ? 200u : 300u) ||
			    (uint32_t)((l4[4] << 8) | l4[5]) != plen + 8)
				bad++;
			else
				seen[seq / 1000] |= 1u << (seq % 1000);
			segments += !!(d->flags & VMAK_RX_SEGMENT);
			got++;
			rx_recycle(&self->rs[0], d->addr);
		}
		vmak_ring_release(self->rs[0].rx, n);
	}
	EXPECT_EQ(200, got);
	EXPECT_EQ(0, bad);
	for (i = 0; i < 20; i++)
		EXPECT_EQ(0x3ffu, seen[i]);
	TH_LOG("%u of 200 datagrams came out of packets GRO merged", segments);
	EXPECT_GT(segments, 0);
}

/* Hot unplug under traffic: the ring says ENETDOWN, nothing hangs. */
TEST_F(vio, device_unplugged_under_traffic)
{
	struct send_spec s = {
		.ns = self->net.ns_a, .dst = ADDR_B, .dport = PORT,
		.count = 1000000, .size = 64,
	};
	struct pollfd p = { .fd = -1, .events = POLLIN };
	socklen_t len = sizeof(int);
	struct tally t;
	int err = 0, i;
	pid_t pid;

	ASSERT_EQ(0, ring_on(&self->rs[0], self->net.ifindex_b, VMAK_QUEUE_ANY, 1024));
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs[0].fd, self->udp, 3));
	p.fd = self->rs[0].fd;
	pid = sender_start(&s);
	tally_init(&t);
	take(&self->rs[0], 3, 100, 2000, &t);
	ASSERT_GE(t.got, 100);
	ASSERT_EQ(0, vnet_remove_b(&self->net, false));
	for (i = 0; i < 50 && !(p.revents & POLLERR); i++) {
		uint32_t idx, n = vmak_ring_peek(self->rs[0].rx, 4096, &idx);

		vmak_ring_release(self->rs[0].rx, n);
		poll(&p, 1, 100);
	}
	EXPECT_TRUE(p.revents & POLLERR);
	EXPECT_TRUE(p.revents & POLLHUP);
	ASSERT_EQ(0, getsockopt(self->rs[0].fd, SOL_SOCKET, SO_ERROR, &err, &len));
	EXPECT_EQ(ENETDOWN, err);
	EXPECT_EQ(-ENETDOWN, vmak_rule_add_socket(self->rs[0].fd, self->udp, 4));
	kill(pid, SIGKILL);
	sender_wait(pid);
}

TEST_HARNESS_MAIN
