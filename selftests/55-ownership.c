// SPDX-License-Identifier: GPL-2.0
/*
 * An unprivileged ring takes and sends only what its owner owns
 * (Documentation/security.rst). Each test is a scenario of the module
 * review: user 65534 ("nobody") opens a ring and tries to reach traffic
 * that is not its own (other hosts behind a bridge, a macvlan or a VLAN
 * device; another user's socket after connect, disconnect or
 * SO_BINDTODEVICE; addresses it does not have), and another user's plain
 * socket must still receive everything.
 *
 *   netns a                       netns b                     netns c
 *   va --- veth ---  vb (ring here) [br0 | macvlan | vlan] --- host 10.77.0.3
 *   10.77.0.1        10.77.0.2
 */
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "common.h"

#define PORT	6100
#define NRECV	20
#define ADDR_C	"10.77.0.3"
#define GROUP	"239.1.2.3"

FIXTURE(own)
{
	struct vnet net;
	char ns_c[32];
	int other_if;
};

FIXTURE_SETUP(own)
{
	struct rlimit rl = { 16 << 20, 16 << 20 };
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, vnet_setup(&self->net, 1));
	snprintf(self->ns_c, sizeof(self->ns_c), "vmt-c%d", getpid());
	/* Rings and UMEMs of nobody count against its RLIMIT_MEMLOCK. */
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
}

FIXTURE_TEARDOWN(own)
{
	regain_privileges();
	sh("ip netns del %s 2>/dev/null || true", self->ns_c);
	vnet_teardown(&self->net);
}

/* The MAC address of dev (in the current netns) into mac. */
static int device_mac(const char *dev, uint8_t *mac)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	err = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (!err)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return err;
}

/* A small receive ring set on ifindex (and a TX ring with tx). */
static int small_ring(struct vmak_ringset *rs, int ifindex, bool tx)
{
	struct vmak_ringset_config cfg;
	int err;

	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)ifindex;
	cfg.rx_size = cfg.fill_size = 64;
	if (tx)
		cfg.tx_size = cfg.comp_size = 64;
	cfg.umem_len = 256 * 2048;
	err = vmak_ringset_open(rs, &cfg);
	if (!err)
		vmak_ringset_fill(rs, 0, 64);
	return err;
}

static struct vmak_statistics ring_stats(struct vmak_ringset *rs)
{
	struct vmak_statistics st;

	memset(&st, 0, sizeof(st));
	vmak_statistics_get(rs->fd, &st, sizeof(st));
	return st;
}

/*
 * As nobody: a socket bound to 0.0.0.0:PORT, steered into a new small
 * ring on ifindex (rs); its fd, or -1. Privileges are back on return.
 */
static int nobody_wildcard_ring(struct vmak_ringset *rs, int ifindex)
{
	int fd = -1;

	if (drop_privileges())
		return -1;
	fd = udp_bound(AF_INET, "0.0.0.0", PORT);
	if (fd >= 0 && small_ring(rs, ifindex, false)) {
		close(fd);
		fd = -1;
	} else if (fd >= 0 && vmak_rule_add_socket(rs->fd, fd, 1)) {
		vmak_ringset_close(rs);
		close(fd);
		fd = -1;
	}
	regain_privileges();
	return fd;
}

/* Send NRECV datagrams from netns a to dst:PORT and wait for the sender. */
static int send_from_a(struct vnet *net, const char *dst)
{
	struct send_spec s = {
		.ns = net->ns_a, .dst = dst, .dport = PORT, .count = NRECV,
		.size = 64, .pause_us = 1000,
	};

	return sender_wait(sender_start(&s));
}

/* Datagrams waiting on fd, read without blocking. */
static int drain(int fd)
{
	char buf[2048];
	int n = 0;

	usleep(200000);
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		n++;
	return n;
}

/* A socket of root in netns ns, bound to ip:PORT. */
static int udp_in_ns(struct vnet *net, const char *ns, const char *ip)
{
	int fd;

	if (ns_enter(ns))
		return -1;
	fd = udp_bound(AF_INET, ip, PORT);
	if (ns_enter(net->ns_b))
		return -1;
	return fd;
}

/*
 * The scenario of the bridge, macvlan and VLAN tests: nobody steers
 * 0.0.0.0:PORT into a ring on vb; traffic for host c (10.77.0.3, behind vb)
 * must reach c's socket, and none of it the ring.
 */
