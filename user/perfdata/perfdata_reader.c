// SPDX-License-Identifier: MIT
/* perf.data reader; see perfdata_reader.h. */
#include "perfdata/perfdata_reader.h"
#include "util/regfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Far more than perf writes; bounds what a hostile file can make us allocate. */
#define MAX_ATTRS 4096
#define MAX_IDS (1u << 20)

static int fail(struct perfdata_file *f, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->err, sizeof(f->err), fmt, ap);
	va_end(ap);
	return e;
}

/* Whether [off, off + len) lies inside the file. */
static bool inside(const struct perfdata_file *f, uint64_t off, uint64_t len)
{
	return off <= f->size && len <= f->size - off;
}

static int read_attrs(struct perfdata_file *f)
{
	const struct perfdata_file_header *h = &f->h;
	uint64_t esz = h->attr_size, n, total_ids = 0;

	/* An entry is an attr (at least the first published size) and its ids section. */
	if (esz < PERF_ATTR_SIZE_VER0 + sizeof(struct perfdata_section) || esz > 4096)
		return fail(f, -EBADMSG, "bad attr entry size %" PRIu64, esz);
	if (h->attrs.size % esz || !inside(f, h->attrs.offset, h->attrs.size))
		return fail(f, -EBADMSG, "attr section (offset %" PRIu64 ", %" PRIu64
			    " bytes) is outside the file or not whole entries", h->attrs.offset,
			    h->attrs.size);
	n = h->attrs.size / esz;
	if (n == 0 || n > MAX_ATTRS)
		return fail(f, -EBADMSG, "%" PRIu64 " attrs", n);
	if (!(f->attrs = calloc(n, sizeof(*f->attrs))))
		return fail(f, -ENOMEM, "out of memory");
	f->nattrs = n;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *e = f->base + h->attrs.offset + i * esz;
		struct perfdata_section ids;
		uint64_t asz = esz - sizeof(ids);
		uint32_t declared;

		memcpy(&f->attrs[i].attr, e,
		       asz < sizeof(f->attrs[i].attr) ? asz : sizeof(f->attrs[i].attr));
		memcpy(&declared, e + 4, sizeof(declared));
		if (declared && declared != asz)
			return fail(f, -EBADMSG, "attr %" PRIu64 " at offset %" PRIu64
				    ": size %u in an entry of %" PRIu64, i,
				    h->attrs.offset + i * esz, declared, asz);
		memcpy(&ids, e + asz, sizeof(ids));
		if (ids.size % 8 || !inside(f, ids.offset, ids.size) || ids.size / 8 > MAX_IDS)
			return fail(f, -EBADMSG, "attr %" PRIu64 ": bad id section (offset %" PRIu64
				    ", %" PRIu64 " bytes)", i, ids.offset, ids.size);
		f->attrs[i].nids = ids.size / 8;
		total_ids += ids.size / 8;
		if (total_ids > MAX_IDS)
			return fail(f, -EFBIG, "more than %u sample ids", MAX_IDS);
	}
	if (!(f->id_store = calloc(total_ids ? total_ids : 1, sizeof(uint64_t))))
		return fail(f, -ENOMEM, "out of memory");
	total_ids = 0;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *e = f->base + h->attrs.offset + i * esz;
		struct perfdata_section ids;

		memcpy(&ids, e + esz - sizeof(ids), sizeof(ids));
		memcpy(f->id_store + total_ids, f->base + ids.offset, ids.size);
		f->attrs[i].ids = f->id_store + total_ids;
		total_ids += f->attrs[i].nids;
	}
	return 0;
}

