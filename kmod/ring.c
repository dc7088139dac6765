// SPDX-License-Identifier: GPL-2.0
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "vmak.h"
#include "ring.h"

struct vmak_queue *vmak_queue_create(u32 nentries, u32 desc_size)
{
	struct vmak_queue *q;
	size_t size;

	if (nentries < VMAK_RING_MIN || nentries > VMAK_RING_MAX ||
	    !is_power_of_2(nentries))
		return ERR_PTR(-EINVAL);

	size = struct_size_t(struct vmak_ring_shared, desc,
			     array_size(nentries, desc_size));
	if (size == SIZE_MAX)
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(size);

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return ERR_PTR(-ENOMEM);
	q->ring = vmalloc_user(size);
	if (!q->ring) {
		kfree(q);
		return ERR_PTR(-ENOMEM);
	}
	q->size = size;
	q->nentries = nentries;
	q->mask = nentries - 1;
	q->desc_size = desc_size;
	return q;
}

void vmak_queue_destroy(struct vmak_queue *q)
{
	if (!q)
		return;
	vfree(q->ring);
	kfree(q);
}
