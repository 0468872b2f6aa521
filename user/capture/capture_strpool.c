// SPDX-License-Identifier: MIT
/* Owned string copies for records that hold pointers (see capture_procfs.h). */
#include "capture/capture_procfs.h"
#include "util/mt_array.h"

#include <stdlib.h>
#include <string.h>

char *mt_strpool_add(struct mt_strpool *p, const void *data, size_t len)
{
	char *c;

	if (MT_ARRAY_RESERVE(p->s, p->cap, p->n, 1))
		return NULL;
	c = malloc(len + 1);
	if (!c)
		return NULL;
	memcpy(c, data, len);
	c[len] = '\0';
	p->s[p->n++] = c;
	return c;
}

void mt_strpool_free(struct mt_strpool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i]);
	free(p->s);
	memset(p, 0, sizeof(*p));
}
