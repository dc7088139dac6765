// SPDX-License-Identifier: GPL-2.0
/*
 * Rings over netlink: get and dump contents, moderation and arm set over
 * netlink, rule dump, notifications, permissions, malformed requests with
 * their extack, dumps of 1,000 rings while rings come and go, and a
 * random-message fuzzer.
 */
#include <sys/wait.h>
#include <linux/genetlink.h>

#include "harness.h"
#include "common.h"
#include "nl.h"
#include "fuzz.h"

#define PORT 4300

FIXTURE(ring)
{
	struct vnet net;
	struct vmak_ringset rs;
	uint32_t id;
	int udp;		/* steered socket in b */
	int tx;			/* sender socket in a, connected to b */
};

FIXTURE_SETUP(ring)
{
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, steered_ring_setup(&self->net, &self->rs, &self->udp,
					&self->tx, PORT, 7));
	self->id = ring_id(self->rs.fd);
	ASSERT_NE(0, self->id);
}

FIXTURE_TEARDOWN(ring)
{
	steered_ring_teardown(&self->net, &self->rs, self->udp, self->tx);
}

TEST_F(ring, get_matches_the_socket)
{
	struct vmak_ring_status *st = NULL;
	struct in_addr b;

	for (int i = 0; i < 3; i++)
		send_one(self->tx);
	ASSERT_EQ(1, rx_wait(&self->rs, 2000));
	usleep(50000);

	ASSERT_EQ(0, ring_get(self->id, &st));
	EXPECT_EQ(self->id, st->id);
	EXPECT_EQ((uint32_t)getpid(), st->owner_pid);
	EXPECT_EQ(0, st->owner_uid);
	EXPECT_EQ(VMAK_STATE_BOUND, st->state);
	EXPECT_TRUE(st->bound);
	EXPECT_EQ((uint32_t)self->net.ifindex_b, st->ifindex);
	EXPECT_EQ(VMAK_QUEUE_ANY, st->queue_id);
	EXPECT_EQ(256, st->rx_size);
	EXPECT_EQ(256, st->fill_size);
	EXPECT_EQ(0, st->tx_size);
	EXPECT_EQ(512 * 2048, st->umem_size);
	EXPECT_EQ(2048, st->chunk_size);
	EXPECT_EQ(1, st->rule_count);
	ASSERT_EQ(1, st->nrules);
	EXPECT_EQ(7, st->rules[0].cookie);
	EXPECT_EQ(VMAK_RULE_SOCKET, st->rules[0].kind);
	ASSERT_EQ(1, st->rules[0].nkeys);
	EXPECT_EQ(AF_INET, st->rules[0].key[0].af);
	EXPECT_EQ(PORT, st->rules[0].key[0].dst_port);
	inet_pton(AF_INET, ADDR_B, &b);
	EXPECT_EQ(0, memcmp(st->rules[0].key[0].dst_addr, &b, 4));
	EXPECT_EQ(3, st->stats[0]);		/* rx-packets */
	EXPECT_EQ(0, st->stats[2]);		/* rx-ring-full */
}

/*
 * The wake behaviour of each setting is 42-moderation's (its netlink
 * variant); here, what netlink itself promises: the value reaches the
 * socket, either value alone keeps the other, the ring reports them.
 */
TEST_F(ring, moderation_set_over_netlink)
{
	struct vmak_moderation m;
	socklen_t len = sizeof(m);
	struct vmak_ring_status *st = NULL;

	ASSERT_EQ(0, vmak_ctl_set_moderation(self->id, 32, 0));
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, &len));
	EXPECT_EQ(32, m.count);
	EXPECT_EQ(0, m.usec);

	/* period alone keeps the count */
	ASSERT_EQ(0, vmak_ctl_set_moderation(self->id, -1, 1000));
	ASSERT_EQ(0, ring_get(self->id, &st));
	EXPECT_EQ(32, st->moderation_count);
	EXPECT_EQ(1000, st->moderation_usec);

	/* count alone keeps the period */
	ASSERT_EQ(0, vmak_ctl_set_moderation(self->id, 5, -1));
	ASSERT_EQ(0, getsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, &len));
	EXPECT_EQ(5, m.count);
	EXPECT_EQ(1000, m.usec);

	ASSERT_EQ(0, vmak_ctl_set_moderation(self->id, 0, 0));
	ASSERT_EQ(0, ring_get(self->id, &st));
	EXPECT_EQ(0, st->moderation_count);
	EXPECT_EQ(0, st->moderation_usec);
	vmak_ctl_status_free(st);
}

