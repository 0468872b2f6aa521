// SPDX-License-Identifier: MIT
/*
 * Writers for the table sections (switches, maps, threads, modules, clock
 * anchors). A table payload is `count` fixed-size entries followed by a
 * string pool; the entries are streamed first with their pool offsets
 * computed in a first pass, so no copy of the table is built in memory.
 */
#include "bundle/bundle_writer_internal.h"

#include <errno.h>
#include <string.h>

#define TBL_MAX_STRS 2
#define TBL_MAX_ENTRY 64                /* largest v1 entry (the map entry) */

struct tbl_str {
	const void *p;
	size_t len;
	struct mt_bundle_str *ref;      /* where the entry holds this string's reference */
};

struct tbl_kind {
	uint32_t type;
	size_t entry_size;
	/* Fills entry i except its string references, which it lists in strs. */
	unsigned int (*fill)(const void *recs, size_t i, void *entry,
			     struct tbl_str strs[TBL_MAX_STRS]);
};

static const char *nz(const char *s)
{
	return s ? s : "";
}

static int tbl_write(struct mt_bundle_writer *w, const struct tbl_kind *k, void *desc,
		     size_t desc_len, const void *recs, size_t n)
{
	struct mt_bundle_table_desc *td = desc;
	uint8_t entry[TBL_MAX_ENTRY];
	struct tbl_str strs[TBL_MAX_STRS];
	uint64_t pool = 0, off = 0;
	int err;

	if (!recs && n)
		return wr_error(w, -EINVAL, "%s: no records", mt_bundle_section_name(k->type));
	for (size_t i = 0; i < n; i++) {
		unsigned int ns = k->fill(recs, i, entry, strs);

		for (unsigned int s = 0; s < ns; s++)
			pool += strs[s].len + 1;
	}
	if (pool > UINT32_MAX)
		return wr_error(w, -E2BIG, "%s: %llu bytes of strings exceed the 4 GiB pool",
				mt_bundle_section_name(k->type), (unsigned long long)pool);
	td->size = (uint32_t)desc_len;
	td->entry_size = (uint32_t)k->entry_size;
	td->count = n;
	if ((err = wr_section_begin(w, k->type, desc, desc_len, n * k->entry_size + pool,
				    MT_BUNDLE_COMP_AUTO)))
		return err;
	for (size_t i = 0; i < n; i++) {
		unsigned int ns = k->fill(recs, i, entry, strs);

		for (unsigned int s = 0; s < ns; s++) {
			strs[s].ref->off = (uint32_t)off;
			strs[s].ref->len = (uint32_t)strs[s].len;
			off += strs[s].len + 1;
		}
		if ((err = wr_section_append(w, entry, k->entry_size)))
			return err;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned int ns = k->fill(recs, i, entry, strs);

		for (unsigned int s = 0; s < ns; s++)
			if ((err = wr_section_append(w, strs[s].p, strs[s].len)) ||
			    (err = wr_section_append(w, "", 1)))
				return err;
	}
	return wr_section_end(w);
}

static unsigned int fill_switch(const void *recs, size_t i, void *entry,
				struct tbl_str strs[TBL_MAX_STRS])
{
	(void)strs;
	memcpy(entry, (const struct mt_bundle_switch_entry *)recs + i,
	       sizeof(struct mt_bundle_switch_entry));
	return 0;
}

static unsigned int fill_map(const void *recs, size_t i, void *entry,
			     struct tbl_str strs[TBL_MAX_STRS])
{
	const struct mt_bundle_map *m = (const struct mt_bundle_map *)recs + i;
	struct mt_bundle_map_entry *e = entry;

	memset(e, 0, sizeof(*e));
	e->tsc = m->tsc;
	e->start = m->start;
	e->end = m->end;
	e->file_offset = m->file_offset;
	e->pid = m->pid;
	e->prot = m->prot;
	e->event = m->event;
	strs[0] = (struct tbl_str){ nz(m->path), strlen(nz(m->path)), &e->path };
	strs[1] = (struct tbl_str){ m->build_id ? m->build_id : (const uint8_t *)"",
				    m->build_id ? m->build_id_len : 0, &e->build_id };
	return 2;
}