/* The feature table follows the data: one section per set bit, in bit order. */
static int read_features(struct perfdata_file *f)
{
	uint64_t at = f->h.data.offset + f->h.data.size;

	for (unsigned int bit = 0; bit < 256; bit++) {
		struct perfdata_section s;

		if (!(f->h.features[bit / 64] >> (bit % 64) & 1))
			continue;
		if (!inside(f, at, sizeof(s)))
			return fail(f, -ENODATA, "feature table truncated at offset %" PRIu64, at);
		memcpy(&s, f->base + at, sizeof(s));
		at += sizeof(s);
		if (!inside(f, s.offset, s.size))
			return fail(f, -EBADMSG, "feature %u (offset %" PRIu64 ", %" PRIu64
				    " bytes) is outside the file", bit, s.offset, s.size);
		f->feat[bit] = s;
	}
	return 0;
}

int perfdata_open_mem(struct perfdata_file *f, const void *buf, size_t len)
{
	struct perfdata_file_header *h = &f->h;
	int e;

	memset(f, 0, sizeof(*f));
	f->base = buf;
	f->size = len;
	if (len < 16 || memcmp(buf, PERFDATA_MAGIC, 8))
		return fail(f, -EBADMSG, "not a perf.data file (no PERFILE2 magic)");
	memcpy(&h->size, f->base + 8, sizeof(h->size));
	if (h->size == 16)
		return fail(f, -EPROTONOSUPPORT, "a pipe-mode perf.data (perf record -o -); "
			    "rewrite it with perf inject -i IN -o OUT first");
	if (h->size < sizeof(*h) || len < sizeof(*h))
		return fail(f, -ENODATA, "truncated perf.data header (%zu bytes)", len);
	memcpy(h, buf, sizeof(*h));
	if (!inside(f, h->data.offset, h->data.size) || h->data.offset % 8)
		return fail(f, -ENODATA, "data section (offset %" PRIu64 ", %" PRIu64
			    " bytes) runs past the end of the file (%zu bytes): truncated?",
			    h->data.offset, h->data.size, len);
	if ((e = read_attrs(f)))
		return e;
	e = read_features(f);
	/*
	 * perf record writes the data size and the feature table when it
	 * ends: a data size of 0 is a recording killed before that, unless
	 * the features say the records are in other files (perf record
	 * --threads, perfdata_open_input()).
	 */
	if (!h->data.size && (e || !f->feat[PERFDATA_FEAT_DIR_FORMAT].size))
		return fail(f, -ENODATA, "the header's data size is 0, so no record can be read: "
			    "was 'perf record' properly terminated?");
	return e;
}

int perfdata_open(struct perfdata_file *f, const char *path)
{
	const char *kind;
	struct stat st;
	void *p;
	int fd, e;

	memset(f, 0, sizeof(*f));
	/* The messages leave PATH to the caller, as those of the contents do. */
	fd = mt_open_regular(path, &kind);
	if (fd < 0 && kind)
		return fail(f, -EINVAL, "%s, not a regular file", kind);
	if (fd < 0)
		return fail(f, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) || st.st_size <= 0) {
		close(fd);
		return fail(f, -EINVAL, "empty file");
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return fail(f, -errno, "cannot map it: %s", strerror(errno));
	e = perfdata_open_mem(f, p, (size_t)st.st_size);
	f->mapped = true;
	return e;
}

void perfdata_close(struct perfdata_file *f)
{
	if (f->mapped && f->base)
		munmap((void *)f->base, f->size);
	free(f->attrs);
	free(f->id_store);
	f->base = NULL;
	f->attrs = NULL;
	f->id_store = NULL;
}

int perfdata_feature(const struct perfdata_file *f, unsigned int bit, const uint8_t **p,
		     size_t *len)
{
	if (bit >= 256 || !f->feat[bit].size)
		return -ENOENT;
	*p = f->base + f->feat[bit].offset;
	*len = (size_t)f->feat[bit].size;
	return 0;
}

static const struct perfdata_attr *attr_of_id(const struct perfdata_file *f, uint64_t id)
{
	for (size_t i = 0; i < f->nattrs; i++)
		for (size_t k = 0; k < f->attrs[i].nids; k++)
			if (f->attrs[i].ids[k] == id)
				return &f->attrs[i];
	return NULL;
}