/* Arm wakes once: the next packet wakes at once, the one after waits. */
static void arm_once(struct __test_metadata *_metadata, FIXTURE_DATA(ring) *self,
		     int by_socket)
{
	uint32_t one = 1;
	struct poller p;
	double sent;

	/* Without the arm, a packet would wait 1 s for its wake. */
	ASSERT_EQ(0, vmak_ctl_set_moderation(self->id, 1000, 1000000));
	if (by_socket) {
		ASSERT_EQ(0, setsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_ARM, &one, 4));
	} else {
		ASSERT_EQ(0, vmak_ctl_arm(self->id));
	}
	poller_start(&p, self->rs.fd);
	sent = mono();
	send_one(self->tx);
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);
	TH_LOG("armed: woke %.1f ms after the packet", (p.woke - sent) * 1e3);
	EXPECT_LT(elapsed_us(p.woke, sent), 500000);
	consume_all(&self->rs);
	usleep(1100000);	/* let the first packet's timer go by */

	poller_start(&p, self->rs.fd);
	sent = mono();
	send_one(self->tx);
	usleep(400000);
	EXPECT_TRUE(p.woke == 0);	/* the arm was spent */
	pthread_join(p.t, NULL);
	EXPECT_EQ(1, p.ret);
	TH_LOG("unarmed: woke %.1f ms after the packet", (p.woke - sent) * 1e3);
	EXPECT_GE(elapsed_us(p.woke, sent), 900000);
}

TEST_F(ring, arm_over_netlink_wakes_once)
{
	arm_once(_metadata, self, 0);
}

TEST_F(ring, arm_by_socket_option_wakes_once)
{
	uint32_t two = 2;

	arm_once(_metadata, self, 1);
	EXPECT_ERRNO(EINVAL, setsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_ARM, &two, 4));
	EXPECT_ERRNO(EINVAL, setsockopt(self->rs.fd, SOL_VMAK, VMAK_RX_ARM, &two, 2));
}

static int count_rule(const struct vmak_ctl_rule *r, void *arg)
{
	uint32_t *next = arg;

	/* in cookie order, each once */
	if (r->cookie != *next)
		return -EDOM;
	(*next)++;
	return 0;
}

TEST_F(ring, rules_listed_and_dumped)
{
	struct vmak_ring_status *st = NULL;
	struct vmak_rule rule;
	uint32_t next;

	/* 40 raw rules on ports 5000.. with cookies 100.. */
	for (uint32_t i = 0; i < 40; i++) {
		memset(&rule, 0, sizeof(rule));
		rule.kind = VMAK_RULE_RAW;
		rule.cookie = 100 + i;
		rule.af = AF_INET;
		rule.proto = IPPROTO_UDP;
		rule.dst_port = htons((uint16_t)(5000 + i));
		ASSERT_EQ(0, setsockopt(self->rs.fd, SOL_VMAK, VMAK_RULE_ADD,
					&rule, sizeof(rule)));
	}
	ASSERT_EQ(0, ring_get(self->id, &st));
	EXPECT_EQ(41, st->rule_count);
	EXPECT_EQ(16, st->nrules);	/* what one ring message carries */
	EXPECT_EQ(7, st->rules[0].cookie);
	EXPECT_EQ(100, st->rules[1].cookie);
	EXPECT_EQ(VMAK_RULE_RAW, st->rules[1].kind);
	EXPECT_EQ(5000, st->rules[1].key[0].dst_port);

	next = 100;
	ASSERT_EQ(0, setsockopt(self->rs.fd, SOL_VMAK, VMAK_RULE_DEL, &(uint32_t){7}, 4));
	ASSERT_EQ(0, vmak_ctl_rule_list(self->id, count_rule, &next));
	EXPECT_EQ(140, next);
	next = 100;
	ASSERT_EQ(0, vmak_ctl_rule_list(0, count_rule, &next));
	EXPECT_EQ(140, next);
	EXPECT_EQ(-ENOENT, vmak_ctl_rule_list(0x7ffffff0, count_rule, &next));
	EXPECT_TRUE(strstr(vmak_last_error(), "ring-id") != NULL);
}

