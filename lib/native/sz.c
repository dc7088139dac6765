// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Size-versioned public structs (internal.h). */
#include <string.h>

#include "internal.h"

/* Every byte of p[from, to) is zero. */
static bool zero_from(const void *p, size_t from, size_t to)
{
	const unsigned char *b = p;

	for (; from < to; from++)
		if (b[from])
			return false;
	return true;
}

bool vmak_sz_in(void *dst, size_t known, const void *src)
{
	size_t sz = *(const size_t *)src;

	if (sz < sizeof(size_t) || !zero_from(src, known, sz))
		return false;
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       (sz < known ? sz : known) - sizeof(size_t));
	return true;
}

bool vmak_sz_out(void *dst, const void *src, size_t known)
{
	size_t sz = *(const size_t *)dst;

	if (sz < sizeof(size_t))
		return false;
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       (sz < known ? sz : known) - sizeof(size_t));
	if (sz > known)
		memset((char *)dst + known, 0, sz - known);
	return true;
}