static void host_behind_vb(struct __test_metadata *_metadata,
			   FIXTURE_DATA(own) *self, const char *dst)
{
	struct vmak_ringset rs;
	struct vmak_statistics st;
	int mine, theirs;

	theirs = udp_in_ns(&self->net, self->ns_c, dst);
	ASSERT_GE(theirs, 0);
	mine = nobody_wildcard_ring(&rs, self->net.ifindex_b);
	ASSERT_GE(mine, 0);
	ASSERT_EQ(0, send_from_a(&self->net, dst));
	EXPECT_EQ(NRECV, drain(theirs));
	st = ring_stats(&rs);
	TH_LOG("ring: rx_packets %llu rx_foreign %llu",
	       (unsigned long long)st.rx_packets,
	       (unsigned long long)st.rx_foreign);
	EXPECT_EQ(0, st.rx_packets);
	vmak_ringset_close(&rs);
	close(mine);
	close(theirs);
}

/* b bridges vb and a veth to c; the ring sits on the bridge port. */
TEST_F(own, bridged_host_keeps_its_traffic)
{
	ASSERT_EQ(0, sh("ip netns add %s", self->ns_c));
	ASSERT_EQ(0, sh("ip link add br0 type bridge && ip link set br0 up && "
			"ip link set %s master br0 && "
			"ip link add name vcb type veth peer name vc && "
			"ip link set vcb master br0 && ip link set vcb up && "
			"ip link set vc netns %s && "
			"ip -n %s addr add " ADDR_C "/24 dev vc && "
			"ip -n %s link set vc up && ip -n %s link set lo up",
			self->net.dev_b, self->ns_c, self->ns_c, self->ns_c,
			self->ns_c));
	host_behind_vb(_metadata, self, ADDR_C);
}

/* c owns a macvlan on vb: frames for its MAC cross vb's ingress. */
TEST_F(own, macvlan_host_keeps_its_traffic)
{
	ASSERT_EQ(0, sh("ip netns add %s", self->ns_c));
	ASSERT_EQ(0, sh("ip link add link %s name mv0 type macvlan mode bridge && "
			"ip link set mv0 netns %s && "
			"ip -n %s addr add " ADDR_C "/24 dev mv0 && "
			"ip -n %s link set mv0 up", self->net.dev_b, self->ns_c,
			self->ns_c, self->ns_c));
	host_behind_vb(_metadata, self, ADDR_C);
}

/* c owns VLAN 5 on vb; a sends tagged frames. */
TEST_F(own, vlan_host_keeps_its_traffic)
{
	ASSERT_EQ(0, sh("ip netns add %s", self->ns_c));
	ASSERT_EQ(0, sh("ip -n %s link add link %s name va.5 type vlan id 5 && "
			"ip -n %s addr add 10.78.0.1/24 dev va.5 && "
			"ip -n %s link set va.5 up",
			self->net.ns_a, self->net.dev_a, self->net.ns_a,
			self->net.ns_a));
	ASSERT_EQ(0, sh("ip link add link %s name vb.5 type vlan id 5 && "
			"ip link set vb.5 netns %s && "
			"ip -n %s addr add 10.78.0.3/24 dev vb.5 && "
			"ip -n %s link set vb.5 up", self->net.dev_b, self->ns_c,
			self->ns_c, self->ns_c));
	host_behind_vb(_metadata, self, "10.78.0.3");
}

