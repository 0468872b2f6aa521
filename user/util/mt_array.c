// SPDX-License-Identifier: MIT
/* The growable array (mt_array.h). */
#include "util/mt_array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The first allocation's capacity: small arrays do not realloc at every append. */
#define MT_ARRAY_MIN 8

int mt_array_reserve(void *arrp, size_t *cap, size_t n, size_t more, size_t elem)
{
	size_t want, c;
	void *p;

	if (!elem)
		return -EINVAL;
	if (n > SIZE_MAX - more)
		return -ENOMEM;
	want = n + more;
	if (want <= *cap)
		return 0;
	c = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
	if (c < want)
		c = want;
	if (c < MT_ARRAY_MIN)
		c = MT_ARRAY_MIN;
	if (c > SIZE_MAX / elem) {
		c = SIZE_MAX / elem;
		if (c < want)
			return -ENOMEM;
	}
	/* *arrp is some T *; going through memcpy keeps this type-blind without aliasing it. */
	memcpy(&p, arrp, sizeof(p));
	p = realloc(p, c * elem);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * elem, 0, (c - *cap) * elem);
	memcpy(arrp, &p, sizeof(p));
	*cap = c;
	return 0;
}

int mt_array_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}