static int wait_event(struct vmak_monitor *mon, uint32_t id, int want,
		      struct vmak_ring_status **st)
{
	int cmd, err;

	for (;;) {
		err = monitor_next(mon, 3000, &cmd, st);
		if (err)
			return err;
		if ((*st)->id == id && cmd == want)
			return 0;
		if ((*st)->id == id && cmd != VMAK_CMD_RING_CHANGE_NTF)
			return -EDOM;	/* out of order */
	}
}

TEST_F(ring, notifications)
{
	struct vmak_ring_status *st = NULL;
	struct vmak_monitor *mon;
	uint32_t id, n = 64;
	int fd, cmd;

	ASSERT_EQ(0, vmak_ctl_monitor_open(&mon));
	fd = socket(vmak_family(), SOCK_RAW, 0);
	ASSERT_GE(fd, 0);
	id = ring_id(fd);
	ASSERT_EQ(0, wait_event(mon, id, VMAK_CMD_RING_CREATE_NTF, &st));
	EXPECT_EQ(VMAK_STATE_READY, st->state);
	/* A notification goes to listeners in any pid and user namespace:
	 * it names no owner; ring-get does, in the reader's namespaces.
	 */
	EXPECT_EQ(0, st->owner_pid);
	EXPECT_EQ(0, st->owner_uid);

	ASSERT_EQ(0, setsockopt(fd, SOL_VMAK, VMAK_RX_RING, &n, 4));
	ASSERT_EQ(0, wait_event(mon, id, VMAK_CMD_RING_CHANGE_NTF, &st));
	EXPECT_EQ(64, st->rx_size);

	ASSERT_EQ(0, vmak_ctl_set_moderation(self->id, 5, 0));
	ASSERT_EQ(0, wait_event(mon, self->id, VMAK_CMD_RING_CHANGE_NTF, &st));
	EXPECT_EQ(5, st->moderation_count);

	close(fd);
	ASSERT_EQ(0, wait_event(mon, id, VMAK_CMD_RING_DELETE_NTF, &st));
	/* nothing more about it */
	while (monitor_next(mon, 200, &cmd, &st) == 0)
		EXPECT_NE(id, st->id);
	vmak_ctl_monitor_close(mon);
}

TEST_F(ring, device_removal_is_a_change)
{
	struct vmak_ring_status *st = NULL;
	struct vmak_monitor *mon;

	ASSERT_EQ(0, vmak_ctl_monitor_open(&mon));
	ASSERT_EQ(0, sh("ip -n %s link del %s", self->net.ns_b, self->net.dev_b));
	ASSERT_EQ(0, wait_event(mon, self->id, VMAK_CMD_RING_CHANGE_NTF, &st));
	EXPECT_EQ(VMAK_STATE_UNBOUND, st->state);
	EXPECT_FALSE(st->bound);
	EXPECT_EQ(0, st->rule_count);
	vmak_ctl_monitor_close(mon);
}

