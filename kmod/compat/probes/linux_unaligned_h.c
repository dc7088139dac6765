// SPDX-License-Identifier: GPL-2.0
/* The unaligned access helpers are in linux/, no longer in asm/. */
#include <linux/unaligned.h>

static u64 __used probe_get(const void *p)
{
	return get_unaligned((const u64 *)p);
}