/* A UDP socket with IP_FREEBIND (IPV6_FREEBIND) bound to ip:PORT, or -1. */
static int freebind_socket(const char *ip)
{
	struct sockaddr_storage ss;
	int one = 1, fam, fd;
	socklen_t len;

	fam = sockaddr_of(ip, PORT, &ss, &len);
	fd = socket(fam, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, fam == AF_INET ? IPPROTO_IP : IPPROTO_IPV6,
		       fam == AF_INET ? IP_FREEBIND : IPV6_FREEBIND,
		       &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* IP_FREEBIND / IPV6_FREEBIND sockets and addresses the host lacks. */
TEST_F(own, foreign_addresses_refused)
{
	static const char *const freebound[] = {
		"10.77.0.99", "fd00:77::99",
		/* refused on a local address too: the option is a claim on
		 * addresses the host does not have
		 */
		ADDR_B,
	};
	struct vmak_ringset rs;
	int fd;

	ASSERT_EQ(0, drop_privileges());
	ASSERT_EQ(0, small_ring(&rs, self->net.ifindex_b, true));

	for (uint32_t i = 0; i < 3; i++) {
		fd = freebind_socket(freebound[i]);
		ASSERT_GE(fd, 0);
		EXPECT_EQ(-EPERM, vmak_rule_add_socket(rs.fd, fd, i + 1));
		close(fd);
	}

	/* ip_nonlocal_bind lets any socket bind a foreign address. */
	regain_privileges();
	ASSERT_EQ(0, sh("sysctl -qw net.ipv4.ip_nonlocal_bind=1"));
	ASSERT_EQ(0, drop_privileges());
	fd = udp_bound(AF_INET, "10.77.0.98", PORT);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EADDRNOTAVAIL, vmak_rule_add_socket(rs.fd, fd, 4));
	close(fd);
	vmak_ringset_close(&rs);
}

/*
 * C2: nobody's wildcard socket connects away, giving up its claim on
 * 10.77.0.22:PORT, which another user then binds: that user gets its
 * traffic; the stale rule counts it as dead.
 */
TEST_F(own, connect_gives_up_the_wildcard)
{
	struct sockaddr_storage ss;
	struct vmak_ringset rs;
	struct vmak_statistics st;
	socklen_t len;
	int mine, theirs;

	ASSERT_EQ(0, sh("ip addr add 10.77.0.22/24 dev %s", self->net.dev_b));
	ASSERT_EQ(0, drop_privileges());
	mine = udp_bound(AF_INET, "0.0.0.0", PORT);
	ASSERT_GE(mine, 0);
	ASSERT_EQ(0, small_ring(&rs, self->net.ifindex_b, false));
	ASSERT_EQ(0, vmak_rule_add_socket(rs.fd, mine, 1));
	sockaddr_of(ADDR_A, 9, &ss, &len);
	ASSERT_EQ(0, connect(mine, (struct sockaddr *)&ss, len));
	regain_privileges();
	ASSERT_EQ(0, drop_privileges_to(4242));
	theirs = udp_bound(AF_INET, "10.77.0.22", PORT);
	ASSERT_GE(theirs, 0);
	regain_privileges();
	ASSERT_EQ(0, send_from_a(&self->net, "10.77.0.22"));
	EXPECT_EQ(NRECV, drain(theirs));
	st = ring_stats(&rs);
	EXPECT_EQ(0, st.rx_packets);
	EXPECT_GE(st.rx_rule_dead, 1);
	vmak_ringset_close(&rs);
	close(mine);
	close(theirs);
}

/*
 * A wildcard socket's ring takes what is addressed to the host's
 * addresses as they are now, however much it took for an address before
 * (the hook keeps the last answer until an address changes): 10.77.0.23
 * removed, datagrams a stale neighbour entry on a still sends there reach
 * neither the ring nor anyone; given back, the ring takes them again.
 */
TEST_F(own, wildcard_follows_the_host_addresses)
{
	struct vmak_statistics before, st;
	struct vmak_ringset rs;
	uint8_t m[6];
	int mine;

	ASSERT_EQ(0, device_mac(self->net.dev_b, m));
	ASSERT_EQ(0, sh("ip addr add 10.77.0.23/24 dev %s", self->net.dev_b));
	ASSERT_EQ(0, sh("ip -n %s neigh replace 10.77.0.23 lladdr "
			"%02x:%02x:%02x:%02x:%02x:%02x dev %s nud permanent",
			self->net.ns_a, m[0], m[1], m[2], m[3], m[4], m[5],
			self->net.dev_a));
	mine = nobody_wildcard_ring(&rs, self->net.ifindex_b);
	ASSERT_GE(mine, 0);

	ASSERT_EQ(0, send_from_a(&self->net, "10.77.0.23"));
	usleep(200000);		/* the last ones through the backlog */
	st = ring_stats(&rs);
	EXPECT_EQ(NRECV, st.rx_packets);

	before = st;
	ASSERT_EQ(0, sh("ip addr del 10.77.0.23/24 dev %s", self->net.dev_b));
	ASSERT_EQ(0, send_from_a(&self->net, "10.77.0.23"));
	EXPECT_EQ(0, drain(mine));
	st = ring_stats(&rs);
	EXPECT_EQ(before.rx_packets, st.rx_packets);
	EXPECT_EQ(before.rx_foreign + NRECV, st.rx_foreign);

	ASSERT_EQ(0, sh("ip addr add 10.77.0.23/24 dev %s", self->net.dev_b));
	ASSERT_EQ(0, send_from_a(&self->net, "10.77.0.23"));
	usleep(200000);		/* the last ones through the backlog */
	st = ring_stats(&rs);
	EXPECT_EQ(before.rx_packets + NRECV, st.rx_packets);
	vmak_ringset_close(&rs);
	close(mine);
}

/*
 * C2: one socket autobinds, is steered, disconnects and autobinds again,
 * many times; the ports it gave up go to another user, whose traffic no
 * old rule takes.
 */
TEST_F(own, disconnect_loop_collects_nothing)
{
	struct send_spec s = { .count = NRECV, .size = 64, .pause_us = 1000 };
	struct sockaddr_storage dst, me;
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	struct vmak_ringset rs;
	struct vmak_statistics st;
	socklen_t len, mlen;
	uint16_t first = 0;
	int u, theirs;

	ASSERT_EQ(0, drop_privileges());
	ASSERT_EQ(0, small_ring(&rs, self->net.ifindex_b, false));
	u = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_GE(u, 0);
	sockaddr_of(ADDR_A, 9, &dst, &len);
	for (uint32_t i = 0; i < 20; i++) {
		/* autobind to a new port, add a rule for it, give it up */
		ASSERT_EQ(1, sendto(u, "x", 1, 0, (struct sockaddr *)&dst, len));
		mlen = sizeof(me);
		ASSERT_EQ(0, getsockname(u, (struct sockaddr *)&me, &mlen));
		if (!first)
			first = ntohs(((struct sockaddr_in *)&me)->sin_port);
		ASSERT_EQ(0, vmak_rule_add_socket(rs.fd, u, i + 1));
		ASSERT_EQ(0, connect(u, (struct sockaddr *)&dst, len));
		ASSERT_EQ(0, connect(u, &unspec, sizeof(unspec)));
	}
	/* Hashed again (on yet another port): its old rules must stay dead. */
	ASSERT_EQ(1, sendto(u, "x", 1, 0, (struct sockaddr *)&dst, len));
	regain_privileges();
	ASSERT_EQ(0, drop_privileges_to(4242));
	theirs = socket(AF_INET, SOCK_DGRAM, 0);
	sockaddr_of("0.0.0.0", first, &me, &mlen);
	ASSERT_EQ(0, bind(theirs, (struct sockaddr *)&me, mlen));
	regain_privileges();
	s.ns = self->net.ns_a;
	s.dst = ADDR_B;
	s.dport = first;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	EXPECT_EQ(NRECV, drain(theirs));
	st = ring_stats(&rs);
	EXPECT_EQ(0, st.rx_packets);
	vmak_ringset_close(&rs);
	close(u);
	close(theirs);
}

/* C3: a socket bound to another device may not steer this one's port. */
TEST_F(own, bound_device_must_be_the_rings)
{
	struct sockaddr_storage any;
	struct vmak_ringset rs;
	struct vmak_statistics st;
	int mine, theirs;
	socklen_t len;

	sockaddr_of("0.0.0.0", PORT, &any, &len);
	ASSERT_EQ(0, drop_privileges());
	ASSERT_EQ(0, small_ring(&rs, self->net.ifindex_b, false));
	mine = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_EQ(0, setsockopt(mine, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3));
	ASSERT_EQ(0, bind(mine, (struct sockaddr *)&any, len));
	EXPECT_EQ(-EPERM, vmak_rule_add_socket(rs.fd, mine, 1));
	close(mine);

	/* Steered first, then bound to lo: the rule stops matching, and
	 * another user's socket on vb gets the port's traffic.
	 */
	mine = udp_bound(AF_INET, "0.0.0.0", PORT);
	ASSERT_GE(mine, 0);
	ASSERT_EQ(0, vmak_rule_add_socket(rs.fd, mine, 2));
	ASSERT_EQ(0, setsockopt(mine, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3));
	regain_privileges();
	ASSERT_EQ(0, drop_privileges_to(4242));
	theirs = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_EQ(0, setsockopt(theirs, SOL_SOCKET, SO_BINDTODEVICE,
				self->net.dev_b, strlen(self->net.dev_b) + 1));
	ASSERT_EQ(0, bind(theirs, (struct sockaddr *)&any, len));
	regain_privileges();
	ASSERT_EQ(0, send_from_a(&self->net, ADDR_B));
	EXPECT_EQ(NRECV, drain(theirs));
	st = ring_stats(&rs);
	EXPECT_EQ(0, st.rx_packets);
	EXPECT_GE(st.rx_rule_dead, 1);
	vmak_ringset_close(&rs);
	close(mine);
	close(theirs);
}

static int join(int fd, const char *group, int ifindex)
{
	struct ip_mreqn mr = { .imr_ifindex = ifindex };

	inet_pton(AF_INET, group, &mr.imr_multiaddr);
	return setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr));
}

