// SPDX-License-Identifier: MIT
/*
 * Per-type decoding of verified sections: descriptors and table entries are
 * copied up to the size this version knows (zero-filling what an older
 * writer did not write), tables are unpacked into host records whose
 * strings point into the payload, and singletons and per-CPU uniqueness are
 * enforced.
 */
#include "bundle/bundle_reader_internal.h"
#include "util/mt_array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void rd_copy_prefix(void *out, size_t out_size, const void *src, size_t src_size)
{
	size_t n = src_size < out_size ? src_size : out_size;

	memcpy(out, src, n);
	memset((uint8_t *)out + n, 0, out_size - n);
}

int rd_desc_get(struct mt_bundle_reader *r, const struct rd_section *s, void *out,
		size_t out_size, size_t v1_size, const uint8_t **tail, size_t *tail_len)
{
	uint32_t fixed;

	memset(out, 0, out_size);
	if (tail) {
		*tail = NULL;
		*tail_len = 0;
	}
	if (s->h.desc_size < sizeof(fixed))
		return rd_err(r, s, -EBADMSG, "descriptor of %u bytes has no size field",
			      s->h.desc_size);
	memcpy(&fixed, s->desc, sizeof(fixed));
	if (fixed < v1_size || fixed > s->h.desc_size)
		return rd_err(r, s, -EBADMSG,
			      "descriptor size %u outside [%zu, %u] (descriptor bytes)", fixed,
			      v1_size, s->h.desc_size);
	rd_copy_prefix(out, out_size, s->desc, fixed);
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

	if ((err = rd_desc_get(r, s, &d, sizeof(d), MT_BUNDLE_V1_PT_DESC, NULL, NULL)))
		return err;
	for (size_t i = 0; i < r->npts; i++)
		if (r->pts[i].d.cpu == d.cpu)
			return rd_err(r, s, -EBADMSG, "second PT data for cpu %u (first in section %zu)",
				      d.cpu, r->pts[i].sec);
	if (MT_ARRAY_RESERVE(r->pts, r->pts_cap, r->npts, 1))
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
	    (err = rd_desc_get(r, s, &r->trig.d, sizeof(r->trig.d), MT_BUNDLE_V1_TRIGGER_DESC,
			       &tail, &tail_len)) ||
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

	if ((err = rd_desc_get(r, s, &d, sizeof(d), MT_BUNDLE_V1_FILE_DESC, &tail, &tail_len)))
		return err;
	if (d.build_id_len > sizeof(d.build_id))
		return rd_err(r, s, -EBADMSG, "build-id length %u exceeds %zu", d.build_id_len,
			      sizeof(d.build_id));
	if (!tail_len)
		return rd_err(r, s, -EBADMSG, "embedded file without a path");
	if (MT_ARRAY_RESERVE(r->files, r->files_cap, r->nfiles, 1))
		return rd_err(r, s, -ENOMEM, "out of memory");
	f = &r->files[r->nfiles];
	memset(f, 0, sizeof(*f));
	if ((err = tail_string(r, s, tail, tail_len, &f->path)))
		return err;
	f->build_id = malloc(d.build_id_len ? d.build_id_len : 1);
	if (!f->build_id) {
		free(f->path);
		return rd_err(r, s, -ENOMEM, "out of memory");
	}
	memcpy(f->build_id, d.build_id, d.build_id_len);
	r->nfiles++;
	f->sec = s->index;
	f->f.path = f->path;
	f->f.build_id_len = d.build_id_len;
	f->f.mtime_ns = d.mtime_ns;
	f->f.size = s->h.raw_size;
	f->f.build_id = f->build_id;
	return 0;
}

