/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* libvmak internals, grouped by the file that implements them. */
#ifndef _VMAK_INTERNAL_H
#define _VMAK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#define VMAK_API __attribute__((visibility("default")))
#define VMAK_HIDDEN __attribute__((visibility("hidden")))

/*
 * Size-versioned structs (their first field is size_t sz, the size the
 * caller was built with). In: copy what the caller has over our defaults;
 * refuse a newer caller's fields that are set but unknown here. Out: fill
 * what the caller has room for, zero what it has beyond us.
 */
bool vmak_sz_in(void *dst, size_t known, const void *src) VMAK_HIDDEN;
bool vmak_sz_out(void *dst, const void *src, size_t known) VMAK_HIDDEN;
#define VMAK_SZ_IN(dst, src)	vmak_sz_in((dst), sizeof(*(dst)), (src))
#define VMAK_SZ_OUT(dst, src)	vmak_sz_out((dst), (src), sizeof(*(src)))

/* info.c */
int vmak_parse_family(const char *s) VMAK_HIDDEN;

#endif /* _VMAK_INTERNAL_H */