/* Group rules: joined on the ring's device, bound to the wildcard or to
 * the group, and only while the socket stays joined.
 */
TEST_F(own, group_rules_follow_the_membership)
{
	struct send_spec s = {
		.dst = GROUP, .dport = PORT, .count = NRECV, .size = 64,
		.pause_us = 1000,
	};
	struct ip_mreqn mr = {};
	struct sockaddr_storage g;
	struct vmak_ringset rs;
	struct vmak_statistics st;
	socklen_t glen;
	int fd;

	sockaddr_of(GROUP, PORT, &g, &glen);
	ASSERT_EQ(0, sh("ip link add vmakdummy0 type dummy && "
			"ip link set vmakdummy0 up"));
	self->other_if = (int)if_nametoindex("vmakdummy0");
	ASSERT_EQ(0, drop_privileges());
	ASSERT_EQ(0, small_ring(&rs, self->net.ifindex_b, false));

	/* bound to a unicast address: it does not get the group */
	fd = udp_bound(AF_INET, ADDR_B, PORT);
	ASSERT_EQ(0, join(fd, GROUP, self->net.ifindex_b));
	EXPECT_EQ(-EADDRNOTAVAIL, vmak_rule_add_group(rs.fd, fd,
						      (struct sockaddr *)&g, 1));
	close(fd);

	/* joined on another device */
	fd = udp_bound(AF_INET, "0.0.0.0", PORT);
	ASSERT_EQ(0, join(fd, GROUP, self->other_if));
	EXPECT_EQ(-EADDRNOTAVAIL, vmak_rule_add_group(rs.fd, fd,
						      (struct sockaddr *)&g, 2));
	close(fd);

	/* joined here: steered; after leaving, no longer */
	fd = udp_bound(AF_INET, "0.0.0.0", PORT);
	ASSERT_EQ(0, join(fd, GROUP, self->net.ifindex_b));
	ASSERT_EQ(0, vmak_rule_add_group(rs.fd, fd, (struct sockaddr *)&g, 3));
	regain_privileges();
	s.ns = self->net.ns_a;
	s.mcast_if = self->net.dev_a;
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	usleep(200000);
	st = ring_stats(&rs);
	EXPECT_EQ(NRECV, st.rx_packets);
	mr.imr_ifindex = self->net.ifindex_b;
	inet_pton(AF_INET, GROUP, &mr.imr_multiaddr);
	ASSERT_EQ(0, setsockopt(fd, IPPROTO_IP, IP_DROP_MEMBERSHIP, &mr, sizeof(mr)));
	ASSERT_EQ(0, sender_wait(sender_start(&s)));
	usleep(200000);
	st = ring_stats(&rs);
	EXPECT_EQ(NRECV, st.rx_packets);	/* no more */
	EXPECT_GE(st.rx_rule_dead, 1);
	vmak_ringset_close(&rs);
	close(fd);
}

