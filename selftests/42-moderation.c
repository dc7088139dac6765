// SPDX-License-Identifier: GPL-2.0
/*
 * RX wake moderation: sleepers wake after 'count' packets or 'usec' after
 * the first unsignalled one, whichever comes first; zeros wake per packet.
 * Every scenario runs twice: moderation set by the socket option, and by
 * the netlink ring-set command (what vma_modify_ring() uses).
 */
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

FIXTURE_VARIANT(mod)
{
	bool by_netlink;
};

FIXTURE_VARIANT_ADD(mod, sockopt)
{
	.by_netlink = false,
};

FIXTURE_VARIANT_ADD(mod, netlink)
{
	.by_netlink = true,
};

FIXTURE_SETUP(mod)
{
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, steered_ring_setup(&self->net, &self->rs, &self->udp,
					&self->tx, PORT, 1));
}

FIXTURE_TEARDOWN(mod)
{
	steered_ring_teardown(&self->net, &self->rs, self->udp, self->tx);
}

/* Set moderation as the variant does; 0 or -1 with errno, as setsockopt. */
static int __set_mod(int fd, bool by_netlink, uint32_t count, uint32_t usec)
{
	struct vmak_moderation m = { count, usec };
	int err;

	if (!by_netlink)
		return setsockopt(fd, SOL_VMAK, VMAK_RX_MODERATION, &m, sizeof(m));
	err = vmak_ctl_set_moderation(ring_id(fd), count, usec);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}
#define set_mod(fd, count, usec) __set_mod((fd), variant->by_netlink, (count), (usec))

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
	long long us;
	int ret;

	/* 200 ms, so a per-packet wake (well under that even emulated) fails. */
	ASSERT_EQ(0, set_mod(self->rs.fd, 32, 200000));
	us = poll_one_sent(self->rs.fd, self->tx, &ret);
	EXPECT_EQ(1, ret);
	TH_LOG("woke %.1f ms after the packet", us / 1e3);
	EXPECT_GE(us, 199000);
	EXPECT_LE(us, 3000000);
}

TEST_F(mod, count_32_period_1ms)
{
	long long us;
	int ret;

	ASSERT_EQ(0, set_mod(self->rs.fd, 32, 1000));
	us = poll_one_sent(self->rs.fd, self->tx, &ret);
	EXPECT_EQ(1, ret);
	TH_LOG("woke %.2f ms after the packet", us / 1e3);
	EXPECT_GE(us, 1000);
	EXPECT_LE(us, 2000000);
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

/* Arm as the variant does; 0 or -1 with errno. */
static int __arm(int fd, bool by_netlink)
{
	uint32_t one = 1;
	int err;

	if (!by_netlink)
		return setsockopt(fd, SOL_VMAK, VMAK_RX_ARM, &one, sizeof(one));
	err = vmak_ctl_arm(ring_id(fd));
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

/*
 * Arm is verbs' req_notify_cq: the next packet wakes the sleeper, whatever
 * happened before. A history of moderation changes once left a stale
 * "unsignalled" count that made the arm fire at once into no sleeper, and
 * the next packet then waited for the moderation (here: 1000 packets).
 */
TEST_F(mod, arm_after_moderation_changes_wakes_the_next_packet)
{
	struct poller p;
	long long us;
	int ret;

	ASSERT_EQ(0, set_mod(self->rs.fd, 1000, 0));
	send_one(self->tx);
	usleep(100000);
	ASSERT_EQ(1, rx_pending(&self->rs));	/* posted, not signalled */
	consume_all(&self->rs);
	ASSERT_EQ(0, set_mod(self->rs.fd, 0, 0));
	poller_start(&p, self->rs.fd);
	send_one(self->tx);
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);			/* woken at once */
	consume_all(&self->rs);
	ASSERT_EQ(0, set_mod(self->rs.fd, 1000, 0));
	ASSERT_EQ(0, __arm(self->rs.fd, variant->by_netlink));
	us = poll_one_sent(self->rs.fd, self->tx, &ret);
	EXPECT_EQ(1, ret);
	TH_LOG("armed: woke %.1f ms after the packet", us / 1e3);
	EXPECT_LT(us, 500000);
}

/* An arm with nothing waiting does not wake a sleeper by itself. */
TEST_F(mod, arm_with_nothing_pending_waits_for_a_packet)
{
	struct poller p;

	ASSERT_EQ(0, set_mod(self->rs.fd, 1000, 0));
	send_one(self->tx);
	usleep(100000);
	consume_all(&self->rs);			/* read by a busy poller */
	ASSERT_EQ(0, __arm(self->rs.fd, variant->by_netlink));
	poller_start(&p, self->rs.fd);
	usleep(300000);
	EXPECT_TRUE(p.woke == 0);		/* nothing to tell */
	send_one(self->tx);
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);
}

TEST_F(mod, bad_values)
{
	struct vmak_moderation m = { 0, 0 };
	socklen_t len = sizeof(m) - 1;

	/* The socket option refuses as setsockopt does; netlink's policy
	 * says out of range, naming the attribute.
	 */
	int bad = variant->by_netlink ? ERANGE : EINVAL;

	EXPECT_ERRNO(bad, set_mod(self->rs.fd, 65536, 0));
	EXPECT_ERRNO(bad, set_mod(self->rs.fd, 0, 1000001));
	EXPECT_ERRNO(bad, set_mod(self->rs.fd, ~0u, ~0u));
	EXPECT_ERRNO(EINVAL, setsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, 4));
	EXPECT_ERRNO(EINVAL, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, &len));
	EXPECT_EQ(0, set_mod(self->rs.fd, 65535, 1000000));
	len = sizeof(m);
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, &len));
	EXPECT_EQ(65535, m.count);
	EXPECT_EQ(1000000, m.usec);
}