TEST_F(ring, permissions)
{
	struct vmak_ring_status *st = NULL;
	int fd, own;

	/* Root's ring: another user sees it but may not tune it. */
	ASSERT_EQ(0, drop_privileges());
	ASSERT_EQ(0, ring_get(self->id, &st));
	EXPECT_EQ(-EPERM, vmak_ctl_set_moderation(self->id, 4, 0));
	TH_LOG("%s", vmak_last_error());
	EXPECT_TRUE(strstr(vmak_last_error(), "CAP_NET_ADMIN") != NULL);
	EXPECT_EQ(-EPERM, vmak_ctl_arm(self->id));

	/* Its own ring, it may. */
	fd = socket(vmak_family(), SOCK_RAW, 0);
	ASSERT_GE(fd, 0);
	own = (int)ring_id(fd);
	EXPECT_EQ(0, vmak_ctl_set_moderation((uint32_t)own, 4, 10));
	EXPECT_EQ(0, vmak_ctl_arm((uint32_t)own));
	ASSERT_EQ(0, ring_get((uint32_t)own, &st));
	EXPECT_EQ(65534, st->owner_uid);
	EXPECT_EQ(4, st->moderation_count);
	regain_privileges();
	/* CAP_NET_ADMIN may tune anyone's. */
	EXPECT_EQ(0, vmak_ctl_set_moderation((uint32_t)own, 8, 0));
	close(fd);
}

TEST_F(ring, other_netns_sees_nothing)
{
	struct vmak_ring_status *st = NULL;
	int n = 0;

	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	EXPECT_EQ(-ENOENT, ring_get(self->id, &st));
	EXPECT_TRUE(strstr(vmak_last_error(), "(attribute id)") != NULL);
	EXPECT_EQ(-ENOENT, vmak_ctl_set_moderation(self->id, 1, 1));
	EXPECT_EQ(0, vmak_ctl_ring_list(NULL, count_rings, &n));
	EXPECT_EQ(0, n);
	EXPECT_EQ(-ENOENT, vmak_ctl_rule_list(self->id, NULL, NULL));
}

/* ---- malformed requests ------------------------------------------------ */

struct bad {
	const char *what;
	uint8_t cmd;
	uint16_t flags;
	int attr;		/* attribute to put, -1 none */
	int len;		/* its payload length */
	uint32_t val;
	int err;		/* expected -errno */
	int names;		/* expected ext_attr (>0) or ext_miss (<0) */
};

