/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the C selftests. */
#ifndef _VMAK_SELFTEST_COMMON_H
#define _VMAK_SELFTEST_COMMON_H

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "linux/vmak.h"
#include "vmak/vmak.h"

/*
 * The family of the loaded module. Outside the VM a missing module is a
 * SKIP; inside it (VMAK_RESULTS is set) the module must be there.
 */
#define FAMILY_OR_SKIP(fam) do { \
	(fam) = vmak_family(); \
	if ((fam) < 0 && !getenv("VMAK_RESULTS")) \
		SKIP(return, "vmak not loaded: %s", vmak_strerror(fam)); \
	ASSERT_GT((fam), 0); \
} while (0)

/* Become an unprivileged user with no capabilities at all. */
static inline int drop_privileges(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};

	if (setgid(65534) || setuid(65534))
		return -1;
	return (int)syscall(SYS_capset, &h, d);
}

#endif
