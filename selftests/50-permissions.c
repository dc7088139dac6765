// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what. Each identity runs in a forked child: root, a user
 * with only CAP_NET_RAW, a user with only CAP_NET_ADMIN, a user with no
 * capability, and a user in a new user namespace (root there, owning a
 * new network namespace). For each, the operations that must succeed and
 * those that must fail with EPERM; and what crosses network namespaces.
 */
#include <sys/wait.h>
#include <linux/capability.h>

#include "harness.h"
#include "common.h"

#define PORT 5000

enum who { ROOT, NET_RAW, NET_ADMIN, NOBODY, USERNS };

FIXTURE(perm)
{
	struct vnet net;
	struct vmak_ringset root_ring;	/* root's ring in b */
	uint32_t root_id;
};

FIXTURE_VARIANT(perm)
{
	enum who who;
};

FIXTURE_VARIANT_ADD(perm, root) { .who = ROOT };
FIXTURE_VARIANT_ADD(perm, cap_net_raw_only) { .who = NET_RAW };
FIXTURE_VARIANT_ADD(perm, cap_net_admin_only) { .who = NET_ADMIN };
FIXTURE_VARIANT_ADD(perm, unprivileged) { .who = NOBODY };
FIXTURE_VARIANT_ADD(perm, user_namespace) { .who = USERNS };

static int ring_info_flags(int fd)
{
	struct vmak_ring_info info;
	socklen_t len = sizeof(info);

	return getsockopt(fd, SOL_VMAK, VMAK_RING_INFO, &info, &len) ? -1 : (int)info.flags;
}

/* uid 65534 with exactly the capabilities in caps (effective, permitted). */
static int become(uint64_t caps)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};

	if (prctl(PR_SET_KEEPCAPS, 1) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -1;
	d[0].effective = d[0].permitted = (uint32_t)caps;
	d[1].effective = d[1].permitted = (uint32_t)(caps >> 32);
	if (syscall(SYS_capset, &h, d))
		return -1;
	/* setuid made us undumpable: /proc/self would stay root's */
	return prctl(PR_SET_DUMPABLE, 1);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* In a new user namespace: be its root (uid/gid 0 = our outside id), so
 * programs we exec keep the namespace's capabilities. */
static int map_root_to(unsigned int outside)
{
	char m[32];

	snprintf(m, sizeof(m), "0 %u 1", outside);
	return write_file("/proc/self/setgroups", "deny") ||
	       write_file("/proc/self/uid_map", m) ||
	       write_file("/proc/self/gid_map", m);
}

FIXTURE_SETUP(perm)
{
	struct vmak_ringset_config cfg;
	int fam;

	FAMILY_OR_SKIP(fam);
	self->root_ring.fd = -1;
	ASSERT_EQ(0, vnet_setup(&self->net, 1));
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)self->net.ifindex_b;
	cfg.rx_size = cfg.fill_size = 64;
	cfg.umem_len = 64 * 2048;
	ASSERT_EQ(0, vmak_ringset_open(&self->root_ring, &cfg));
	self->root_id = ring_id(self->root_ring.fd);
	ASSERT_NE(0, self->root_id);
}

FIXTURE_TEARDOWN(perm)
{
	vmak_ringset_close(&self->root_ring);
	vnet_teardown(&self->net);
}

/* What every identity tries; runs in the child. */
static void matrix(struct __test_metadata *_metadata, enum who who, int ifindex,
		   uint32_t root_id)
{
	int privileged_raw = who == ROOT || who == NET_RAW || who == USERNS;
	int admin = who == ROOT || who == NET_ADMIN || who == USERNS;
	int same_netns = who != USERNS;
	struct vmak_ringset_config cfg;
	struct vmak_ring_status *st = NULL;
	struct vmak_ringset rs;
	struct vmak_rule raw = { .kind = VMAK_RULE_RAW, .cookie = 9,
				 .af = AF_INET, .proto = IPPROTO_UDP };
	int udp, n = 0, err;

	/* Everyone may create, set up and bind a ring and steer its own
	 * socket (memory within RLIMIT_MEMLOCK). */
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)ifindex;
	cfg.rx_size = cfg.fill_size = 64;
	cfg.tx_size = cfg.comp_size = 64;
	cfg.umem_len = 64 * 2048;
	ASSERT_EQ(0, vmak_ringset_open(&rs, &cfg));
	udp = udp_bound(AF_INET, same_netns ? ADDR_B : "10.99.0.2", PORT + 1);
	ASSERT_GE(udp, 0);
	EXPECT_EQ(0, vmak_rule_add_socket(rs.fd, udp, 1));

	/* Raw rules and unchecked TX: CAP_NET_RAW in the netns's userns. */
	raw.dst_port = htons(PORT + 2);
	err = setsockopt(rs.fd, SOL_VMAK, VMAK_RULE_ADD, &raw, sizeof(raw)) ? errno : 0;
	EXPECT_EQ(privileged_raw ? 0 : EPERM, err);
	EXPECT_EQ(privileged_raw ? VMAK_INFO_TX_RAW : 0,
		  ring_info_flags(rs.fd) & VMAK_INFO_TX_RAW);

	/* Netlink: its own ring it may tune. */
	EXPECT_EQ(0, vmak_ctl_set_moderation(ring_id(rs.fd), 8, 0));
	EXPECT_EQ(0, vmak_ctl_arm(ring_id(rs.fd)));

	/* Root's ring: visible in the same netns, tunable with NET_ADMIN. */
	err = ring_get(root_id, &st);
	EXPECT_EQ(same_netns ? 0 : -ENOENT, err);
	err = vmak_ctl_set_moderation(root_id, 4, 0);
	EXPECT_EQ(!same_netns ? -ENOENT : admin ? 0 : -EPERM, err);
	EXPECT_EQ(0, vmak_ctl_ring_list(NULL, count_rings, &n));
	EXPECT_EQ(same_netns ? 2 : 1, n);	/* root's and its own */

	close(udp);
	vmak_ringset_close(&rs);
}

TEST_F(perm, matrix)
{
	pid_t pid;
	int st;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct rlimit rl = { 1 << 22, 1 << 22 };
		int ifindex = self->net.ifindex_b;

		setrlimit(RLIMIT_MEMLOCK, &rl);
		switch (variant->who) {
		case ROOT:
			break;
		/* (no ASSERT here: it would return into the harness) */
		case NET_RAW:
			if (become(1ULL << CAP_NET_RAW))
				_exit(2);
			break;
		case NET_ADMIN:
			if (become(1ULL << CAP_NET_ADMIN))
				_exit(2);
			break;
		case NOBODY:
			if (become(0))
				_exit(2);
			break;
		case USERNS:
			/* An unprivileged user makes its own user and network
			 * namespaces and a veth pair there. */
			if (become(0) || unshare(CLONE_NEWUSER | CLONE_NEWNET) ||
			    map_root_to(65534) ||
			    sh("ip link add name vu0 type veth peer name vu1 && "
			       "ip addr add 10.99.0.2/24 dev vu0 && "
			       "ip link set vu0 up && ip link set vu1 up")) {
				perror("#   user namespace setup");
				_exit(3);
			}
			ifindex = (int)if_nametoindex("vu0");
			break;
		}
		matrix(_metadata, variant->who, ifindex, self->root_id);
		_exit(_metadata->passed ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST_HARNESS_MAIN
