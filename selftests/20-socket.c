// SPDX-License-Identifier: GPL-2.0
/* Socket creation: accepted and rejected types and protocols, release. */
#include <fcntl.h>
#include <sys/resource.h>

#include "harness.h"
#include "common.h"

TEST(raw_socket_created)
{
	int fam, fd, dom = 0;
	socklen_t len = sizeof(dom);

	FAMILY_OR_SKIP(fam);
	fd = socket(fam, SOCK_RAW, 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len));
	EXPECT_EQ(fam, dom);
	EXPECT_EQ(0, close(fd));
}

TEST(raw_socket_with_flags)
{
	int fam, fd;

	FAMILY_OR_SKIP(fam);
	fd = socket(fam, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ASSERT_GE(fd, 0);
	EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
}

TEST(other_types_rejected)
{
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM, SOCK_SEQPACKET,
				     SOCK_RDM, SOCK_PACKET };
	int fam;

	FAMILY_OR_SKIP(fam);
	for (unsigned int i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		EXPECT_ERRNO(ESOCKTNOSUPPORT, socket(fam, types[i], 0));
}

TEST(protocol_rejected)
{
	int fam;

	FAMILY_OR_SKIP(fam);
	EXPECT_ERRNO(EPROTONOSUPPORT, socket(fam, SOCK_RAW, 1));
	EXPECT_ERRNO(EPROTONOSUPPORT, socket(fam, SOCK_RAW, 17));
	EXPECT_ERRNO(EPROTONOSUPPORT, socket(fam, SOCK_RAW, -1));
	EXPECT_ERRNO(EPROTONOSUPPORT, socket(fam, SOCK_RAW, 0x10000));
}

TEST(unsupported_ops)
{
	int fam, fd;

	FAMILY_OR_SKIP(fam);
	fd = socket(fam, SOCK_RAW, 0);
	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(EOPNOTSUPP, listen(fd, 1));
	EXPECT_ERRNO(EOPNOTSUPP, accept(fd, NULL, NULL));
	EXPECT_ERRNO(EOPNOTSUPP, shutdown(fd, SHUT_RDWR));
	close(fd);
}

TEST(unprivileged_user_may_create)
{
	int fam, fd;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, drop_privileges());
	fd = socket(fam, SOCK_RAW, 0);
	ASSERT_GE(fd, 0);
	close(fd);
}

TEST(many_sockets)
{
	static int fds[2000];
	struct rlimit rl = { 4096, 4096 };
	int fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (int i = 0; i < 2000; i++) {
		fds[i] = socket(fam, SOCK_RAW, 0);
		ASSERT_GE(fds[i], 0);
	}
	for (int i = 0; i < 2000; i++)
		ASSERT_EQ(0, close(fds[i]));
}

TEST_HARNESS_MAIN