/* Bytes of the sample_id trailer for SAMPLE_TYPE. */
static size_t trailer_size(uint64_t t)
{
	return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
		    !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		    !!(t & PERF_SAMPLE_IDENTIFIER));
}

/*
 * Which attr a sideband record belongs to: by the identifier at its end
 * when the attrs carry one, else the only sample_type there is.
 */
static const struct perfdata_attr *sideband_attr(const struct perfdata_file *f,
						 const uint8_t *body, size_t len)
{
	uint64_t t0 = f->attrs[0].attr.sample_type, id;

	if (t0 & PERF_SAMPLE_IDENTIFIER) {
		if (len < 8)
			return NULL;
		memcpy(&id, body + len - 8, 8);
		return attr_of_id(f, id);
	}
	for (size_t i = 1; i < f->nattrs; i++)
		if (f->attrs[i].attr.sample_type != t0)
			return NULL;
	return &f->attrs[0];
}

static void parse_trailer(struct perfdata_rec *r, uint64_t t, const uint8_t *p)
{
	uint64_t v;

	r->sid = (struct perfdata_sample_id){ .cpu = UINT32_MAX };
	if (t & PERF_SAMPLE_TID) {
		memcpy(&r->sid.pid, p, 4);
		memcpy(&r->sid.tid, p + 4, 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		memcpy(&r->sid.time, p, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		memcpy(&r->sid.id, p, 8);
		p += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID)
		p += 8;
	if (t & PERF_SAMPLE_CPU) {
		memcpy(&r->sid.cpu, p, 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER) {
		memcpy(&v, p, 8);
		r->sid.id = v;
	}
}

int perfdata_next(struct perfdata_file *f, uint64_t *pos, struct perfdata_rec *r)
{
	uint64_t off = f->h.data.offset + *pos, end = f->h.data.offset + f->h.data.size;

	memset(r, 0, sizeof(*r));
	if (off >= end)
		return 0;
	if (end - off < sizeof(r->h))
		return fail(f, -ENODATA, "record at offset %" PRIu64 " truncated", off);
	memcpy(&r->h, f->base + off, sizeof(r->h));
	if (r->h.size < sizeof(r->h) || r->h.size > end - off)
		return fail(f, -EBADMSG, "record at offset %" PRIu64 " (type %u): bad size %u", off,
			    r->h.type, r->h.size);
	r->offset = off;
	r->body = f->base + off + sizeof(r->h);
	r->body_len = r->h.size - sizeof(r->h);
	*pos += r->h.size;
	if (r->h.type == PERFDATA_REC_AUXTRACE) {
		uint64_t n;

		if (r->body_len < sizeof(struct perfdata_auxtrace) - sizeof(r->h))
			return fail(f, -EBADMSG, "AUXTRACE record at offset %" PRIu64 " too short",
				    off);
		memcpy(&n, r->body, 8);
		if (n > end - off - r->h.size)
			return fail(f, -ENODATA, "AUXTRACE record at offset %" PRIu64 ": %" PRIu64
				    " bytes of trace past the end of the data: truncated?", off, n);
		r->aux = f->base + off + r->h.size;
		r->aux_len = n;
		*pos += n;
		return 1;
	}
	/* Kernel records other than samples end with the sample_id trailer. */
	if (r->h.type < PERFDATA_REC_USER_TYPE_START && r->h.type != PERF_RECORD_SAMPLE) {
		const struct perfdata_attr *a = sideband_attr(f, r->body, r->body_len);
		size_t ts;

		if (a && a->attr.sample_id_all) {
			ts = trailer_size(a->attr.sample_type);
			if (ts > r->body_len)
				return fail(f, -EBADMSG, "record at offset %" PRIu64
					    " (type %u) is shorter than its sample_id", off, r->h.type);
			r->body_len -= ts;
			parse_trailer(r, a->attr.sample_type, r->body + r->body_len);
			r->has_sid = true;
			r->attr = a;
		}
	}
	return 1;
}
