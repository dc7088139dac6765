/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* libvmak internals, grouped by the file that implements them. */
#ifndef _VMAK_INTERNAL_H
#define _VMAK_INTERNAL_H

#define VMAK_API __attribute__((visibility("default")))
#define VMAK_HIDDEN __attribute__((visibility("hidden")))

/* info.c */
int vmak_parse_family(const char *s) VMAK_HIDDEN;

#endif /* _VMAK_INTERNAL_H */
