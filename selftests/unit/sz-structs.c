// SPDX-License-Identifier: GPL-2.0
/*
 * The native layer's size-versioned structs (vmak/ringset.h, vmak/ctl.h):
 * each ends at its named last field, with no tail padding, so that a field
 * a later version appends is never one an older library takes for padding
 * and ignores; and a set byte past what the library knows is refused.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "harness.h"
#include "vmak/vmak.h"

#define END(type) (offsetof(struct type, type##__last_field) + \
		   sizeof(((struct type *)0)->type##__last_field))

TEST(no_tail_padding)
{
	EXPECT_EQ(sizeof(struct vmak_ringset_config), END(vmak_ringset_config));
	EXPECT_EQ(sizeof(struct vmak_direct), END(vmak_direct));
	EXPECT_EQ(sizeof(struct vmak_info), END(vmak_info));
	EXPECT_EQ(sizeof(struct vmak_ring_filter), END(vmak_ring_filter));
}

/* A newer caller's struct: ours, then a field this library lacks. */
struct newer_config {
	struct vmak_ringset_config c;
	uint64_t added;
};

TEST(a_newer_field_set_is_refused)
{
	struct newer_config n;
	struct vmak_ringset rs;

	memset(&n, 0, sizeof(n));
	vmak_ringset_config_default(&n.c);
	n.c.sz = sizeof(n);
	n.added = 1;
	EXPECT_EQ(-EINVAL, vmak_ringset_open(&rs, &n.c));
	n.c.sz = sizeof(n.c);
	n.c.reserved = 1;
	EXPECT_EQ(-EINVAL, vmak_ringset_open(&rs, &n.c));
}

TEST_HARNESS_MAIN
