// SPDX-License-Identifier: MIT
/*
 * Per-type decoding of verified sections: descriptors are copied up to the
 * size this version knows (zero-filling what an older writer did not write),
 * tables are unpacked into host records whose strings point into the
 * payload, and singletons and per-CPU uniqueness are enforced.
 */
#include "bundle/bundle_reader_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Copies a descriptor's fixed part into out (v1 size `min`); sets *tail. */
static int desc_get(struct mt_bundle_reader *r, struct rd_section *s, void *out, size_t min,
		    const uint8_t **tail, size_t *tail_len)
{
	uint32_t fixed;

	memset(out, 0, min);
	if (tail) {
		*tail = NULL;
		*tail_len = 0;
	}
	if (s->h.desc_size < sizeof(fixed))
		return rd_err(r, s, -EBADMSG, "descriptor of %u bytes has no size field",
			      s->h.desc_size);
	memcpy(&fixed, s->desc, sizeof(fixed));
	if (fixed < min || fixed > s->h.desc_size)
		return rd_err(r, s, -EBADMSG,
			      "descriptor size %u outside [%zu, %u] (descriptor bytes)", fixed,
			      min, s->h.desc_size);
	memcpy(out, s->desc, min);
	if (tail) {
		*tail = s->desc + fixed;
		*tail_len = s->h.desc_size - fixed;
	}
	return 0;
}

static int singleton(struct mt_bundle_reader *r, struct rd_section *s, size_t *slot)
{
	if (*slot != RD_NONE)
		return rd_err(r, s, -EBADMSG, "duplicate section (first is section %zu)", *slot);
	*slot = s->index;
	return 0;
}

/* A NUL-terminated copy of a descriptor tail that must not contain NUL. */
static int tail_string(struct mt_bundle_reader *r, struct rd_section *s, const uint8_t *tail,
		       size_t len, char **out)
{
	if (memchr(tail, 0, len))
		return rd_err(r, s, -EBADMSG, "descriptor string contains a NUL byte");
	*out = malloc(len + 1);
	if (!*out)
		return rd_err(r, s, -ENOMEM, "out of memory");
	memcpy(*out, tail, len);
	(*out)[len] = 0;
	return 0;
}

static int load_pt(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_pt_desc d;
	int err;

	if ((err = desc_get(r, s, &d, sizeof(d), NULL, NULL)))
		return err;
	for (size_t i = 0; i < r->npts; i++)
		if (r->pts[i].d.cpu == d.cpu)
			return rd_err(r, s, -EBADMSG, "second PT data for cpu %u (first in section %zu)",
				      d.cpu, r->pts[i].sec);
	if (rd_grow(&r->pts, r->npts, 1, sizeof(*r->pts)))
		return rd_err(r, s, -ENOMEM, "out of memory");
	r->pts[r->npts++] = (struct rd_pt){ s->index, d };
	return 0;
}

static int load_trigger(struct mt_bundle_reader *r, struct rd_section *s)
{
	const uint8_t *tail;
	size_t tail_len;
	int err;

	if ((err = singleton(r, s, &r->trig_sec)) ||
	    (err = desc_get(r, s, &r->trig.d, sizeof(r->trig.d), &tail, &tail_len)) ||
	    (err = tail_string(r, s, tail, tail_len, &r->trig_spec)))
		return err;
	r->trig.spec = r->trig_spec;
	return 0;
}

static int load_file(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_file_desc d;
	struct rd_file *f;
	const uint8_t *tail;
	size_t tail_len;
	int err;

	if ((err = desc_get(r, s, &d, sizeof(d), &tail, &tail_len)))
		return err;
	if (d.build_id_len > sizeof(d.build_id))
		return rd_err(r, s, -EBADMSG, "build-id length %u exceeds %zu", d.build_id_len,
			      sizeof(d.build_id));
	if (!tail_len)
		return rd_err(r, s, -EBADMSG, "embedded file without a path");
	if (rd_grow(&r->files, r->nfiles, 1, sizeof(*r->files)))
		return rd_err(r, s, -ENOMEM, "out of memory");
	f = &r->files[r->nfiles];
	memset(f, 0, sizeof(*f));
	if ((err = tail_string(r, s, tail, tail_len, &f->path)))
		return err;
	r->nfiles++;
	f->sec = s->index;
	f->f.path = f->path;
	f->f.build_id_len = d.build_id_len;
	f->f.mtime_ns = d.mtime_ns;
	f->f.size = s->h.raw_size;
	/* build_id points at the copy inside the file image's descriptor. */
	f->f.build_id = s->desc + offsetof(struct mt_bundle_file_desc, build_id);
	return 0;
}

