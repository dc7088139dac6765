// SPDX-License-Identifier: GPL-2.0
/*
 * RX wake moderation: sleepers wake after 'count' packets or 'usec' after
 * the first unsignalled one, whichever comes first; zeros wake per packet.
 */
#include <pthread.h>

#include "harness.h"
#include "common.h"

#define PORT 4100

FIXTURE(mod)
{
	struct vnet net;
	struct vmak_ringset rs;
	int udp;		/* steered socket in b */
	int tx;			/* sender socket in a, connected to b */
};

FIXTURE_SETUP(mod)
{
	struct vmak_ringset_config cfg;
	struct sockaddr_storage dst;
	socklen_t len;
	int fam;

	FAMILY_OR_SKIP(fam);
	self->rs.fd = -1;
	ASSERT_EQ(0, vnet_setup(&self->net, 1));
	ASSERT_EQ(0, ns_enter(self->net.ns_a));
	self->tx = socket(AF_INET, SOCK_DGRAM, 0);
	sockaddr_of(ADDR_B, PORT, &dst, &len);
	ASSERT_EQ(0, connect(self->tx, (struct sockaddr *)&dst, len));
	ASSERT_EQ(0, ns_enter(self->net.ns_b));
	self->udp = udp_bound(AF_INET, ADDR_B, PORT);
	ASSERT_GE(self->udp, 0);
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)self->net.ifindex_b;
	cfg.rx_size = cfg.fill_size = 256;
	cfg.umem_len = 512 * 2048;
	ASSERT_EQ(0, vmak_ringset_open(&self->rs, &cfg));
	vmak_ringset_fill(&self->rs, 0, 256);
	ASSERT_EQ(0, vmak_rule_add_socket(self->rs.fd, self->udp, 1));
}

FIXTURE_TEARDOWN(mod)
{
	vmak_ringset_close(&self->rs);
	close(self->udp);
	close(self->tx);
	vnet_teardown(&self->net);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int set_mod(int fd, uint32_t count, uint32_t usec)
{
	struct vmak_moderation m = { count, usec };

	return setsockopt(fd, SOL_VMAK, VMAK_RX_MODERATION, &m, sizeof(m));
}

/* A thread blocked in poll() on the ring; records when it woke. */
struct poller {
	pthread_t t;
	int fd;
	volatile double woke;	/* 0 while blocked */
	int ret;
};

static void *poll_thread(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

	p->ret = poll(&pfd, 1, 10000);
	p->woke = mono();
	return NULL;
}

static void poller_start(struct poller *p, int fd)
{
	p->fd = fd;
	p->woke = 0;
	pthread_create(&p->t, NULL, poll_thread, p);
	usleep(100000);		/* let it block */
}

static void send_one(int tx)
{
	char b[32] = "moderation";

	if (send(tx, b, sizeof(b), 0) != sizeof(b))
		perror("send");
}

static uint32_t rx_pending(struct vmak_ringset *rs)
{
	return __atomic_load_n(rs->rx->producer, __ATOMIC_ACQUIRE) -
	       *rs->rx->consumer;
}

TEST_F(mod, count_wakes_after_n_packets)
{
	struct poller p;

	ASSERT_EQ(0, set_mod(self->rs.fd, 32, 0));
	poller_start(&p, self->rs.fd);
	for (int i = 0; i < 31; i++) {
		send_one(self->tx);
		usleep(2000);
	}
	usleep(500000);
	EXPECT_EQ(31, rx_pending(&self->rs));
	/* 31 packets posted and nobody woken: a per-packet wake fails here. */
	EXPECT_TRUE(p.woke == 0);
	send_one(self->tx);
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);
	EXPECT_EQ(32, rx_pending(&self->rs));
}

TEST_F(mod, period_wakes_after_a_single_packet)
{
	struct poller p;
	double sent;

	/* 200 ms, so a per-packet wake (well under that even emulated) fails. */
	ASSERT_EQ(0, set_mod(self->rs.fd, 32, 200000));
	poller_start(&p, self->rs.fd);
	sent = mono();
	send_one(self->tx);
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);
	TH_LOG("woke %.1f ms after the packet", (p.woke - sent) * 1e3);
	EXPECT_GE(p.woke - sent, 0.199);
	EXPECT_LE(p.woke - sent, 3.0);
}

TEST_F(mod, count_32_period_1ms)
{
	struct poller p;
	double sent;

	ASSERT_EQ(0, set_mod(self->rs.fd, 32, 1000));
	poller_start(&p, self->rs.fd);
	sent = mono();
	send_one(self->tx);
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);
	TH_LOG("woke %.2f ms after the packet", (p.woke - sent) * 1e3);
	EXPECT_GE(p.woke - sent, 0.001);
	EXPECT_LE(p.woke - sent, 2.0);
}

TEST_F(mod, zeros_wake_per_packet)
{
	struct poller p;
	struct vmak_moderation m = { 9, 9 };
	socklen_t len = sizeof(m);

	ASSERT_EQ(0, set_mod(self->rs.fd, 0, 0));
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, &len));
	EXPECT_EQ(0, m.count);
	EXPECT_EQ(0, m.usec);
	poller_start(&p, self->rs.fd);
	send_one(self->tx);
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);
	EXPECT_EQ(1, rx_pending(&self->rs));
}

TEST_F(mod, close_with_timer_armed)
{
	/* A 1 s timer armed by a packet, then the socket closes under it. */
	ASSERT_EQ(0, set_mod(self->rs.fd, 1000, 1000000));
	send_one(self->tx);
	usleep(100000);
	EXPECT_EQ(1, rx_pending(&self->rs));
	vmak_ringset_close(&self->rs);
	self->rs.fd = -1;
}

TEST_F(mod, bad_values)
{
	struct vmak_moderation m = { 0, 0 };
	socklen_t len = sizeof(m) - 1;

	EXPECT_ERRNO(EINVAL, set_mod(self->rs.fd, 65536, 0));
	EXPECT_ERRNO(EINVAL, set_mod(self->rs.fd, 0, 1000001));
	EXPECT_ERRNO(EINVAL, set_mod(self->rs.fd, ~0u, ~0u));
	EXPECT_ERRNO(EINVAL, setsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, 4));
	EXPECT_ERRNO(EINVAL, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, &len));
	EXPECT_EQ(0, set_mod(self->rs.fd, 65535, 1000000));
	len = sizeof(m);
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, &len));
	EXPECT_EQ(65535, m.count);
	EXPECT_EQ(1000000, m.usec);
}

TEST_HARNESS_MAIN
