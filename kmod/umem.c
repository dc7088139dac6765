// SPDX-License-Identifier: GPL-2.0
/*
 * UMEM: a region of the process's memory, pinned long-term and mapped into
 * the kernel once, that holds packet data in fixed-size chunks.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "vmak.h"

/* 4 GiB: UMEM addresses in descriptors stay far from overflow. */
#define VMAK_UMEM_MAX_PAGES	(1UL << (32 - PAGE_SHIFT))

/*
 * Charge npages to the calling user's locked memory, under RLIMIT_MEMLOCK
 * unless the caller has CAP_IPC_LOCK (as AF_XDP's UMEM): *user is then the
 * user to uncharge, or NULL. UMEMs and rings both pay. ENOBUFS past it.
 */
int vmak_memlock_charge(struct user_struct **user, unsigned long npages)
{
	unsigned long limit, old, new;

	*user = NULL;
	if (capable(CAP_IPC_LOCK))
		return 0;

	limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	*user = get_uid(current_user());
	do {
		old = atomic_long_read(&(*user)->locked_vm);
		new = old + npages;
		if (new > limit || new < old) {
			free_uid(*user);
			*user = NULL;
			return -ENOBUFS;
		}
	} while (atomic_long_cmpxchg(&(*user)->locked_vm, old, new) != old);
	return 0;
}

void vmak_memlock_uncharge(struct user_struct *user, unsigned long npages)
{
	if (!user)
		return;
	atomic_long_sub(npages, &user->locked_vm);
	free_uid(user);
}

/* Pages pinned by all UMEMs; reported by netlink info (leak checks). */
atomic64_t vmak_pinned_pages = ATOMIC64_INIT(0);

/*
 * Only anonymous, shmem (memfd, tmpfs) and hugetlb memory may back a
 * UMEM: long-term pinning a page of a file a filesystem writes back
 * corrupts it (the kernel refuses that itself from 6.5 on; 6.1 does not).
 */
static int vmak_umem_check_vmas(unsigned long addr, unsigned long len)
{
	struct mm_struct *mm = current->mm;
	unsigned long end = addr + len;
	struct vm_area_struct *vma;
	int err = 0;

	mmap_read_lock(mm);
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr) {
			err = -EFAULT;		/* a hole */
			break;
		}
		if (vma->vm_file && !(vma->vm_flags & VM_HUGETLB) &&
		    !shmem_mapping(vma->vm_file->f_mapping)) {
			err = -EFAULT;		/* file-backed */
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return err;
}

static int vmak_umem_pin(struct vmak_umem *umem, unsigned long addr)
{
	int pinned;

	pinned = vmak_umem_check_vmas(addr, umem->size);
	if (pinned)
		return pinned;

	umem->pgs = kvcalloc(umem->npgs, sizeof(*umem->pgs),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!umem->pgs)
		return -ENOMEM;

	pinned = pin_user_pages_fast(addr, umem->npgs,
				     FOLL_WRITE | FOLL_LONGTERM, umem->pgs);
	if (pinned != umem->npgs) {
		if (pinned > 0)
			unpin_user_pages(umem->pgs, pinned);
		kvfree(umem->pgs);
		umem->pgs = NULL;
		return pinned < 0 ? pinned : -ENOMEM;
	}
	atomic64_add(umem->npgs, &vmak_pinned_pages);
	return 0;
}

static void vmak_umem_unpin(struct vmak_umem *umem)
{
	unpin_user_pages_dirty_lock(umem->pgs, umem->npgs, true);
	atomic64_sub(umem->npgs, &vmak_pinned_pages);
	kvfree(umem->pgs);
}

static void vmak_umem_release(struct vmak_umem *umem)
{
	vunmap(umem->kaddr);
	vmak_umem_unpin(umem);
	vmak_memlock_uncharge(umem->user, umem->npgs);
	kfree(umem);
}

static void vmak_umem_release_work(struct work_struct *work)
{
	vmak_umem_release(container_of(work, struct vmak_umem, release_work));
}

struct vmak_umem *vmak_umem_create(const struct vmak_umem_reg *reg)
{
	struct vmak_umem *umem;
	u64 npgs;
	int err;

	if (reg->flags || reg->pad)
		return ERR_PTR(-EINVAL);
	if (!PAGE_ALIGNED(reg->addr) || !reg->len || !PAGE_ALIGNED(reg->len))
		return ERR_PTR(-EINVAL);
	if (reg->chunk_size < VMAK_CHUNK_MIN || reg->chunk_size > VMAK_CHUNK_MAX ||
	    !is_power_of_2(reg->chunk_size))
		return ERR_PTR(-EINVAL);
	if (reg->len % reg->chunk_size)
		return ERR_PTR(-EINVAL);
	if (reg->headroom > reg->chunk_size - VMAK_CHUNK_MIN_DATA)
		return ERR_PTR(-EINVAL);
	if (reg->addr + reg->len < reg->addr)
		return ERR_PTR(-EINVAL);
	npgs = reg->len >> PAGE_SHIFT;
	if (npgs > VMAK_UMEM_MAX_PAGES)
		return ERR_PTR(-EINVAL);

	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem)
		return ERR_PTR(-ENOMEM);
	refcount_set(&umem->users, 1);
	umem->npgs = npgs;
	umem->size = reg->len;
	umem->chunk_size = reg->chunk_size;
	umem->headroom = reg->headroom;
	INIT_WORK(&umem->release_work, vmak_umem_release_work);

	err = vmak_memlock_charge(&umem->user, umem->npgs);
	if (err)
		goto err_free;
	err = vmak_umem_pin(umem, reg->addr);
	if (err)
		goto err_uncharge;
	umem->kaddr = vmap(umem->pgs, umem->npgs, VM_MAP, PAGE_KERNEL);
	if (!umem->kaddr) {
		err = -ENOMEM;
		goto err_unpin;
	}
	return umem;

err_unpin:
	vmak_umem_unpin(umem);
err_uncharge:
	vmak_memlock_uncharge(umem->user, umem->npgs);
err_free:
	kfree(umem);
	return ERR_PTR(err);
}

void vmak_umem_get(struct vmak_umem *umem)
{
	refcount_inc(&umem->users);
}

/* May be called from an RCU callback: the unpinning sleeps, so defer it. */
void vmak_umem_put(struct vmak_umem *umem)
{
	if (umem && refcount_dec_and_test(&umem->users))
		queue_work(vmak_wq, &umem->release_work);
}