static int load_ktext(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_ktext_desc d;
	struct rd_ktext *k;
	const uint8_t *tail;
	size_t tail_len;
	int err;

	if ((err = desc_get(r, s, &d, sizeof(d), &tail, &tail_len)))
		return err;
	if (rd_grow(&r->ktexts, r->nktexts, 1, sizeof(*r->ktexts)))
		return rd_err(r, s, -ENOMEM, "out of memory");
	k = &r->ktexts[r->nktexts];
	memset(k, 0, sizeof(*k));
	if ((err = tail_string(r, s, tail, tail_len, &k->name)))
		return err;
	r->nktexts++;
	k->sec = s->index;
	k->k.addr = d.addr;
	k->k.name = k->name;
	k->k.size = s->h.raw_size;
	if (d.addr + s->h.raw_size < d.addr)
		return rd_err(r, s, -EBADMSG, "kernel text at %#llx of %llu bytes wraps around",
			      (unsigned long long)d.addr, (unsigned long long)s->h.raw_size);
	return 0;
}

/* ---- tables ---- */

struct tbl {
	struct mt_bundle_reader *r;
	struct rd_section *s;
	const uint8_t *entries;
	uint32_t entry_size;
	uint64_t count;
	const uint8_t *pool;
	uint64_t pool_len;
};

static int tbl_open(struct mt_bundle_reader *r, struct rd_section *s, void *desc,
		    size_t desc_min, size_t entry_min, struct tbl *t)
{
	struct mt_bundle_table_desc td;
	const uint8_t *p;
	size_t len;
	int err;

	if ((err = desc_get(r, s, desc, desc_min, NULL, NULL)))
		return err;
	memcpy(&td, desc, sizeof(td));
	if (td.entry_size < entry_min || td.entry_size > RD_MAX_ENTRY)
		return rd_err(r, s, -EBADMSG, "entry size %u outside [%zu, %u]", td.entry_size,
			      entry_min, RD_MAX_ENTRY);
	if ((err = rd_payload(r, s, &p, &len)))
		return err;
	if (td.count > len / td.entry_size)
		return rd_err(r, s, -EBADMSG, "%llu entries of %u bytes exceed the %zu-byte payload",
			      (unsigned long long)td.count, td.entry_size, len);
	*t = (struct tbl){ r, s, p, td.entry_size, td.count, p + td.count * td.entry_size,
			   len - td.count * td.entry_size };
	return 0;
}

/* Entry i's first `size` bytes: the fields this version knows (entries may be longer). */
static void tbl_entry(const struct tbl *t, uint64_t i, void *out, size_t size)
{
	memcpy(out, t->entries + i * t->entry_size, size);
}

/* A pool string: in bounds and NUL-terminated; text must hold no inner NUL. */
static int tbl_str(const struct tbl *t, uint64_t i, const char *what, struct mt_bundle_str ref,
		   bool text, const char **out)
{
	const uint8_t *p;

	if ((uint64_t)ref.off + ref.len >= t->pool_len || t->pool[ref.off + ref.len])
		return rd_err(t->r, t->s, -EBADMSG,
			      "entry %llu: %s (pool offset %u, %u bytes) is outside the %llu-byte pool %s",
			      (unsigned long long)i, what, ref.off, ref.len,
			      (unsigned long long)t->pool_len, "or not terminated");
	p = t->pool + ref.off;
	if (text && memchr(p, 0, ref.len))
		return rd_err(t->r, t->s, -EBADMSG, "entry %llu: %s contains a NUL byte",
			      (unsigned long long)i, what);
	*out = (const char *)p;
	return 0;
}

static int tbl_grow(const struct tbl *t, void *arr, size_t have, size_t elem)
{
	if (rd_grow(arr, have, t->count, elem))
		return rd_err(t->r, t->s, -ENOMEM, "out of memory for %llu entries",
			      (unsigned long long)t->count);
	return 0;
}

static int load_switches(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_table_desc d;
	struct tbl t;
	int err;

	if ((err = tbl_open(r, s, &d, sizeof(d), sizeof(*r->sw), &t)) ||
	    (err = tbl_grow(&t, &r->sw, r->nsw, sizeof(*r->sw))))
		return err;
	for (uint64_t i = 0; i < t.count; i++)
		tbl_entry(&t, i, &r->sw[r->nsw++], sizeof(*r->sw));
	rd_payload_release(r, s);       /* copied whole: nothing points into it */
	return 0;
}

static int load_clock(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_clock_desc d;
	struct tbl t;
	int err;

	if ((err = tbl_open(r, s, &d, sizeof(d), sizeof(*r->anchors), &t)) ||
	    (err = tbl_grow(&t, &r->anchors, r->nanchors, sizeof(*r->anchors))))
		return err;
	if (r->clock_sec == RD_NONE) {
		r->clock_sec = s->index;
		r->clock = d;
	}
	for (uint64_t i = 0; i < t.count; i++)
		tbl_entry(&t, i, &r->anchors[r->nanchors++], sizeof(*r->anchors));
	rd_payload_release(r, s);       /* copied whole: nothing points into it */
	return 0;
}