/* C5: the header check knows Ethernet only; an unprivileged TX ring is
 * refused on an L3 device, where its frame would be a spoofed IP packet.
 */
TEST_F(own, unprivileged_tx_only_on_ethernet)
{
	struct vmak_ringset rs;
	int ifindex;

	ASSERT_EQ(0, kmod_load("tun"));
	ASSERT_EQ(0, sh("ip tuntap add dev vtun0 mode tun && ip link set vtun0 up"));
	ifindex = (int)if_nametoindex("vtun0");
	ASSERT_GT(ifindex, 0);
	ASSERT_EQ(0, drop_privileges());
	EXPECT_EQ(-EOPNOTSUPP, small_ring(&rs, ifindex, true));
	/* receiving there is fine */
	ASSERT_EQ(0, small_ring(&rs, ifindex, false));
	vmak_ringset_close(&rs);
	regain_privileges();
	/* CAP_NET_RAW may send there, as AF_PACKET may */
	ASSERT_EQ(0, small_ring(&rs, ifindex, true));
	vmak_ringset_close(&rs);
}

/* C9: raw rules whose source could never match are refused. */
TEST_F(own, raw_rules_that_cannot_match_refused)
{
	struct vmak_ringset rs;
	struct vmak_rule r;

	ASSERT_EQ(0, small_ring(&rs, self->net.ifindex_b, false));
	memset(&r, 0, sizeof(r));
	r.kind = VMAK_RULE_RAW;
	r.af = AF_INET;
	r.proto = IPPROTO_UDP;
	r.dst_port = htons(PORT);
	inet_pton(AF_INET, ADDR_B, r.dst_addr);
	r.src_port = htons(7);		/* a port without an address */
	r.cookie = 1;
	EXPECT_ERRNO(EINVAL, setsockopt(rs.fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r)));
	r.src_port = 0;			/* an address without a port */
	inet_pton(AF_INET, ADDR_A, r.src_addr);
	EXPECT_ERRNO(EINVAL, setsockopt(rs.fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r)));
	r.src_port = htons(7);		/* a source with a wildcard destination */
	memset(r.dst_addr, 0, sizeof(r.dst_addr));
	EXPECT_ERRNO(EINVAL, setsockopt(rs.fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r)));
	inet_pton(AF_INET, ADDR_B, r.dst_addr);	/* the whole 4-tuple */
	EXPECT_EQ(0, setsockopt(rs.fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r)));
	vmak_ringset_close(&rs);
}

