// SPDX-License-Identifier: GPL-2.0
/*
 * Ring memory. A ring's pages are the process's kernel memory, charged
 * like its UMEM: to its memory cgroup (__GFP_ACCOUNT) and to the locked
 * memory of its user under RLIMIT_MEMLOCK (unless CAP_IPC_LOCK), so that
 * an unprivileged process cannot make the host lose more than its limits.
 * The kernel reaches them through one vmap(); user space maps them with
 * vm_map_pages_zero().
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "vmak.h"
#include "ring.h"

static void vmak_queue_free_pages(struct vmak_queue *q)
{
	u32 i;

	for (i = 0; i < q->npages && q->pages[i]; i++)
		__free_page(q->pages[i]);
	kvfree(q->pages);
}

struct vmak_queue *vmak_queue_create(u32 nentries, u32 desc_size)
{
	struct vmak_queue *q;
	size_t size;
	int err = -ENOMEM;
	u32 i;

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
	q->npages = size >> PAGE_SHIFT;
	err = vmak_memlock_charge(&q->user, q->npages);
	if (err)
		goto err_free;
	err = -ENOMEM;
	q->pages = kvcalloc(q->npages, sizeof(*q->pages),
			    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!q->pages)
		goto err_uncharge;
	for (i = 0; i < q->npages; i++) {
		/* Past the cgroup's limit: fail, do not OOM-kill. */
		q->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO |
					 __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
		if (!q->pages[i])
			goto err_pages;
	}
	q->ring = vmap(q->pages, q->npages, VM_MAP, PAGE_KERNEL);
	if (!q->ring)
		goto err_pages;
	q->size = size;
	q->nentries = nentries;
	q->mask = nentries - 1;
	q->desc_size = desc_size;
	return q;

err_pages:
	vmak_queue_free_pages(q);
err_uncharge:
	vmak_memlock_uncharge(q->user, q->npages);
err_free:
	kfree(q);
	return ERR_PTR(err);
}

static void vmak_queue_free_work(struct work_struct *work)
{
	struct vmak_queue *q = container_of(work, struct vmak_queue, free_work);

	vunmap(q->ring);
	vmak_queue_free_pages(q);
	vmak_memlock_uncharge(q->user, q->npages);
	kfree(q);
}

/*
 * Any context: sockets are freed after a grace period, from softirq, and
 * vunmap() sleeps; the pages go from the module's workqueue.
 */
void vmak_queue_destroy(struct vmak_queue *q)
{
	if (!q)
		return;
	INIT_WORK(&q->free_work, vmak_queue_free_work);
	queue_work(vmak_wq, &q->free_work);
}

/* Map the whole ring (or its first pages) at vma; never more than it has. */
int vmak_queue_mmap(struct vmak_queue *q, struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start > q->size)
		return -EINVAL;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return vm_map_pages_zero(vma, q->pages, q->npages);
}
