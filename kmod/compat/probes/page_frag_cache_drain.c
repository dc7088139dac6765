// SPDX-License-Identifier: GPL-2.0
/* page_frag_cache_drain() gives back what a fragment cache holds. */
#include <linux/gfp.h>
#include <linux/mm_types.h>
#include <linux/skbuff.h>

static void __used probe_drain(struct page_frag_cache *nc)
{
	page_frag_cache_drain(nc);
}