TEST_F(ring, malformed_requests)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	const uint32_t big = 0x7ffffff0;
	const struct bad bad[] = {
		{ "get without id", VMAK_CMD_RING_GET, 0, -1, 0, 0, -EINVAL, -VMAK_A_RING_ID },
		{ "get id 0", VMAK_CMD_RING_GET, 0, VMAK_A_RING_ID, 4, 0, -ERANGE, VMAK_A_RING_ID },
		{ "get unknown id", VMAK_CMD_RING_GET, 0, VMAK_A_RING_ID, 4, big, -ENOENT, VMAK_A_RING_ID },
		{ "get id as u16", VMAK_CMD_RING_GET, 0, VMAK_A_RING_ID, 2, 1, -EINVAL, VMAK_A_RING_ID },
		{ "get id as u64", VMAK_CMD_RING_GET, 0, VMAK_A_RING_ID, 8, 1, -EINVAL, VMAK_A_RING_ID },
		{ "get with reply-only state", VMAK_CMD_RING_GET, 0, VMAK_A_RING_STATE, 4, 1, -EINVAL, VMAK_A_RING_STATE },
		{ "get with unknown attribute", VMAK_CMD_RING_GET, 0, VMAK_A_RING_MAX + 3, 4, 1, -EINVAL, VMAK_A_RING_MAX + 3 },
		{ "dump ifindex 0", VMAK_CMD_RING_GET, NLM_F_DUMP, VMAK_A_RING_IFINDEX, 4, 0, -ERANGE, VMAK_A_RING_IFINDEX },
		{ "dump owner-pid 0", VMAK_CMD_RING_GET, NLM_F_DUMP, VMAK_A_RING_OWNER_PID, 4, 0, -ERANGE, VMAK_A_RING_OWNER_PID },
		{ "set without id", VMAK_CMD_RING_SET, 0, VMAK_A_RING_ARM, 0, 0, -EINVAL, -VMAK_A_RING_ID },
		{ "set count 65536", VMAK_CMD_RING_SET, 0, VMAK_A_RING_MODERATION_COUNT, 4, 65536, -ERANGE, VMAK_A_RING_MODERATION_COUNT },
		{ "set usec 1000001", VMAK_CMD_RING_SET, 0, VMAK_A_RING_MODERATION_USEC, 4, 1000001, -ERANGE, VMAK_A_RING_MODERATION_USEC },
		{ "set count as u8", VMAK_CMD_RING_SET, 0, VMAK_A_RING_MODERATION_COUNT, 1, 1, -EINVAL, VMAK_A_RING_MODERATION_COUNT },
		{ "set arm with payload", VMAK_CMD_RING_SET, 0, VMAK_A_RING_ARM, 4, 1, -ERANGE, VMAK_A_RING_ARM },
		{ "set reply-only rx-size", VMAK_CMD_RING_SET, 0, VMAK_A_RING_RX_SIZE, 4, 1, -EINVAL, VMAK_A_RING_RX_SIZE },
		{ "set dump", VMAK_CMD_RING_SET, NLM_F_DUMP, -1, 0, 0, -EOPNOTSUPP, 0 },
		{ "rule-get do", VMAK_CMD_RULE_GET, 0, -1, 0, 0, -EOPNOTSUPP, 0 },
		{ "rule dump ring-id 0", VMAK_CMD_RULE_GET, NLM_F_DUMP, VMAK_A_RULE_RING_ID, 4, 0, -ERANGE, VMAK_A_RULE_RING_ID },
		{ "rule dump reply-only cookie", VMAK_CMD_RULE_GET, NLM_F_DUMP, VMAK_A_RULE_COOKIE, 4, 1, -EINVAL, VMAK_A_RULE_COOKIE },
		{ "notification as request", VMAK_CMD_RING_CREATE_NTF, 0, -1, 0, 0, -EOPNOTSUPP, 0 },
	};
	struct nlmsghdr *nlh;
	struct tnl nl;

	ASSERT_EQ(0, tnl_open(&nl));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct bad *b = &bad[i];
		uint64_t v = b->val;
		int err;

		nlh = tnl_msg(&nl, buf, b->cmd, b->flags);
		/* set requests name the fixture's ring unless testing its absence */
		if (b->cmd == VMAK_CMD_RING_SET && b->names != -VMAK_A_RING_ID)
			mnl_attr_put_u32(nlh, VMAK_A_RING_ID, self->id);
		if (b->attr >= 0)
			mnl_attr_put(nlh, (uint16_t)b->attr, (size_t)b->len, &v);
		err = tnl_talk(&nl, nlh, NULL, NULL);
		TH_LOG("%s: %d, extack \"%s\", attr %d, missing %d", b->what,
		       err, nl.ext_msg, nl.ext_attr, nl.ext_miss);
		EXPECT_EQ(b->err, err);
		if (b->names > 0)
			EXPECT_EQ(b->names, nl.ext_attr);
		if (b->names < 0)
			EXPECT_EQ(-b->names, nl.ext_miss);
		if (b->err != -EOPNOTSUPP && b->names)
			EXPECT_NE('\0', nl.ext_msg[0] | (nl.ext_attr > 0) | (nl.ext_miss > 0));
	}
	tnl_close(&nl);

	/* The library turns the offset into the attribute's name. */
	EXPECT_EQ(-ERANGE, vmak_ctl_set_moderation(self->id, 65536, -1));
	TH_LOG("%s", vmak_last_error());
	EXPECT_TRUE(strstr(vmak_last_error(), "(attribute moderation-count)") != NULL);
	EXPECT_EQ(-ERANGE, vmak_ctl_set_moderation(self->id, -1, 2000000));
	EXPECT_TRUE(strstr(vmak_last_error(), "(attribute moderation-usec)") != NULL);
	EXPECT_EQ(-ENOENT, vmak_ctl_arm(big));
	EXPECT_TRUE(strstr(vmak_last_error(), "no such ring") != NULL);
}

/* ---- dumps while rings come and go ------------------------------------- */

#define STABLE 1000

struct dump_check {
	uint32_t last;
	int n, bad_order, mine;
	uint32_t lo, hi;	/* the stable rings' id range */
	uint8_t *seen;
};

