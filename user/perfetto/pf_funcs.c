// SPDX-License-Identifier: MIT
/*
 * Function interning (pf_funcs.h). A small open-addressing table keyed by a
 * hash of the cleaned content; it runs once per distinct function, so
 * simplicity wins over a generic hash-table dependency.
 */
#include "pf_funcs.h"
#include "util/mt_array.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	/* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	/* The NUL keeps ("ab","c") apart from ("a","bc"); NULL hashes as absent. */
	return s ? hash_bytes(h, s, strlen(s) + 1) : hash_bytes(h, "", 0) * 31;
}

static uint64_t hash_func(const struct pf_func *f)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = hash_str(h, f->symbol);
	h = hash_str(h, f->binary);
	h = hash_str(h, f->file);
	h = hash_bytes(h, &f->addr, sizeof(f->addr));
	h = hash_bytes(h, &f->line, sizeof(f->line));
	return hash_bytes(h, &f->flags, sizeof(f->flags));
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int func_eq(const struct pf_func *a, const struct pf_func *b)
{
	return a->hash == b->hash && a->addr == b->addr && a->line == b->line &&
	       a->flags == b->flags && str_eq(a->symbol, b->symbol) &&
	       str_eq(a->binary, b->binary) && str_eq(a->file, b->file);
}

static void func_free(struct pf_func *f)
{
	free(f->symbol);
	free(f->binary);
	free(f->file);
	free(f->name);
	free(f->where);
}

static char *dup_opt(const char *s, int *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = mt_utf8_dup(s);
	if (!d)
		*oom = 1;
	return d;
}

/* Fills @f from @in with cleaned copies and display texts; -1 on ENOMEM. */
static int func_build(struct pf_func *f, const struct pf_frame *in)
{
	int oom = 0;

	*f = (struct pf_func){ .addr = in->addr, .line = in->line, .flags = in->flags };
	if (in->symbol) {
		f->symbol = dup_opt(in->symbol, &oom);
	} else if (asprintf(&f->symbol, "0x%" PRIx64, in->addr) < 0) {
		f->symbol = NULL;
		oom = 1;
	}
	f->binary = dup_opt(in->binary, &oom);
	f->file = dup_opt(in->file, &oom);
	if (oom)
		goto fail;
	if (asprintf(&f->name, "%s%s", f->symbol,
		     f->flags & PF_FRAME_KERNEL ? " [kernel]" : "") < 0)
		f->name = NULL;
	if ((f->flags & PF_FRAME_INLINE ?
		     asprintf(&f->where, "%s (%s, inlined)", f->symbol, f->binary ? f->binary : "?") :
		     asprintf(&f->where, "%s (%s 0x%" PRIx64 ")", f->symbol,
			      f->binary ? f->binary : "?", f->addr)) < 0)
		f->where = NULL;
	if (!f->name || !f->where)
		goto fail;
	f->hash = hash_func(f);
	return 0;
fail:
	func_free(f);
	return -ENOMEM;
}

static int rehash(struct pf_funcs *t, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t id = 0; id < t->n; id++) {
		size_t i = t->v[id].hash & (nslots - 1);

		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = (uint32_t)id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

int32_t pf_funcs_intern(struct pf_funcs *t, const struct pf_frame *in)
{
	struct pf_func f;
	size_t i;

	if (t->n >= INT32_MAX - 1 || func_build(&f, in))
		return -ENOMEM;
	/* Keep the table at most half full. */
	if ((t->n + 1) * 2 > t->nslots && rehash(t, t->nslots ? t->nslots * 2 : 64))
		goto fail;
	for (i = f.hash & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		if (func_eq(&t->v[t->slots[i] - 1], &f)) {
			func_free(&f);
			return (int32_t)(t->slots[i] - 1);
		}
	}
	if (MT_ARRAY_RESERVE(t->v, t->cap, t->n, 1))
		goto fail;
	t->v[t->n] = f;
	t->slots[i] = (uint32_t)++t->n;
	return (int32_t)(t->n - 1);
fail:
	func_free(&f);
	return -ENOMEM;
}

void pf_funcs_free(struct pf_funcs *t)
{
	for (size_t i = 0; i < t->n; i++)
		func_free(&t->v[i]);
	free(t->v);
	free(t->slots);
	*t = (struct pf_funcs){ 0 };
}
