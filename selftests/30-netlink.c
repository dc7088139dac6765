// SPDX-License-Identifier: GPL-2.0
/* The "vmak" generic netlink family: INFO and malformed requests. */
#include <fcntl.h>
#include <sched.h>
#include <linux/genetlink.h>

#include "harness.h"
#include "common.h"
#include "nl.h"

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

TEST(info_matches_sysfs)
{
	struct vmak_info info = { .sz = sizeof(info) };
	char buf[64];
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, vmak_info_get(&info));
	EXPECT_EQ((uint32_t)fam, info.family);
	ASSERT_EQ(0, read_file("/sys/module/vmak/version", buf, sizeof(buf)));
	EXPECT_STREQ(buf, info.version);
}

TEST(info_unprivileged)
{
	struct vmak_info info = { .sz = sizeof(info) };
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, drop_privileges());
	ASSERT_EQ(0, vmak_info_get(&info));
	EXPECT_EQ((uint32_t)fam, info.family);
}

TEST(info_in_other_netns)
{
	struct vmak_info info = { .sz = sizeof(info) };
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, vmak_info_get(&info));
	EXPECT_EQ((uint32_t)fam, info.family);
}

TEST(info_rejects_attributes)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct tnl nl;
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, tnl_open(&nl));
	nlh = tnl_msg(&nl, buf, VMAK_CMD_INFO_GET, 0);
	mnl_attr_put_u32(nlh, VMAK_A_INFO_FAMILY, 7);
	EXPECT_EQ(-EINVAL, tnl_talk(&nl, nlh, NULL, NULL));
	EXPECT_NE('\0', nl.ext_msg[0]);
	TH_LOG("extack: %s", nl.ext_msg);

	/* An attribute type beyond the policy: rejected by strict parsing. */
	nlh = tnl_msg(&nl, buf, VMAK_CMD_INFO_GET, 0);
	mnl_attr_put_u32(nlh, VMAK_A_INFO_MAX + 5, 7);
	EXPECT_EQ(-EINVAL, tnl_talk(&nl, nlh, NULL, NULL));
	EXPECT_NE('\0', nl.ext_msg[0]);
	tnl_close(&nl);
}

TEST(unknown_command)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct tnl nl;
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, tnl_open(&nl));
	EXPECT_EQ(-EOPNOTSUPP, tnl_talk(&nl, tnl_msg(&nl, buf, 200, 0),
					    NULL, NULL));
	EXPECT_EQ(-EOPNOTSUPP, tnl_talk(&nl, tnl_msg(&nl, buf, 0, 0),
					    NULL, NULL));
	tnl_close(&nl);
}

TEST(info_dump_not_supported)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct tnl nl;
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, tnl_open(&nl));
	EXPECT_EQ(-EOPNOTSUPP,
		  tnl_talk(&nl, tnl_msg(&nl, buf, VMAK_CMD_INFO_GET,
						NLM_F_DUMP), NULL, NULL));
	tnl_close(&nl);
}

TEST(reserved_header_bytes_rejected)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct genlmsghdr *g;
	struct nlmsghdr *nlh;
	struct tnl nl;
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, tnl_open(&nl));
	nlh = tnl_msg(&nl, buf, VMAK_CMD_INFO_GET, 0);
	g = mnl_nlmsg_get_payload(nlh);
	g->reserved = 1;
	EXPECT_EQ(-EINVAL, tnl_talk(&nl, nlh, NULL, NULL));
	tnl_close(&nl);
}

TEST_HARNESS_MAIN