static int check_ring(const struct vmak_ring_status *st, void *arg)
{
	struct dump_check *c = arg;

	if (st->id <= c->last)
		c->bad_order++;
	c->last = st->id;
	c->n++;
	if (st->id >= c->lo && st->id <= c->hi && st->owner_pid == (uint32_t)getpid()) {
		c->seen[st->id - c->lo]++;
		c->mine++;
	}
	return 0;
}

TEST_F_TIMEOUT(ring, dump_1000_rings_while_rings_come_and_go, 300)
{
	struct rlimit rl = { 4096, 4096 };
	struct vmak_ring_filter f = { .sz = sizeof(f) };
	static int fds[STABLE];
	struct dump_check c;
	uint32_t ids[STABLE];
	int fam = vmak_family();
	pid_t churn;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (int i = 0; i < STABLE; i++) {
		fds[i] = socket(fam, SOCK_RAW, 0);
		ASSERT_GE(fds[i], 0);
		ids[i] = ring_id(fds[i]);
	}
	churn = fork_child();
	ASSERT_GE(churn, 0);
	if (churn == 0) {
		/* Rings appear and vanish around the stable ones. */
		for (;;) {
			int tmp[50];

			for (int i = 0; i < 50; i++)
				tmp[i] = socket(fam, SOCK_RAW, 0);
			for (int i = 0; i < 50; i++)
				close(tmp[i]);
		}
	}
	for (int round = 0; round < 5; round++) {
		memset(&c, 0, sizeof(c));
		c.lo = ids[0];
		c.hi = ids[STABLE - 1];
		c.seen = calloc(c.hi - c.lo + 1, 1);
		ASSERT_EQ(0, vmak_ctl_ring_list(round & 1 ? &f : NULL, check_ring, &c));
		EXPECT_EQ(0, c.bad_order);
		EXPECT_EQ(STABLE, c.mine);
		for (int i = 0; i < STABLE; i++)
			EXPECT_EQ(1, c.seen[ids[i] - c.lo]);
		TH_LOG("dump %d: %d rings, %d of them ours", round, c.n, c.mine);
		free(c.seen);
		f.owner_pid = (uint32_t)getpid();	/* odd rounds: filtered */
		if (round & 1)	/* only ours: the stable ones and the fixture's */
			EXPECT_EQ(STABLE + 1, c.n);
	}
	kill(churn, SIGKILL);
	waitpid(churn, NULL, 0);
	for (int i = 0; i < STABLE; i++)
		close(fds[i]);
}

TEST_F_TIMEOUT(ring, fuzz_100000_messages, 600)
{
	char *batch = malloc(1 << 16), *rbuf = malloc(1 << 16);
	struct vmak_info info = { .sz = sizeof(info) };
	int rcv = 4 << 20, sent = 0, replies = 0;
	struct tnl nl;

	ASSERT_EQ(0, tnl_open(&nl));
	setsockopt(mnl_socket_get_fd(nl.sock), SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv));
	while (sent < 100000) {
		size_t off = 0;

		/* 64 messages per send; the kernel answers them in turn. */
		for (int m = 0; m < 64; m++, sent++)
			off += fuzz_genl_msg(batch + off, nl.family_id,
					     (uint32_t)sent, &self->id, 1);
		ASSERT_EQ((ssize_t)off, mnl_socket_sendto(nl.sock, batch, off));
		/* Drain what came back; overflow (ENOBUFS) is fine. */
		for (;;) {
			ssize_t n = recv(mnl_socket_get_fd(nl.sock), rbuf, 1 << 16,
					 MSG_DONTWAIT);

			if (n < 0 && errno == ENOBUFS)
				continue;
			if (n <= 0)
				break;
			replies++;
		}
	}
	tnl_close(&nl);
	free(batch);
	free(rbuf);
	TH_LOG("%d messages sent, %d reply batches read", sent, replies);
	/* Still answering, and the ring still works. */
	ASSERT_EQ(0, vmak_info_get(&info));
	ASSERT_EQ(0, vmak_ctl_set_moderation(self->id, 0, 0));
	send_one(self->tx);
	EXPECT_EQ(1, rx_wait(&self->rs, 2000));
}

TEST_HARNESS_MAIN
