// SPDX-License-Identifier: MIT
/* One process's executable mappings and its libipt image; see procmap.h. */
#include "decode/procmap.h"
#include "util/mt_array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_pmap(const void *a, const void *b)
{
	const struct mt_pmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The section of PATH at VADDR added to IMG through ISCACHE. */
static int add_section(struct pt_image *img, struct pt_image_section_cache *iscache,
		       const struct mt_psec *sec)
{
	int isid = pt_iscache_add_file(iscache, sec->path, sec->offset, sec->size, sec->vaddr);

	return isid < 0 || pt_image_add_cached(img, iscache, isid, NULL) < 0 ? -ENOMEM : 0;
}

/* Adds a section to P's image and list. */
static int add_proc_section(struct mt_proc *p, struct pt_image_section_cache *iscache,
			    const char *path, uint64_t offset, uint64_t size, uint64_t vaddr)
{
	const struct mt_psec sec = { path, offset, size, vaddr };

	if (MT_ARRAY_RESERVE(p->secs, p->secs_cap, p->nsecs, 1))
		return -ENOMEM;
	p->secs[p->nsecs++] = sec;
	return add_section(p->image, iscache, &sec);
}

/* Adds the part of each executable segment that the mapping covers, at
 * its run-time address; sets the mapping's bias from the first one. */
static int add_sections(struct mt_proc *p, struct mt_pmap *pm,
			struct pt_image_section_cache *iscache)
{
	const struct mt_binfile *b = pm->bin;
	uint64_t len = pm->end - pm->start;
	int added = 0;

	for (size_t i = 0; i < b->nsegs; i++) {
		const struct mt_exec_seg *s = &b->segs[i];
		uint64_t lo = s->offset > pm->offset ? s->offset : pm->offset;
		uint64_t hi = s->offset + s->filesz;

		if (hi > pm->offset + len)
			hi = pm->offset + len;
		if (lo >= hi)
			continue;
		if (!added)
			pm->bias = pm->start - pm->offset - s->vaddr + s->offset;
		if (add_proc_section(p, iscache, b->open_path, lo, hi - lo,
				     pm->start + (lo - pm->offset)))
			return -ENOMEM;
		added++;
	}
	if (!added && !b->is_elf) {
		/* Not ELF (e.g. a raw code dump): the mapping is the code. */
		pm->bias = pm->start - pm->offset;
		if (add_proc_section(p, iscache, b->open_path, pm->offset, len, pm->start))
			return -ENOMEM;
		added++;
	}
	return added;
}

int mt_proc_image(const struct mt_proc *p, struct pt_image *img,
		  struct pt_image_section_cache *iscache)
{
	for (size_t i = 0; i < p->nsecs; i++)
		if (add_section(img, iscache, &p->secs[i]))
			return -ENOMEM;
	return 0;
}

/*
 * Mappings whose code no bundle can hold are not looked for: [vsyscall] is
 * emulated by the kernel (executing it traps), and [uprobes] holds the
 * single-step copies of probed instructions, which cannot be read.
 * Anonymous code is (see mapping_file()).
 */
static bool usable(const struct mt_bundle_map *m, uint32_t pid)
{
	return m->pid == pid && m->event != MT_BUNDLE_MAP_MUNMAP &&
	       (m->prot & MT_BUNDLE_PROT_EXEC) && m->end > m->start &&
	       !(m->path && (!strcmp(m->path, "[vsyscall]") || !strcmp(m->path, "[uprobes]")));
}

/*
 * The file for a mapping. Anonymous executable code (JIT-style) has none,
 * but the bundle may carry its bytes as "[anon:0xSTART]"
 * (docs/bundle-format.md); without them it stays unknown code, silently:
 * no capture is expected to have them.
 */
static struct mt_binfile *mapping_file(const struct mt_bundle_map *m, struct mt_bincache *bins,
				       char *err, size_t errlen, bool *quiet)
{
	char anon[32];

	*quiet = false;
	if (m->path && m->path[0])
		return mt_bincache_get(bins, m->path, m->build_id, m->build_id_len, err, errlen);
	*quiet = true;
	snprintf(anon, sizeof(anon), "[anon:%#llx]", (unsigned long long)m->start);
	return mt_bincache_get(bins, anon, NULL, 0, err, errlen);
}

int mt_proc_build(struct mt_proc *p, uint32_t pid, const struct mt_bundle_map *maps, size_t n,
		  struct mt_bincache *bins, struct pt_image_section_cache *iscache,
		  mt_proc_warn_fn warn, void *warn_ctx)
{
	char name[32], err[MT_SYM_ERRLEN];
	size_t out = 0;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(name, sizeof(name), "pid %u", pid);
	p->image = pt_image_alloc(name);
	p->maps = calloc(n ? n : 1, sizeof(*p->maps));
	if (!p->image || !p->maps)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct mt_bundle_map *m = &maps[i];
		struct mt_pmap *pm;
		bool quiet;
		int rc;

		if (!usable(m, pid))
			continue;
		pm = &p->maps[out];
		*pm = (struct mt_pmap){ m->start, m->end, m->file_offset, NULL, 0, m->path };
		pm->bin = mapping_file(m, bins, err, sizeof(err), &quiet);
		if (!pm->bin && quiet)
			continue;
		if (quiet)
			pm->name = pm->bin->name;
		rc = pm->bin ? add_sections(p, pm, iscache) : 0;
		if (rc < 0)
			return rc;
		if (!rc) {
			if (pm->bin)
				snprintf(err, sizeof(err), "%s: no executable code at file offset 0x%llx",
					 m->path, (unsigned long long)m->file_offset);
			pm->bin = NULL;
			p->missing++;
			if (warn)
				warn(warn_ctx, err);
		}
		out++;
	}
	qsort(p->maps, out, sizeof(*p->maps), cmp_pmap);
	/* Trim (or drop) a range that the next one overlaps. */
	p->nmaps = 0;
	for (size_t i = 0; i < out; i++) {
		struct mt_pmap *cur = &p->maps[i];

		if (p->nmaps && p->maps[p->nmaps - 1].end > cur->start)
			p->maps[p->nmaps - 1].end = cur->start;
		if (p->nmaps && p->maps[p->nmaps - 1].end <= p->maps[p->nmaps - 1].start)
			p->nmaps--;
		p->maps[p->nmaps++] = *cur;
	}
	return 0;
}

void mt_proc_fini(struct mt_proc *p)
{
	pt_image_free(p->image);
	free(p->maps);
	free(p->secs);
	memset(p, 0, sizeof(*p));
}

const struct mt_pmap *mt_proc_find(const struct mt_proc *p, uint64_t ip)
{
	size_t i = MT_ARRAY_UPPER_BOUND(p->maps, p->nmaps, start, ip);

	if (i == 0 || ip >= p->maps[i - 1].end)
		return NULL;
	return &p->maps[i - 1];
}
