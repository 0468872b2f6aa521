// SPDX-License-Identifier: MIT
/* Function identities; see funcs.h. */
#include "decode/funcs.h"

#include "decode/kernel_funcs.h"
#include "util/mt_array.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mt_funcs_init(struct mt_funcs *fs, struct mt_bincache *bins)
{
	memset(fs, 0, sizeof(*fs));
	fs->bins = bins;
	fs->n = MT_FN_FIRST_USER;
	pthread_mutex_init(&fs->lock, NULL);
}

void mt_funcs_fini(struct mt_funcs *fs)
{
	for (size_t id = MT_FN_FIRST_USER; id < fs->n; id++)
		if (fs->v[id].anon)
			free((char *)fs->v[id].name);
	for (size_t id = 0; id < fs->ninl; id++)
		free(fs->inl[id].r);
	free(fs->inl);
	free(fs->v);
	free(fs->slots);
	pthread_mutex_destroy(&fs->lock);
	memset(fs, 0, sizeof(*fs));
}

static size_t hash(const struct mt_binfile *b, uint64_t addr, size_t nslots)
{
	uint64_t h = ((uint64_t)(uintptr_t)b ^ addr) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 17) & (nslots - 1);
}

static int rehash(struct mt_funcs *fs)
{
	size_t n = fs->nslots ? fs->nslots * 2 : 1024;
	uint32_t *s = malloc(n * sizeof(*s));

	if (!s)
		return -ENOMEM;
	memset(s, 0xff, n * sizeof(*s));
	for (size_t id = MT_FN_FIRST_USER; id < fs->n; id++) {
		size_t i = hash(fs->v[id].bin, fs->v[id].link_addr, n);

		while (s[i] != UINT32_MAX)
			i = (i + 1) & (n - 1);
		s[i] = (uint32_t)id;
	}
	free(fs->slots);
	fs->slots = s;
	fs->nslots = n;
	return 0;
}

/* An anonymous function's name: its binary's file name and link address,
 * what objdump -d of that binary shows there. NULL when out of memory
 * (then it is shown as unknown code). */
static char *anon_name(const struct mt_func *f)
{
	const char *base = f->binary ? strrchr(f->binary, '/') : NULL;
	char *name;

	base = base ? base + 1 : f->binary ? f->binary : "?";
	return asprintf(&name, "%s+0x%" PRIx64, base, f->link_addr) < 0 ? NULL : name;
}

/* The id of F (keyed by binary and link address), added if new. */
static uint32_t intern(struct mt_funcs *fs, const struct mt_func *f)
{
	uint32_t id = MT_FN_UNKNOWN;
	size_t i;

	pthread_mutex_lock(&fs->lock);
	if ((fs->n + 1) * 2 > fs->nslots && rehash(fs))
		goto out;
	for (i = hash(f->bin, f->link_addr, fs->nslots); fs->slots[i] != UINT32_MAX;
	     i = (i + 1) & (fs->nslots - 1)) {
		const struct mt_func *g = &fs->v[fs->slots[i]];

		if (g->bin == f->bin && g->link_addr == f->link_addr && g->inlined == f->inlined) {
			id = fs->slots[i];
			goto out;
		}
	}
	if (MT_ARRAY_RESERVE(fs->v, fs->cap, fs->n, 1))
		goto out;
	id = (uint32_t)fs->n++;
	fs->v[id] = *f;
	if (f->anon)
		fs->v[id].name = anon_name(f);
	fs->slots[i] = id;
out:
	pthread_mutex_unlock(&fs->lock);
	return id;
}

void mt_funcs_resolve(struct mt_funcs *fs, const struct mt_proc *p, uint64_t ip,
		      struct mt_cs_fn *fn)
{
	const struct mt_pmap *pm = p ? mt_proc_find(p, ip) : NULL;
	struct mt_func f = { 0 };
	const struct mt_sym *s = NULL;
	struct mt_sym_file *sf;
	uint64_t lo, hi;

	if (!pm && mt_kfunc_resolve(fs->kernel, ip, &f, fn)) {
		fn->id = intern(fs, &f);
		return;
	}
	if (!pm) {
		/* Outside every mapping: one unknown region per address gap. */
		fn->start = ip;
		fn->end = ip + 1;
		fn->id = MT_FN_UNKNOWN;
		return;
	}
	f.binary = pm->name;
	f.bin = pm->bin;
	lo = 0;
	hi = UINT64_MAX;
	sf = pm->bin ? mt_binfile_syms(fs->bins, pm->bin) : NULL;
	if (sf)
		s = mt_sym_find(sf, ip - pm->bias, &lo, &hi);
	/* Clip to the mapping, in link-time addresses. */
	if (lo < pm->start - pm->bias)
		lo = pm->start - pm->bias;
	if (hi > pm->end - pm->bias)
		hi = pm->end - pm->bias;
	fn->start = lo + pm->bias;
	fn->end = hi + pm->bias;
	f.addr = fn->start;
	f.link_addr = lo;
	if (s) {
		f.name = s->anon ? NULL : s->name;
		f.plt = s->plt;
		f.anon = s->anon;
	}
	fn->id = intern(fs, &f);
}