/* L2: UMEM only over anonymous, shmem or hugetlb memory. */
TEST_F(own, file_backed_umem_refused)
{
	struct vmak_umem_reg reg = { .len = 64 * 2048, .chunk_size = 2048 };
	char dir[] = "/tmp/vmak-ramfs-XXXXXX", path[64];
	void *mem;
	int fd, rfd;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, mount("none", dir, "ramfs", 0, NULL));
	snprintf(path, sizeof(path), "%s/umem", dir);
	rfd = open(path, O_RDWR | O_CREAT, 0600);
	ASSERT_GE(rfd, 0);
	ASSERT_EQ(0, ftruncate(rfd, reg.len));
	mem = mmap(NULL, reg.len, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	ASSERT_NE(MAP_FAILED, mem);
	fd = socket(vmak_family(), SOCK_RAW, 0);
	reg.addr = (uintptr_t)mem;
	EXPECT_ERRNO(EFAULT, setsockopt(fd, SOL_VMAK, VMAK_UMEM_REG, &reg, sizeof(reg)));
	close(fd);
	munmap(mem, reg.len);

	/* memfd (shmem) is fine */
	rfd = memfd_create("umem", 0);
	ASSERT_EQ(0, ftruncate(rfd, reg.len));
	mem = mmap(NULL, reg.len, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	ASSERT_NE(MAP_FAILED, mem);
	fd = socket(vmak_family(), SOCK_RAW, 0);
	reg.addr = (uintptr_t)mem;
	EXPECT_EQ(0, setsockopt(fd, SOL_VMAK, VMAK_UMEM_REG, &reg, sizeof(reg)));
	close(fd);
	munmap(mem, reg.len);
	close(rfd);
	umount(dir);
	rmdir(dir);
}

/*
 * C4: ring memory is the owner's: in a 64 MiB memory cgroup, with no
 * RLIMIT_MEMLOCK to stop it first, an unprivileged process asking for
 * rings of 2^20 entries gets ENOMEM, and the host does not lose more.
 */
TEST_F_TIMEOUT(own, rings_charged_to_the_memory_cgroup, 180)
{
	const char *cg = "/sys/fs/cgroup";
	uint64_t avail0, avail1;
	int st, pipefd[2];
	pid_t child;
	char c;

	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK))
		ASSERT_EQ(0, mount("none", cg, "cgroup2", 0, NULL));
	sh("echo +memory > %s/cgroup.subtree_control", cg);
	sh("rmdir %s/vmak-test 2>/dev/null || true", cg);
	ASSERT_EQ(0, sh("mkdir %s/vmak-test && echo 64M > %s/vmak-test/memory.max",
			cg, cg));
	avail0 = meminfo_kb("MemAvailable");
	ASSERT_EQ(0, pipe(pipefd));
	child = fork_child();
	if (!child) {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
		uint32_t big = 1U << 20;
		int err = 0, n = 0;

		if (sh("echo %d > %s/vmak-test/cgroup.procs", getpid(), cg) ||
		    setrlimit(RLIMIT_MEMLOCK, &rl) || drop_privileges())
			_exit(2);
		for (n = 0; n < 64 && !err; n++) {
			int fd = socket(vmak_family(), SOCK_RAW, 0);

			if (fd < 0)
				_exit(3);
			if (setsockopt(fd, SOL_VMAK, VMAK_RX_RING, &big, 4) ||
			    setsockopt(fd, SOL_VMAK, VMAK_TX_RING, &big, 4) ||
			    setsockopt(fd, SOL_VMAK, VMAK_FILL_RING, &big, 4) ||
			    setsockopt(fd, SOL_VMAK, VMAK_COMPLETION_RING, &big, 4))
				err = errno;
		}
		fprintf(stderr, "#   %d ring sets, then %s\n", n, strerror(err));
		if (write(pipefd[1], &c, 1) != 1)
			_exit(4);
		pause();	/* hold what it got until killed */
		_exit(err == ENOMEM ? 0 : 5);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	avail1 = meminfo_kb("MemAvailable");
	TH_LOG("MemAvailable %llu -> %llu KiB", (unsigned long long)avail0,
	       (unsigned long long)avail1);
	/* 64 MiB and some slack for what is not the cgroup's */
	EXPECT_LT(avail0 - (avail1 < avail0 ? avail1 : avail0), 96 * 1024);
	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	sh("rmdir %s/vmak-test", cg);
}

/*
 * C11: a garbage length on a paced ring completes at once as invalid
 * instead of arming a timer for hours; the next frame still goes.
 */
