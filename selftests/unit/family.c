// SPDX-License-Identifier: GPL-2.0
/* Host unit tests: parsing the family number the module publishes. */
#include "harness.h"
#include "internal.h"
#include "linux/vmak.h"
#include "vmak/vmak.h"

TEST(parses_decimal_with_newline)
{
	EXPECT_EQ(22, vmak_parse_family("22\n"));
	EXPECT_EQ(22, vmak_parse_family("22"));
	EXPECT_EQ(1, vmak_parse_family("1\n"));
	EXPECT_EQ(45, vmak_parse_family("45\n"));
}

TEST(rejects_garbage)
{
	EXPECT_EQ(-EINVAL, vmak_parse_family(""));
	EXPECT_EQ(-EINVAL, vmak_parse_family("\n"));
	EXPECT_EQ(-EINVAL, vmak_parse_family("x22"));
	EXPECT_EQ(-EINVAL, vmak_parse_family("22x"));
	EXPECT_EQ(-EINVAL, vmak_parse_family("22 \n"));
	EXPECT_EQ(-EINVAL, vmak_parse_family("0\n"));
	EXPECT_EQ(-EINVAL, vmak_parse_family("-3\n"));
	EXPECT_EQ(-EINVAL, vmak_parse_family("256\n"));
	EXPECT_EQ(-EINVAL, vmak_parse_family("99999999999999999999\n"));
}

TEST(strerror_names_the_module)
{
	EXPECT_TRUE(strstr(vmak_strerror(-ENOENT), "not loaded") != NULL);
	EXPECT_TRUE(strstr(vmak_strerror(ENOENT), "not loaded") != NULL);
	EXPECT_STREQ(strerror(EPERM), vmak_strerror(-EPERM));
}

TEST(no_module_on_host)
{
	struct vmak_info info = { .sz = sizeof(info) };

	/* The build host has no vmak.ko: the library must say so. */
	if (!access(VMAK_FAMILY_SYSFS, F_OK))
		SKIP(return, "a vmak module is loaded here");
	EXPECT_EQ(-ENOENT, vmak_family());
	EXPECT_EQ(-ENOENT, vmak_info_get(&info));
}

TEST_HARNESS_MAIN
