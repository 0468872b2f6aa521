// SPDX-License-Identifier: MIT
/* Growth and nested-message lengths for the protobuf encoder (pf_pb.h). */
#include "pf_pb.h"
#include "util/mt_array.h"

#include <stdlib.h>

bool pb_grow(struct pb_buf *b, size_t n)
{
	if (b->oom)
		return false;
	if (MT_ARRAY_RESERVE(b->data, b->cap, b->len, n)) {
		b->oom = true;
		return false;
	}
	return true;
}

size_t pb_open(struct pb_buf *b, unsigned int field)
{
	pb_tag(b, field, PB_LEN);
	if (pb_need(b, 1))
		b->data[b->len++] = 0;
	return b->len;
}

void pb_close(struct pb_buf *b, size_t mark)
{
	size_t n, extra;

	if (b->oom)
		return;
	n = b->len - mark;
	if (n < 0x80) {
		b->data[mark - 1] = (uint8_t)n;
		return;
	}
	/* One byte was reserved for the length; shift the body for the rest. */
	extra = pb_varint_len(n) - 1;
	if (!pb_need(b, extra))
		return;
	memmove(b->data + mark + extra, b->data + mark, n);
	pb_put_varint(b->data + mark - 1, n);
	b->len += extra;
}

void pb_free(struct pb_buf *b)
{
	free(b->data);
	*b = (struct pb_buf){ 0 };
}
