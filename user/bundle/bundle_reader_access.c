// SPDX-License-Identifier: MIT
/* The reader's public getters over what mt_bundle_open() decoded. */
#include "bundle/bundle_reader_internal.h"

#include <errno.h>
#include <string.h>

void mt_bundle_version(const struct mt_bundle_reader *r, uint16_t *major, uint16_t *minor)
{
	if (major)
		*major = r ? r->major : 0;
	if (minor)
		*minor = r ? r->minor : 0;
}

size_t mt_bundle_section_count(const struct mt_bundle_reader *r)
{
	return r ? r->nsecs : 0;
}

int mt_bundle_section_info(const struct mt_bundle_reader *r, size_t idx,
			   struct mt_bundle_section_info *info)
{
	const struct rd_section *s;

	if (!r || !info || idx >= r->nsecs)
		return -EINVAL;
	s = &r->secs[idx];
	*info = (struct mt_bundle_section_info){
		.type = s->h.type, .compression = s->h.compression, .known = s->known,
		.offset = s->off, .desc_size = s->h.desc_size,
		.stored_size = s->h.stored_size, .raw_size = s->h.raw_size,
	};
	return 0;
}

int mt_bundle_get_cpu(const struct mt_bundle_reader *r, struct mt_bundle_cpu_desc *cpu)
{
	if (!r || !cpu)
		return -EINVAL;
	if (r->cpu_sec == RD_NONE)
		return -ENOENT;
	*cpu = r->cpu;
	return 0;
}

int mt_bundle_get_pt_config(const struct mt_bundle_reader *r,
			    struct mt_bundle_pt_config_desc *cfg)
{
	if (!r || !cfg)
		return -EINVAL;
	if (r->cfg_sec == RD_NONE)
		return -ENOENT;
	*cfg = r->cfg;
	return 0;
}

const char *mt_bundle_missing_section(const struct mt_bundle_reader *r)
{
	if (r->cpu_sec == RD_NONE)
		return mt_bundle_section_name(MT_BUNDLE_SEC_CPU);
	if (r->cfg_sec == RD_NONE)
		return mt_bundle_section_name(MT_BUNDLE_SEC_PT_CONFIG);
	return NULL;
}

int mt_bundle_get_trigger(const struct mt_bundle_reader *r, struct mt_bundle_trigger *t)
{
	if (!r || !t)
		return -EINVAL;
	if (r->trig_sec == RD_NONE)
		return -ENOENT;
	*t = r->trig;
	return 0;
}

size_t mt_bundle_pt_count(const struct mt_bundle_reader *r)
{
	return r ? r->npts : 0;
}

int mt_bundle_pt_desc(const struct mt_bundle_reader *r, size_t i, struct mt_bundle_pt_desc *pt)
{
	if (!r || !pt || i >= r->npts)
		return -EINVAL;
	*pt = r->pts[i].d;
	return 0;
}

int mt_bundle_pt_data(struct mt_bundle_reader *r, size_t i, const uint8_t **data, size_t *len)
{
	if (!r || !data || !len || i >= r->npts)
		return -EINVAL;
	return rd_payload(r, &r->secs[r->pts[i].sec], data, len);
}

int mt_bundle_pt_release(struct mt_bundle_reader *r, size_t i)
{
	if (!r || i >= r->npts)
		return -EINVAL;
	rd_payload_release(r, &r->secs[r->pts[i].sec]);
	return 0;
}

size_t mt_bundle_maps(const struct mt_bundle_reader *r, const struct mt_bundle_map **maps)
{
	if (maps)
		*maps = r ? r->maps : NULL;
	return r ? r->nmaps : 0;
}

size_t mt_bundle_threads(const struct mt_bundle_reader *r, const struct mt_bundle_thread **t)
{
	if (t)
		*t = r ? r->threads : NULL;
	return r ? r->nthreads : 0;
}

size_t mt_bundle_modules(const struct mt_bundle_reader *r, const struct mt_bundle_module **m)
{
	if (m)
		*m = r ? r->modules : NULL;
	return r ? r->nmodules : 0;
}

int mt_bundle_clock(const struct mt_bundle_reader *r, struct mt_bundle_clock_desc *desc,
		    const struct mt_bundle_clock_entry **anchors, size_t *n)
{
	if (!r || !anchors || !n)
		return -EINVAL;
	if (r->clock_sec == RD_NONE)
		return -ENOENT;
	if (desc)
		*desc = r->clock;
	*anchors = r->anchors;
	*n = r->nanchors;
	return 0;
}

size_t mt_bundle_file_count(const struct mt_bundle_reader *r)
{
	return r ? r->nfiles : 0;
}

int mt_bundle_file_info(const struct mt_bundle_reader *r, size_t i, struct mt_bundle_file *f)
{
	if (!r || !f || i >= r->nfiles)
		return -EINVAL;
	*f = r->files[i].f;
	return 0;
}

int mt_bundle_file_find(const struct mt_bundle_reader *r, const uint8_t *build_id,
			size_t build_id_len, const char *path)
{
	if (!r || (!build_id_len && !path) || (build_id_len && !build_id))
		return -EINVAL;
	for (size_t i = 0; build_id_len && i < r->nfiles; i++) {
		const struct mt_bundle_file *f = &r->files[i].f;

		if (f->build_id_len == build_id_len && !memcmp(f->build_id, build_id, build_id_len))
			return (int)i;
	}
	/* By path only where no build-ids contradict: a rebuilt file is another file. */
	for (size_t i = 0; path && i < r->nfiles; i++) {
		const struct mt_bundle_file *f = &r->files[i].f;

		if ((!build_id_len || !f->build_id_len) && !strcmp(f->path, path))
			return (int)i;
	}
	return -ENOENT;
}

int mt_bundle_file_data(struct mt_bundle_reader *r, size_t i, const uint8_t **data,
			size_t *len)
{
	if (!r || !data || !len || i >= r->nfiles)
		return -EINVAL;
	return rd_payload(r, &r->secs[r->files[i].sec], data, len);
}

size_t mt_bundle_ktext_count(const struct mt_bundle_reader *r)
{
	return r ? r->nktexts : 0;
}

int mt_bundle_ktext_info(const struct mt_bundle_reader *r, size_t i, struct mt_bundle_ktext *kt)
{
	if (!r || !kt || i >= r->nktexts)
		return -EINVAL;
	*kt = r->ktexts[i].k;
	return 0;
}

int mt_bundle_ktext_data(struct mt_bundle_reader *r, size_t i, const uint8_t **code,
			 size_t *len)
{
	if (!r || !code || !len || i >= r->nktexts)
		return -EINVAL;
	return rd_payload(r, &r->secs[r->ktexts[i].sec], code, len);
}

int mt_bundle_kallsyms(struct mt_bundle_reader *r, const char **text, size_t *len)
{
	const uint8_t *p;
	int err;

	if (!r || !text || !len)
		return -EINVAL;
	if (r->kallsyms_sec == RD_NONE)
		return -ENOENT;
	if ((err = rd_payload(r, &r->secs[r->kallsyms_sec], &p, len)))
		return err;
	*text = (const char *)p;
	return 0;
}
