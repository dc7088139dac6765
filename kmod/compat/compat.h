/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every piece of kernel-version knowledge lives here; the core files never
 * test LINUX_VERSION_CODE. Where a distribution may backport, prefer a
 * feature probe (see compat/probe.sh) to a version number.
 */
#ifndef _VMAK_COMPAT_H
#define _VMAK_COMPAT_H

#include <linux/version.h>

#endif /* _VMAK_COMPAT_H */