/* A batch for the next wake only (VMAK_RX_BATCH); 0 or -1 with errno. */
static int batch(int fd, uint32_t count, uint32_t usec)
{
	struct vmak_moderation m = { count, usec };

	return setsockopt(fd, SOL_VMAK, VMAK_RX_BATCH, &m, sizeof(m));
}

/*
 * A batch of 8 over a ring that wakes per packet: 7 packets wake nobody,
 * the 8th does, and the wake after that is the ring's own again.
 */
TEST_F(mod, batch_wakes_after_its_count_then_the_moderation_again)
{
	struct poller p;
	long long us;
	int ret;

	ASSERT_EQ(0, set_mod(self->rs.fd, 0, 0));
	ASSERT_EQ(0, batch(self->rs.fd, 8, 0));
	poller_start(&p, self->rs.fd);
	for (int i = 0; i < 7; i++) {
		send_one(self->tx);
		usleep(2000);
	}
	usleep(300000);
	EXPECT_EQ(7, rx_pending(&self->rs));
	EXPECT_TRUE(p.woke == 0);
	send_one(self->tx);
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);
	consume_all(&self->rs);
	us = poll_one_sent(self->rs.fd, self->tx, &ret);
	EXPECT_EQ(1, ret);
	TH_LOG("after the batch: woke %.1f ms after the packet", us / 1e3);
	EXPECT_LT(us, 500000);
}

TEST_F(mod, batch_period_wakes_after_a_single_packet)
{
	long long us;
	int ret;

	ASSERT_EQ(0, set_mod(self->rs.fd, 0, 0));
	ASSERT_EQ(0, batch(self->rs.fd, 1000, 200000));
	us = poll_one_sent(self->rs.fd, self->tx, &ret);
	EXPECT_EQ(1, ret);
	TH_LOG("woke %.1f ms after the packet", us / 1e3);
	EXPECT_GE(us, 199000);
	EXPECT_LE(us, 3000000);
}

/* A batch replaces a moderation that would wake sooner, for one wake. */
TEST_F(mod, batch_over_a_moderation_leaves_it_set)
{
	struct vmak_moderation m;
	socklen_t len = sizeof(m);
	struct poller p;

	ASSERT_EQ(0, set_mod(self->rs.fd, 2, 0));
	ASSERT_EQ(0, batch(self->rs.fd, 4, 0));
	poller_start(&p, self->rs.fd);
	for (int i = 0; i < 3; i++) {
		send_one(self->tx);
		usleep(2000);
	}
	usleep(300000);
	EXPECT_TRUE(p.woke == 0);	/* the ring's 2 would have */
	send_one(self->tx);
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, &len));
	EXPECT_EQ(2, m.count);
	EXPECT_EQ(0, m.usec);
}

/* Another sleeper's arm, before the batch or after, wakes the next packet. */
TEST_F(mod, arm_wins_over_a_batch)
{
	long long us;
	int ret;

	for (int order = 0; order < 2; order++) {
		ASSERT_EQ(0, set_mod(self->rs.fd, 0, 0));
		consume_all(&self->rs);
		if (order)
			ASSERT_EQ(0, __arm(self->rs.fd, variant->by_netlink));
		ASSERT_EQ(0, batch(self->rs.fd, 1000, 0));
		if (!order)
			ASSERT_EQ(0, __arm(self->rs.fd, variant->by_netlink));
		us = poll_one_sent(self->rs.fd, self->tx, &ret);
		EXPECT_EQ(1, ret);
		TH_LOG("arm %s the batch: woke %.1f ms after the packet",
		       order ? "before" : "after", us / 1e3);
		EXPECT_LT(us, 500000);
	}
}

/* A batch ended by its reader: the next packet wakes at once. */
TEST_F(mod, batch_ended_by_zeros)
{
	long long us;
	int ret;

	ASSERT_EQ(0, set_mod(self->rs.fd, 0, 0));
	ASSERT_EQ(0, batch(self->rs.fd, 1000, 0));
	ASSERT_EQ(0, batch(self->rs.fd, 0, 0));
	us = poll_one_sent(self->rs.fd, self->tx, &ret);
	EXPECT_EQ(1, ret);
	TH_LOG("woke %.1f ms after the packet", us / 1e3);
	EXPECT_LT(us, 500000);
	/* and zeros with no batch are nothing */
	EXPECT_EQ(0, batch(self->rs.fd, 0, 0));
}

TEST_F(mod, batch_bad_values)
{
	struct vmak_moderation m = { 4, 0 };
	socklen_t len = sizeof(m);

	EXPECT_ERRNO(EINVAL, batch(self->rs.fd, 65536, 0));
	EXPECT_ERRNO(EINVAL, batch(self->rs.fd, 0, 1000001));
	EXPECT_ERRNO(EINVAL, batch(self->rs.fd, ~0u, ~0u));
	EXPECT_ERRNO(EINVAL, setsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_BATCH, &m, 4));
	EXPECT_ERRNO(EFAULT, setsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_BATCH, NULL, sizeof(m)));
	EXPECT_ERRNO(ENOPROTOOPT, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_BATCH, &m, &len));
	EXPECT_EQ(0, batch(self->rs.fd, 65535, 1000000));
}

TEST_HARNESS_MAIN