static int load_maps(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_table_desc d;
	struct tbl t;
	int err;

	if ((err = tbl_open(r, s, &d, sizeof(d), sizeof(struct mt_bundle_map_entry), &t)) ||
	    (err = tbl_grow(&t, &r->maps, r->nmaps, sizeof(*r->maps))))
		return err;
	for (uint64_t i = 0; i < t.count; i++) {
		struct mt_bundle_map *m = &r->maps[r->nmaps];
		struct mt_bundle_map_entry e;
		const char *bid;

		tbl_entry(&t, i, &e, sizeof(e));
		if (e.start >= e.end)
			return rd_err(r, s, -EBADMSG, "entry %llu: empty map range %#llx-%#llx",
				      (unsigned long long)i, (unsigned long long)e.start,
				      (unsigned long long)e.end);
		*m = (struct mt_bundle_map){ .tsc = e.tsc, .start = e.start, .end = e.end,
					     .file_offset = e.file_offset, .pid = e.pid,
					     .prot = e.prot, .event = e.event,
					     .build_id_len = e.build_id.len };
		if ((err = tbl_str(&t, i, "path", e.path, true, &m->path)) ||
		    (err = tbl_str(&t, i, "build-id", e.build_id, false, &bid)))
			return err;
		m->build_id = (const uint8_t *)bid;
		r->nmaps++;
	}
	return 0;
}

static int load_threads(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_table_desc d;
	struct tbl t;
	int err;

	if ((err = tbl_open(r, s, &d, sizeof(d), sizeof(struct mt_bundle_thread_entry), &t)) ||
	    (err = tbl_grow(&t, &r->threads, r->nthreads, sizeof(*r->threads))))
		return err;
	for (uint64_t i = 0; i < t.count; i++) {
		struct mt_bundle_thread *th = &r->threads[r->nthreads];
		struct mt_bundle_thread_entry e;

		tbl_entry(&t, i, &e, sizeof(e));
		*th = (struct mt_bundle_thread){ .tsc = e.tsc, .pid = e.pid, .tid = e.tid,
						 .cmdline_len = e.cmdline.len };
		if ((err = tbl_str(&t, i, "comm", e.comm, true, &th->comm)) ||
		    (err = tbl_str(&t, i, "cmdline", e.cmdline, false, &th->cmdline)))
			return err;
		r->nthreads++;
	}
	return 0;
}

static int load_modules(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_table_desc d;
	struct tbl t;
	int err;

	if ((err = tbl_open(r, s, &d, sizeof(d), sizeof(struct mt_bundle_module_entry), &t)) ||
	    (err = tbl_grow(&t, &r->modules, r->nmodules, sizeof(*r->modules))))
		return err;
	for (uint64_t i = 0; i < t.count; i++) {
		struct mt_bundle_module *m = &r->modules[r->nmodules];
		struct mt_bundle_module_entry e;

		tbl_entry(&t, i, &e, sizeof(e));
		if (e.start > e.end)
			return rd_err(r, s, -EBADMSG, "entry %llu: module range %#llx-%#llx is reversed",
				      (unsigned long long)i, (unsigned long long)e.start,
				      (unsigned long long)e.end);
		*m = (struct mt_bundle_module){ .start = e.start, .end = e.end };
		if ((err = tbl_str(&t, i, "name", e.name, true, &m->name)))
			return err;
		r->nmodules++;
	}
	return 0;
}

int rd_section_load(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_blob_desc blob;
	int err;

	if (s->h.type < MT_BUNDLE_SEC_CPU || s->h.type > MT_BUNDLE_SEC_MODULES)
		return 0;       /* a newer writer's section: skipped, as the format promises */
	s->known = true;
	if (s->h.compression != MT_BUNDLE_COMP_NONE && s->h.compression != MT_BUNDLE_COMP_ZSTD)
		return rd_err(r, s, -EBADMSG, "unknown compression %u", s->h.compression);
	switch (s->h.type) {
	case MT_BUNDLE_SEC_CPU:
		if ((err = singleton(r, s, &r->cpu_sec)))
			return err;
		return desc_get(r, s, &r->cpu, sizeof(r->cpu), NULL, NULL);
	case MT_BUNDLE_SEC_PT_CONFIG:
		if ((err = singleton(r, s, &r->cfg_sec)))
			return err;
		return desc_get(r, s, &r->cfg, sizeof(r->cfg), NULL, NULL);
	case MT_BUNDLE_SEC_KALLSYMS:
		if ((err = singleton(r, s, &r->kallsyms_sec)))
			return err;
		return desc_get(r, s, &blob, sizeof(blob), NULL, NULL);
	case MT_BUNDLE_SEC_PT_DATA: return load_pt(r, s);
	case MT_BUNDLE_SEC_TRIGGER: return load_trigger(r, s);
	case MT_BUNDLE_SEC_FILE: return load_file(r, s);
	case MT_BUNDLE_SEC_KTEXT: return load_ktext(r, s);
	case MT_BUNDLE_SEC_SWITCHES: return load_switches(r, s);
	case MT_BUNDLE_SEC_MAPS: return load_maps(r, s);
	case MT_BUNDLE_SEC_THREADS: return load_threads(r, s);
	case MT_BUNDLE_SEC_MODULES: return load_modules(r, s);
	case MT_BUNDLE_SEC_CLOCK: return load_clock(r, s);
	default:
		return rd_err(r, s, -EBADMSG, "internal: no loader for this type");
	}
}
