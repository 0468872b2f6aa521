// SPDX-License-Identifier: MIT
/* Kernel function identities; see kernel_funcs.h. */
#include "decode/kernel_funcs.h"

#include <string.h>

bool mt_kfunc_resolve(const struct mt_kimage *ki, uint64_t ip, struct mt_func *f,
		      struct mt_cs_fn *fn)
{
	const struct mt_krange *r = ki ? mt_kimage_range(ki, ip) : NULL;
	const struct mt_ksym *s, *next;

	if (!r)
		return false;
	s = mt_kimage_symbol(ki, ip);
	next = mt_ksyms_next_code(&ki->syms, ip);
	memset(f, 0, sizeof(*f));
	f->binary = r->label;
	f->name = s ? s->name : NULL;
	/* From the symbol (or the copy's start) to the next symbol or the copy's end. */
	fn->start = s ? s->addr : r->start;
	fn->end = next && next->addr < r->end ? next->addr : r->end;
	f->addr = fn->start;
	f->link_addr = fn->start;
	return true;
}
