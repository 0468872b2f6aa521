/* SPDX-License-Identifier: MIT */
/*
 * Function identities for the call-stack rebuild: resolves an address of a
 * process to the function holding it (symbol, or the unknown gap around
 * it) and gives every distinct function a small id, with what the output
 * needs to name it. Thread-safe.
 */
#ifndef MTRACE_DECODE_FUNCS_H
#define MTRACE_DECODE_FUNCS_H

#include "decode/callstack.h"
#include "decode/procmap.h"

#include <pthread.h>

struct mt_func {
	const char *name;	/* demangled symbol; NULL: unknown code */
	const char *binary;	/* path as recorded; NULL when in no mapping */
	uint64_t addr;		/* run-time start (of the symbol or the gap) */
	struct mt_binfile *bin;
	uint64_t link_addr;	/* start in the binary's own addresses; for an
				 * inlined function, its key (see below) */
	bool plt;
	bool inlined;		/* a function inlined into others (DWARF) */
	/* No symbol, known from the call-frame information (sym.h): named
	 * "binary+0xADDR" by the link address, the name owned here. */
	bool anon;
};

struct mt_kimage;
struct mt_inl_range;

struct mt_funcs {
	struct mt_bincache *bins;
	const struct mt_kimage *kernel;	/* names kernel code; NULL: none */
	struct mt_func *v;	/* indexed by id; ids below MT_FN_FIRST_USER fixed */
	size_t n, cap;
	/* open-addressing hash of (binary, link address) → id */
	uint32_t *slots;
	size_t nslots;
	/* Each function's inline ranges once read (mt_funcs_inline_ranges()),
	 * by id, in the binary's own addresses: every decoding thread and the
	 * replay ask for them, and a read walks the function's DWARF. */
	struct mt_funcs_inl {
		int n;		/* below 0: not read */
		struct mt_inl_range *r;
	} *inl;
	size_t ninl;
	pthread_mutex_t lock;
};

void mt_funcs_init(struct mt_funcs *fs, struct mt_bincache *bins);
void mt_funcs_fini(struct mt_funcs *fs);

/* Fills FN for IP in process P (see mt_cs_ops.resolve). */
void mt_funcs_resolve(struct mt_funcs *fs, const struct mt_proc *p, uint64_t ip,
		      struct mt_cs_fn *fn);

/* An inline range at run time: ID is the inlined function's (one id per
 * inlined function and binary, mt_func.inlined); depth as in sym.h. */
struct mt_inl_range {
	uint64_t lo, hi;
	uint32_t id, depth;
};

/* The inline ranges of function ID, the one holding IP in process P
 * (mt_sym_inline_ranges(), WAIT as there; read once for all threads);
 * *OUT is malloc'ed, NULL when there are none. Returns the count,
 * -ENOMEM or -EAGAIN. */
int mt_funcs_inline_ranges(struct mt_funcs *fs, const struct mt_proc *p, uint32_t id,
			   uint64_t ip, int wait, struct mt_inl_range **out);

/* Recent lookups by address, for one thread's use: calls go to few
 * targets, and a lookup takes two binary searches and two locks. */
#define MT_FUNCS_CACHE 1024

struct mt_funcs_cache {
	struct {
		uint64_t ip;
		struct mt_cs_fn fn;
	} e[MT_FUNCS_CACHE];
};

/* Where IP's lookup is cached. */
static inline size_t mt_funcs_cache_slot(uint64_t ip)
{
	return (ip ^ ip >> 10) % MT_FUNCS_CACHE;
}

/* mt_funcs_resolve() for a cache miss, remembered in CACHE. */
void mt_funcs_resolve_miss(struct mt_funcs *fs, struct mt_funcs_cache *cache,
			   const struct mt_proc *p, uint64_t ip, struct mt_cs_fn *fn);

/* mt_funcs_resolve() through CACHE (zero-initialized before first use;
 * one per process P). Inline: the replay resolves at almost every op, and
 * nearly always hits. */
static inline void mt_funcs_resolve_cached(struct mt_funcs *fs, struct mt_funcs_cache *cache,
					   const struct mt_proc *p, uint64_t ip,
					   struct mt_cs_fn *fn)
{
	size_t slot = mt_funcs_cache_slot(ip);

	if (cache->e[slot].ip == ip && cache->e[slot].fn.end)
		*fn = cache->e[slot].fn;
	else
		mt_funcs_resolve_miss(fs, cache, p, ip, fn);
}

/* The function with id ID; copies under the lock (the table may grow). */
struct mt_func mt_funcs_get(struct mt_funcs *fs, uint32_t id);

/* Display name: the symbol, "[syscall]", "[untraced]", or "[unknown]". */
const char *mt_func_label(const struct mt_func *f, uint32_t id);

#endif