TEST_F(own, rate_limited_garbage_completes_at_once)
{
	struct vmak_rate_limit rl = { .rate = 100 };	/* 100 kbit/s */
	struct vmak_ringset rs;
	struct vmak_statistics st;
	uint32_t idx;

	ASSERT_EQ(0, small_ring(&rs, self->net.ifindex_b, true));
	ASSERT_EQ(0, setsockopt(rs.fd, SOL_VMAK, VMAK_TX_RATE_LIMIT, &rl, sizeof(rl)));
	ASSERT_EQ(1, vmak_ring_reserve(rs.tx, 1, &idx));
	vmak_ring_tx_desc(rs.tx, idx)->addr = 0;
	vmak_ring_tx_desc(rs.tx, idx)->len = 0xfffffff0;
	vmak_ring_tx_desc(rs.tx, idx)->options = 0;
	vmak_ring_submit(rs.tx, 1);
	sendto(rs.fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	usleep(100000);
	st = ring_stats(&rs);
	EXPECT_EQ(1, st.tx_invalid);
	EXPECT_EQ(1, *rs.comp->producer);
	vmak_ringset_close(&rs);
}

/*
 * C8: only UDP GSO is a train of datagrams. A UFO packet (one 4000-byte
 * datagram that IP would fragment), written by a VM's tap, is not cut into
 * "datagrams" with rewritten lengths: it counts as too big.
 */
TEST_F(own, ufo_from_a_tap_is_not_cut)
{
	struct {
		struct virtio_net_hdr vh;
		struct ethhdr eth;
		struct iphdr ip;
		struct udphdr udp;
		uint8_t payload[4000];
	} __attribute__((packed)) f = {};
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR };
	struct vmak_ringset rs;
	struct vmak_statistics st;
	int tfd, udp, ifindex;

	ASSERT_EQ(0, kmod_load("tun"));
	tfd = open("/dev/net/tun", O_RDWR);
	ASSERT_GE(tfd, 0);
	strcpy(ifr.ifr_name, "vmtap0");
	ASSERT_EQ(0, ioctl(tfd, TUNSETIFF, &ifr));
	ASSERT_EQ(0, sh("ip link set vmtap0 up && ip addr add 10.79.0.2/24 dev vmtap0"));
	ifindex = (int)if_nametoindex("vmtap0");
	ASSERT_EQ(0, ioctl(tfd, SIOCGIFHWADDR, &ifr));
	udp = udp_bound(AF_INET, "10.79.0.2", PORT);
	ASSERT_GE(udp, 0);
	ASSERT_EQ(0, small_ring(&rs, ifindex, false));
	ASSERT_EQ(0, vmak_rule_add_socket(rs.fd, udp, 1));

	f.vh.gso_type = VIRTIO_NET_HDR_GSO_UDP;
	f.vh.gso_size = 1400;
	f.vh.hdr_len = sizeof(f.eth) + sizeof(f.ip) + sizeof(f.udp);
	memcpy(f.eth.h_dest, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	memcpy(f.eth.h_source, "\x02\x00\x00\x00\x00\x01", ETH_ALEN);
	f.eth.h_proto = htons(ETH_P_IP);
	f.ip.version = 4;
	f.ip.ihl = 5;
	f.ip.ttl = 64;
	f.ip.protocol = IPPROTO_UDP;
	f.ip.tot_len = htons(sizeof(f) - sizeof(f.vh) - sizeof(f.eth));
	inet_pton(AF_INET, "10.79.0.1", &f.ip.saddr);
	inet_pton(AF_INET, "10.79.0.2", &f.ip.daddr);
	f.udp.source = htons(4000);
	f.udp.dest = htons(PORT);
	f.udp.len = htons(sizeof(f.udp) + sizeof(f.payload));
	ASSERT_EQ((ssize_t)sizeof(f), write(tfd, &f, sizeof(f)));
	usleep(200000);
	st = ring_stats(&rs);
	EXPECT_EQ(0, st.rx_packets);		/* not 3 "datagrams" */
	EXPECT_EQ(1, st.rx_too_big);
	vmak_ringset_close(&rs);
	close(udp);
	close(tfd);
}

/*
 * C7: a kick is bounded work. 5,000 socket rules (a disconnect loop) and a
 * 2^17-entry TX ring of frames from a port none of them owns: one kick
 * checks every frame (one index lookup each), yields between batches, and
 * a soft lockup or RCU stall on the console fails the run.
 */
TEST_F_TIMEOUT(own, header_check_of_a_full_ring_with_many_rules, 300)
{
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	struct vmak_ringset_config cfg;
	struct sockaddr_storage dst;
	struct vmak_ringset rs;
	struct vmak_statistics st;
	const uint32_t n = 1U << 17;
	uint32_t idx, i, rules;
	socklen_t len;
	double t0;
	int u, err;

	ASSERT_EQ(0, drop_privileges());
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)self->net.ifindex_b;
	cfg.rx_size = cfg.fill_size = 0;
	cfg.tx_size = cfg.comp_size = n;
	cfg.umem_len = 64 * 2048;
	ASSERT_EQ(0, vmak_ringset_open(&rs, &cfg));
	u = socket(AF_INET, SOCK_DGRAM, 0);
	sockaddr_of(ADDR_A, 9, &dst, &len);
	for (i = 0, rules = 0; rules < 5000 && i < 50000; i++) {
		ASSERT_EQ(1, sendto(u, "x", 1, 0, (struct sockaddr *)&dst, len));
		/* EEXIST: the autobind chose a port it had before */
		err = vmak_rule_add_socket(rs.fd, u, i + 1);
		if (err != -EEXIST) {
			ASSERT_EQ(0, err);
			rules++;
		}
		ASSERT_EQ(0, connect(u, &unspec, sizeof(unspec)));
	}
	ASSERT_EQ(5000, rules);
	/* A frame from the device's MAC and port 9, which no rule's socket
	 * holds.
	 */
	memset(rs.umem, 0, 128);
	ASSERT_EQ(0, device_mac(self->net.dev_b, (uint8_t *)rs.umem + 6));
	((uint8_t *)rs.umem)[12] = 0x08;		/* IPv4 */
	((uint8_t *)rs.umem)[14] = 0x45;
	((uint8_t *)rs.umem)[23] = IPPROTO_UDP;
	((uint8_t *)rs.umem)[35] = 9;			/* source port */
	ASSERT_EQ(n, vmak_ring_reserve(rs.tx, n, &idx));
	for (i = 0; i < n; i++) {
		vmak_ring_tx_desc(rs.tx, idx + i)->addr = 0;
		vmak_ring_tx_desc(rs.tx, idx + i)->len = 64;
		vmak_ring_tx_desc(rs.tx, idx + i)->options = 0;
	}
	vmak_ring_submit(rs.tx, n);
	t0 = mono();
	EXPECT_EQ(0, sendto(rs.fd, NULL, 0, 0, NULL, 0));
	TH_LOG("one kick of %u frames against 5000 rules: %.2f s", n, mono() - t0);
	st = ring_stats(&rs);
	EXPECT_EQ(n, st.tx_header_drop);
	EXPECT_EQ(0, st.tx_packets);
	vmak_ringset_close(&rs);
	close(u);
}