static int load_ktext(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_ktext_desc d;
	struct rd_ktext *k;
	const uint8_t *tail;
	size_t tail_len;
	int err;

	if ((err = rd_desc_get(r, s, &d, sizeof(d), MT_BUNDLE_V1_KTEXT_DESC, &tail, &tail_len)))
		return err;
	if (MT_ARRAY_RESERVE(r->ktexts, r->ktexts_cap, r->nktexts, 1))
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

/* A table's descriptor (desc_size bytes, of which the table's own v1 size
 * is desc_v1), its entry size and count checked against its payload's. */
static int tbl_desc(struct mt_bundle_reader *r, struct rd_section *s, void *desc,
		    size_t desc_size, size_t desc_v1, size_t entry_min,
		    struct mt_bundle_table_desc *td)
{
	int err;

	if ((err = rd_desc_get(r, s, desc, desc_size, desc_v1, NULL, NULL)))
		return err;
	memcpy(td, desc, sizeof(*td));
	if (td->entry_size < entry_min || td->entry_size > RD_MAX_ENTRY)
		return rd_err(r, s, -EBADMSG, "entry size %u outside [%zu, %u]", td->entry_size,
			      entry_min, RD_MAX_ENTRY);
	if (td->count > s->h.raw_size / td->entry_size)
		return rd_err(r, s, -EBADMSG, "%llu entries of %u bytes exceed the %llu-byte payload",
			      (unsigned long long)td->count, td->entry_size,
			      (unsigned long long)s->h.raw_size);
	return 0;
}

/* desc as tbl_desc() reads it, and the entries. */
static int tbl_open(struct mt_bundle_reader *r, struct rd_section *s, void *desc,
		    size_t desc_size, size_t desc_v1, size_t entry_min, struct tbl *t)
{
	struct mt_bundle_table_desc td;
	const uint8_t *p;
	size_t len;
	int err;

	if ((err = tbl_desc(r, s, desc, desc_size, desc_v1, entry_min, &td)) ||
	    (err = rd_payload_held(r, s, &p, &len)))
		return err;
	*t = (struct tbl){ r, s, p, td.entry_size, td.count, p + td.count * td.entry_size,
			   len - td.count * td.entry_size };
	return 0;
}

/* Entry i as this version knows it (size bytes): longer ones cut, shorter ones zero-filled. */
static void tbl_entry(const struct tbl *t, uint64_t i, void *out, size_t size)
{
	rd_copy_prefix(out, size, t->entries + i * t->entry_size, t->entry_size);
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

static int tbl_grow(const struct tbl *t, void *arr, size_t *cap, size_t have, size_t elem)
{
	if (mt_array_reserve(arr, cap, have, (size_t)t->count, elem))
		return rd_err(t->r, t->s, -ENOMEM, "out of memory for %llu entries",
			      (unsigned long long)t->count);
	return 0;
}

/*
 * Context-switch tables hold millions of entries on busy machines: open
 * reads each through once, for its errors, and keeps only where it is;
 * its entries are read again as a stream (mt_bundle_switch_stream_open()).
 */
static int load_switches(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_table_desc desc, d;
	int err;

	if ((err = tbl_desc(r, s, &desc, sizeof(desc), MT_BUNDLE_V1_TABLE_DESC,
			    MT_BUNDLE_V1_SWITCH_ENTRY, &d)))
		return err;
	if (MT_ARRAY_RESERVE(r->swsecs, r->swsecs_cap, r->nswsecs, 1))
		return rd_err(r, s, -ENOMEM, "out of memory");
	r->swsecs[r->nswsecs++] = (struct rd_switches){ s->index, d.count, d.entry_size };
	r->nsw += (size_t)d.count;
	return rd_switches_check(r, r->nswsecs - 1);
}

static int load_clock(struct mt_bundle_reader *r, struct rd_section *s)
{
	struct mt_bundle_clock_desc d;
	struct tbl t;
	int err;

	if ((err = tbl_open(r, s, &d, sizeof(d), MT_BUNDLE_V1_CLOCK_DESC, MT_BUNDLE_V1_CLOCK_ENTRY,
			     &t)) ||
	    (err = tbl_grow(&t, &r->anchors, &r->anchors_cap, r->nanchors, sizeof(*r->anchors))))
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

	if ((err = tbl_open(r, s, &d, sizeof(d), MT_BUNDLE_V1_TABLE_DESC, MT_BUNDLE_V1_MAP_ENTRY,
			     &t)) ||
	    (err = tbl_grow(&t, &r->maps, &r->maps_cap, r->nmaps, sizeof(*r->maps))))
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

	if ((err = tbl_open(r, s, &d, sizeof(d), MT_BUNDLE_V1_TABLE_DESC, MT_BUNDLE_V1_THREAD_ENTRY,
			     &t)) ||
	    (err = tbl_grow(&t, &r->threads, &r->threads_cap, r->nthreads, sizeof(*r->threads))))
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

	if ((err = tbl_open(r, s, &d, sizeof(d), MT_BUNDLE_V1_TABLE_DESC, MT_BUNDLE_V1_MODULE_ENTRY,
			     &t)) ||
	    (err = tbl_grow(&t, &r->modules, &r->modules_cap, r->nmodules, sizeof(*r->modules))))
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

	if (s->h.type < MT_BUNDLE_SEC_CPU || s->h.type >= MT_BUNDLE_SEC_NR)
		return 0;       /* a newer writer's section: skipped, as the format promises */
	s->known = true;
	if (s->h.compression != MT_BUNDLE_COMP_NONE && s->h.compression != MT_BUNDLE_COMP_ZSTD)
		return rd_err(r, s, -EBADMSG, "unknown compression %u", s->h.compression);
	switch (s->h.type) {
	case MT_BUNDLE_SEC_CPU:
		if ((err = singleton(r, s, &r->cpu_sec)))
			return err;
		return rd_desc_get(r, s, &r->cpu, sizeof(r->cpu), MT_BUNDLE_V1_CPU_DESC, NULL, NULL);
	case MT_BUNDLE_SEC_PT_CONFIG:
		if ((err = singleton(r, s, &r->cfg_sec)))
			return err;
		return rd_desc_get(r, s, &r->cfg, sizeof(r->cfg), MT_BUNDLE_V1_PT_CONFIG_DESC, NULL,
				   NULL);
	case MT_BUNDLE_SEC_KALLSYMS:
		if ((err = singleton(r, s, &r->kallsyms_sec)))
			return err;
		return rd_desc_get(r, s, &blob, sizeof(blob), MT_BUNDLE_V1_BLOB_DESC, NULL, NULL);
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