/* A copy of the N ranges K (the binary's addresses) moved to a mapping at
 * BIAS, in *OUT: N, or -ENOMEM. */
static int moved_copy(const struct mt_inl_range *k, int n, uint64_t bias,
		      struct mt_inl_range **out)
{
	struct mt_inl_range *v = n ? malloc((size_t)n * sizeof(*v)) : NULL;

	if (n && !v)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		v[i] = (struct mt_inl_range){ k[i].lo + bias, k[i].hi + bias, k[i].id, k[i].depth };
	*out = v;
	return n;
}

/* Function ID's slot of kept ranges (lock held); NULL when out of memory. */
static struct mt_funcs_inl *kept_slot(struct mt_funcs *fs, uint32_t id)
{
	size_t cap = fs->ninl;

	if (id >= fs->ninl) {
		if (MT_ARRAY_GROW_TO(fs->inl, cap, (size_t)id + 1))
			return NULL;
		for (size_t i = fs->ninl; i < cap; i++)
			fs->inl[i] = (struct mt_funcs_inl){ .n = -1 };
		fs->ninl = cap;
	}
	return &fs->inl[id];
}

int mt_funcs_inline_ranges(struct mt_funcs *fs, const struct mt_proc *p, uint32_t id,
			   uint64_t ip, int wait, struct mt_inl_range **out)
{
	const struct mt_pmap *pm = p ? mt_proc_find(p, ip) : NULL;
	struct mt_sym_file *sf;
	struct mt_inline_range *r = NULL;
	struct mt_inl_range *k = NULL;
	struct mt_funcs_inl *slot;
	int n;

	*out = NULL;
	if (!pm || !pm->bin)
		return 0;
	/* Ids below the first user one name no function of a binary. */
	if (id >= MT_FN_FIRST_USER) {
		pthread_mutex_lock(&fs->lock);
		n = id < fs->ninl && fs->inl[id].n >= 0
			    ? moved_copy(fs->inl[id].r, fs->inl[id].n, pm->bias, out)
			    : -1;
		pthread_mutex_unlock(&fs->lock);
		if (n >= 0)
			return n;
	}
	sf = mt_binfile_syms(fs->bins, pm->bin);
	n = sf ? mt_sym_inline_ranges(sf, ip - pm->bias, wait, &r) : 0;
	if (n < 0)
		return n;
	if (n && !(k = malloc((size_t)n * sizeof(*k)))) {
		free(r);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		/* The symbolizer keeps one copy of each name (sym_src.c), so
		 * the name's address keys the function within its binary. */
		struct mt_func f = { .name = r[i].function, .binary = pm->name, .bin = pm->bin,
				     .link_addr = (uint64_t)(uintptr_t)r[i].function,
				     .inlined = true };

		k[i] = (struct mt_inl_range){ r[i].lo, r[i].hi, intern(fs, &f),
					      (uint32_t)r[i].depth };
	}
	free(r);
	n = moved_copy(k, n, pm->bias, out);
	/* Kept for the next thread that asks; out of memory, not kept. */
	pthread_mutex_lock(&fs->lock);
	slot = id >= MT_FN_FIRST_USER && n >= 0 ? kept_slot(fs, id) : NULL;
	if (slot && slot->n < 0) {
		*slot = (struct mt_funcs_inl){ n, k };
		k = NULL;
	}
	pthread_mutex_unlock(&fs->lock);
	free(k);
	return n;
}

void mt_funcs_resolve_miss(struct mt_funcs *fs, struct mt_funcs_cache *cache,
			   const struct mt_proc *p, uint64_t ip, struct mt_cs_fn *fn)
{
	size_t slot = mt_funcs_cache_slot(ip);

	mt_funcs_resolve(fs, p, ip, fn);
	cache->e[slot].ip = ip;
	cache->e[slot].fn = *fn;
}

struct mt_func mt_funcs_get(struct mt_funcs *fs, uint32_t id)
{
	struct mt_func f = { 0 };

	pthread_mutex_lock(&fs->lock);
	if (id >= MT_FN_FIRST_USER && id < fs->n)
		f = fs->v[id];
	pthread_mutex_unlock(&fs->lock);
	return f;
}

const char *mt_func_label(const struct mt_func *f, uint32_t id)
{
	if (id == MT_FN_SYSCALL)
		return "[syscall]";
	if (id == MT_FN_UNTRACED)
		return "[untraced]";
	return f->name ? f->name : "[unknown]";
}