/*
 * C6: bind looks the device up, then takes rtnl; a device moved to another
 * netns in between must not end up with the ring bound to it there. A
 * mover takes a dummy device to netns c and back while rings bind to it:
 * a ring is never bound while its device is away.
 */
TEST_F_TIMEOUT(own, bind_races_a_netns_move, 240)
{
	struct vmak_ring_info info;
	socklen_t ilen = sizeof(info);
	char name[IF_NAMESIZE];
	int ifindex, bound = 0, bad = 0;
	pid_t mover;

	ASSERT_EQ(0, sh("ip netns add %s && ip link add vmkmove type dummy && "
			"ip link set vmkmove up", self->ns_c));
	ifindex = (int)if_nametoindex("vmkmove");
	ASSERT_GT(ifindex, 0);
	mover = fork_child();
	ASSERT_GE(mover, 0);
	if (!mover) {
		for (;;)
			sh("ip link set vmkmove netns %s 2>/dev/null; "
			   "ip -n %s link set vmkmove netns %s 2>/dev/null",
			   self->ns_c, self->ns_c, self->net.ns_b);
	}
	for (int i = 0; i < 300; i++) {
		struct vmak_ringset rs;

		if (small_ring(&rs, ifindex, false))
			continue;	/* ENODEV: it was away */
		bound++;
		/*
		 * A move unlists the device before it unbinds its rings
		 * (with a grace period between): only once the device is
		 * listed in c has the move finished. A ring still bound then
		 * was bound to the device in c.
		 */
		for (int t = 0; t < 2000 && !if_indextoname(ifindex, name); t++) {
			bool in_c;

			ASSERT_EQ(0, getsockopt(rs.fd, SOL_VMAK, VMAK_RING_INFO,
						&info, &ilen));
			if (info.state != VMAK_STATE_BOUND)
				break;
			ASSERT_EQ(0, ns_enter(self->ns_c));
			in_c = if_nametoindex("vmkmove") > 0;
			ASSERT_EQ(0, ns_enter(self->net.ns_b));
			if (in_c) {
				ASSERT_EQ(0, getsockopt(rs.fd, SOL_VMAK,
							VMAK_RING_INFO, &info, &ilen));
				bad += info.state == VMAK_STATE_BOUND;
				break;
			}
			usleep(1000);
		}
		vmak_ringset_close(&rs);
	}
	kill(mover, SIGKILL);
	waitpid(mover, NULL, 0);
	TH_LOG("%d of 300 binds succeeded", bound);
	EXPECT_EQ(0, bad);
}

/* L1: an administrator can forbid unprivileged rings altogether. */
TEST_F(own, administrator_forbids_unprivileged_rings)
{
	const char *knob = "/sys/module/vmak/parameters/unprivileged";
	int fd;

	ASSERT_EQ(0, write_knob(knob, "0"));
	ASSERT_EQ(0, drop_privileges());
	EXPECT_ERRNO(EPERM, socket(vmak_family(), SOCK_RAW, 0));
	regain_privileges();
	fd = socket(vmak_family(), SOCK_RAW, 0);
	EXPECT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(0, write_knob(knob, "1"));
	ASSERT_EQ(0, drop_privileges());
	fd = socket(vmak_family(), SOCK_RAW, 0);
	EXPECT_GE(fd, 0);
	close(fd);
}

TEST_HARNESS_MAIN
