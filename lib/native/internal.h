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
/* The size the library knows a struct by: up to its last field's end. */
#define vmak_offsetofend(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))
#define VMAK_SZ_KNOWN(type)	vmak_offsetofend(struct type, type##__last_field)
#define VMAK_SZ_IN(type, dst, src) vmak_sz_in((dst), VMAK_SZ_KNOWN(type), (src))
#define VMAK_SZ_OUT(type, dst, src) vmak_sz_out((dst), (src), VMAK_SZ_KNOWN(type))

/* info.c */
int vmak_parse_family(const char *s) VMAK_HIDDEN;

#endif /* _VMAK_INTERNAL_H */