static unsigned int fill_thread(const void *recs, size_t i, void *entry,
				struct tbl_str strs[TBL_MAX_STRS])
{
	const struct mt_bundle_thread *t = (const struct mt_bundle_thread *)recs + i;
	struct mt_bundle_thread_entry *e = entry;

	memset(e, 0, sizeof(*e));
	e->tsc = t->tsc;
	e->pid = t->pid;
	e->tid = t->tid;
	strs[0] = (struct tbl_str){ nz(t->comm), strlen(nz(t->comm)), &e->comm };
	strs[1] = (struct tbl_str){ t->cmdline ? t->cmdline : "",
				    t->cmdline ? t->cmdline_len : 0, &e->cmdline };
	return 2;
}

static unsigned int fill_module(const void *recs, size_t i, void *entry,
				struct tbl_str strs[TBL_MAX_STRS])
{
	const struct mt_bundle_module *m = (const struct mt_bundle_module *)recs + i;
	struct mt_bundle_module_entry *e = entry;

	memset(e, 0, sizeof(*e));
	e->start = m->start;
	e->end = m->end;
	strs[0] = (struct tbl_str){ nz(m->name), strlen(nz(m->name)), &e->name };
	return 1;
}

static unsigned int fill_clock(const void *recs, size_t i, void *entry,
			       struct tbl_str strs[TBL_MAX_STRS])
{
	(void)strs;
	memcpy(entry, (const struct mt_bundle_clock_entry *)recs + i,
	       sizeof(struct mt_bundle_clock_entry));
	return 0;
}

static const struct tbl_kind kind_switch = {
	MT_BUNDLE_SEC_SWITCHES, sizeof(struct mt_bundle_switch_entry), fill_switch
};
static const struct tbl_kind kind_map = {
	MT_BUNDLE_SEC_MAPS, sizeof(struct mt_bundle_map_entry), fill_map
};
static const struct tbl_kind kind_thread = {
	MT_BUNDLE_SEC_THREADS, sizeof(struct mt_bundle_thread_entry), fill_thread
};
static const struct tbl_kind kind_module = {
	MT_BUNDLE_SEC_MODULES, sizeof(struct mt_bundle_module_entry), fill_module
};
static const struct tbl_kind kind_clock = {
	MT_BUNDLE_SEC_CLOCK, sizeof(struct mt_bundle_clock_entry), fill_clock
};

_Static_assert(sizeof(struct mt_bundle_map_entry) <= TBL_MAX_ENTRY, "entry buffer size");

static int tbl_plain(struct mt_bundle_writer *w, const struct tbl_kind *k, const void *recs,
		     size_t n)
{
	struct mt_bundle_table_desc d;

	if (!w)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	return tbl_write(w, k, &d, sizeof(d), recs, n);
}

int mt_bundle_write_switches(struct mt_bundle_writer *w,
			     const struct mt_bundle_switch_entry *sw, size_t n)
{
	return tbl_plain(w, &kind_switch, sw, n);
}

int mt_bundle_write_maps(struct mt_bundle_writer *w, const struct mt_bundle_map *maps, size_t n)
{
	return tbl_plain(w, &kind_map, maps, n);
}

int mt_bundle_write_threads(struct mt_bundle_writer *w, const struct mt_bundle_thread *t,
			    size_t n)
{
	return tbl_plain(w, &kind_thread, t, n);
}

int mt_bundle_write_modules(struct mt_bundle_writer *w, const struct mt_bundle_module *m,
			    size_t n)
{
	return tbl_plain(w, &kind_module, m, n);
}

int mt_bundle_write_clock(struct mt_bundle_writer *w, const struct mt_bundle_clock_desc *desc,
			  const struct mt_bundle_clock_entry *anchors, size_t n)
{
	struct mt_bundle_clock_desc d;

	if (!w || !desc)
		return w ? wr_error(w, -EINVAL, "write_clock: invalid argument") : -EINVAL;
	d = *desc;
	return tbl_write(w, &kind_clock, &d, sizeof(d), anchors, n);
}
