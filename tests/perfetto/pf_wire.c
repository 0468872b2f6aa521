// SPDX-License-Identifier: MIT
/* Protobuf wire-format decoding for the tests (pf_wire.h). */
#include "pf_wire.h"

#include <string.h>

static bool read_varint(struct pfw_cursor *c, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (c->p >= c->end)
			return false;
		*v |= (uint64_t)(*c->p & 0x7f) << shift;
		if (!(*c->p++ & 0x80))
			return true;
	}
	return false;
}

bool pfw_next(struct pfw_cursor *c, struct pfw_field *f)
{
	uint64_t key, len;

	if (c->bad || c->p >= c->end)
		return false;
	if (!read_varint(c, &key))
		goto bad;
	f->num = (uint32_t)(key >> 3);
	f->wt = (int)(key & 7);
	f->v = 0;
	f->data = NULL;
	f->len = 0;
	switch (f->wt) {
	case 0:
		if (!read_varint(c, &f->v))
			goto bad;
		return true;
	case 1:
		if (c->end - c->p < 8)
			goto bad;
		memcpy(&f->v, c->p, 8);
		c->p += 8;
		return true;
	case 2:
		if (!read_varint(c, &len) || len > (uint64_t)(c->end - c->p))
			goto bad;
		f->data = c->p;
		f->len = (size_t)len;
		c->p += len;
		return true;
	}
bad:
	c->bad = true;
	return false;
}
