// SPDX-License-Identifier: GPL-2.0
/* vma->vm_flags is read-only; vm_flags_set() changes it. */
#include <linux/mm.h>

static void __used probe_set(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
}
