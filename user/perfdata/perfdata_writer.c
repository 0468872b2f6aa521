// SPDX-License-Identifier: MIT
/* perf.data writer; see perfdata_writer.h. */
#include "perfdata/perfdata_writer.h"

#include "perfdata/perfdata_atomic.h"
#include "util/mt_array.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ATTRS 4
#define MAX_FEATS 32
/* Sample ids start high so that they are recognisable in dumps. */
#define FIRST_ID 1000

struct feat {
	uint8_t *data;
	size_t len;
};

struct perfdata_writer {
	struct pd_atomic out;
	struct perf_event_attr attrs[MAX_ATTRS];
	char *names[MAX_ATTRS];
	size_t nattrs;
	uint64_t data_start;    /* 0 until the first record */
	uint64_t pos;           /* file offset of the next record */
	uint64_t *aux_index;    /* file offsets of AUXTRACE records */
	size_t naux, aux_cap;
	struct feat feats[MAX_FEATS];
	char err[512];
};

static int fail(struct perfdata_writer *w, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	return e;
}

int perfdata_writer_create(struct perfdata_writer **out, const char *path, char *err,
			   size_t errlen)
{
	struct perfdata_writer *w = calloc(1, sizeof(*w));
	int e;

	*out = NULL;
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((e = pd_atomic_open(&w->out, path, err, errlen))) {
		free(w);
		return e;
	}
	*out = w;
	return 0;
}

void perfdata_writer_free(struct perfdata_writer *w)
{
	if (!w)
		return;
	pd_atomic_abort(&w->out);
	for (size_t i = 0; i < w->nattrs; i++)
		free(w->names[i]);
	for (size_t i = 0; i < MAX_FEATS; i++)
		free(w->feats[i].data);
	free(w->aux_index);
	free(w);
}

const char *perfdata_writer_errmsg(const struct perfdata_writer *w)
{
	return w ? w->err : "no writer";
}

/* Everything before the data: header, one id per attr, the attrs. */
static uint64_t ids_offset(void)
{
	return sizeof(struct perfdata_file_header);
}

static uint64_t attrs_offset(const struct perfdata_writer *w)
{
	return ids_offset() + w->nattrs * sizeof(uint64_t);
}

static uint64_t attr_entry_size(void)
{
	return PERFDATA_ATTR_SIZE + sizeof(struct perfdata_section);
}

int perfdata_writer_add_attr(struct perfdata_writer *w, const struct perf_event_attr *attr,
			     const char *name, uint64_t *id)
{
	if (w->data_start || w->nattrs == MAX_ATTRS)
		return fail(w, -EINVAL, "attrs must come before records (at most %d)", MAX_ATTRS);
	if (!(w->names[w->nattrs] = strdup(name)))
		return fail(w, -ENOMEM, "out of memory");
	w->attrs[w->nattrs] = *attr;
	w->attrs[w->nattrs].size = PERFDATA_ATTR_SIZE;
	*id = FIRST_ID + w->nattrs++;
	return 0;
}

static int put(struct perfdata_writer *w, const void *p, size_t len)
{
	if (!w->data_start) {
		w->data_start = attrs_offset(w) + w->nattrs * attr_entry_size();
		if (fseeko(w->out.f, (off_t)w->data_start, SEEK_SET))
			return fail(w, -errno, "%s: %s", w->out.of.path, strerror(errno));
		w->pos = w->data_start;
	}
	if (len && fwrite(p, 1, len, w->out.f) != len)
		return fail(w, errno ? -errno : -EIO, "cannot write %s: %s", w->out.of.path,
			    strerror(errno ? errno : EIO));
	w->pos += len;
	return 0;
}

static int put_zeros(struct perfdata_writer *w, size_t n)
{
	static const uint8_t z[64];

	return n <= sizeof(z) ? put(w, z, n) : fail(w, -EINVAL, "padding too long");
}

int perfdata_writer_record(struct perfdata_writer *w, const struct perf_event_header *rec)
{
	if (rec->size < sizeof(*rec) || rec->size % 8)
		return fail(w, -EINVAL, "record type %u: bad size %u", rec->type, rec->size);
	return put(w, rec, rec->size);
}

int perfdata_writer_sideband(struct perfdata_writer *w, uint32_t type, uint16_t misc,
			     const void *body, size_t len, const struct perfdata_sample_id *sid)
{
	size_t padded = (len + 7) & ~(size_t)7;
	struct perf_event_header h = { type, misc, 0 };
	size_t total = sizeof(h) + padded + sizeof(*sid);
	int e;

	if (total > UINT16_MAX)
		return fail(w, -EINVAL, "record type %u: %zu bytes is too long", type, total);
	h.size = (uint16_t)total;
	if ((e = put(w, &h, sizeof(h))) || (e = put(w, body, len)) ||
	    (e = put_zeros(w, padded - len)) || (e = put(w, sid, sizeof(*sid))))
		return e;
	return 0;
}

int perfdata_writer_auxtrace(struct perfdata_writer *w, const struct perfdata_auxtrace *rec,
			     const void *data)
{
	size_t pad = (8 - rec->size % 8) % 8;
	uint64_t at;
	int e;

	if (rec->header.size != sizeof(*rec))
		return fail(w, -EINVAL, "auxtrace record: bad header size");
	if (MT_ARRAY_RESERVE(w->aux_index, w->aux_cap, w->naux, 1))
		return fail(w, -ENOMEM, "out of memory");
	struct perfdata_auxtrace r = *rec;

	r.size += pad; /* the payload is padded to 8, and its size says so */
	if ((e = put(w, NULL, 0)))
		return e;
	at = w->pos;
	if ((e = put(w, &r, sizeof(r))) || (e = put(w, data, rec->size)) ||
	    (e = put_zeros(w, pad)))
		return e;
	w->aux_index[w->naux++] = at;
	return 0;
}

int perfdata_writer_feature(struct perfdata_writer *w, unsigned int bit, const void *data,
			    size_t len)
{
	uint8_t *copy;

	if (bit >= MAX_FEATS || bit == PERFDATA_FEAT_EVENT_DESC || bit == PERFDATA_FEAT_AUXTRACE)
		return fail(w, -EINVAL, "feature %u cannot be set", bit);
	if (!(copy = malloc(len ? len : 1)))
		return fail(w, -ENOMEM, "out of memory");
	memcpy(copy, data, len);
	free(w->feats[bit].data);
	w->feats[bit] = (struct feat){ copy, len };
	return 0;
}

/* A perf header string: u32 padded length, the bytes, NULs to that length. */
static size_t string_size(const char *s)
{
	size_t n = strlen(s) + 1;

	return sizeof(uint32_t) + ((n + PERFDATA_NAME_ALIGN - 1) & ~(size_t)(PERFDATA_NAME_ALIGN - 1));
}

static uint8_t *put_string(uint8_t *p, const char *s)
{
	uint32_t len = (uint32_t)(string_size(s) - sizeof(uint32_t));

	memcpy(p, &len, sizeof(len));
	memset(p + sizeof(len), 0, len);
	memcpy(p + sizeof(len), s, strlen(s));
	return p + sizeof(len) + len;
}

int perfdata_writer_feature_string(struct perfdata_writer *w, unsigned int bit, const char *s)
{
	size_t len = string_size(s);
	uint8_t *buf = malloc(len);
	int e;

	if (!buf)
		return fail(w, -ENOMEM, "out of memory");
	put_string(buf, s);
	e = perfdata_writer_feature(w, bit, buf, len);
	free(buf);
	return e;
}

/* EVENT_DESC: u32 count, u32 attr size; per event the attr, u32 ids, name, ids. */
static int build_event_desc(struct perfdata_writer *w)
{
	size_t len = 2 * sizeof(uint32_t);
	uint8_t *buf, *p;

	for (size_t i = 0; i < w->nattrs; i++)
		len += PERFDATA_ATTR_SIZE + sizeof(uint32_t) + string_size(w->names[i]) +
		       sizeof(uint64_t);
	if (!(p = buf = calloc(1, len)))
		return fail(w, -ENOMEM, "out of memory");
	uint32_t head[2] = { (uint32_t)w->nattrs, PERFDATA_ATTR_SIZE }, one = 1;

	memcpy(p, head, sizeof(head));
	p += sizeof(head);
	for (size_t i = 0; i < w->nattrs; i++) {
		uint64_t id = FIRST_ID + i;

		memcpy(p, &w->attrs[i], PERFDATA_ATTR_SIZE);
		p += PERFDATA_ATTR_SIZE;
		memcpy(p, &one, sizeof(one));
		p = put_string(p + sizeof(one), w->names[i]);
		memcpy(p, &id, sizeof(id));
		p += sizeof(id);
	}
	w->feats[PERFDATA_FEAT_EVENT_DESC] = (struct feat){ buf, len };
	return 0;
}

/* AUXTRACE: u64 count, then {file offset, record header size} per record. */
static int build_auxtrace_index(struct perfdata_writer *w)
{
	size_t len = sizeof(uint64_t) * (1 + 2 * w->naux);
	uint64_t *v = malloc(len);

	if (!v)
		return fail(w, -ENOMEM, "out of memory");
	v[0] = w->naux;
	for (size_t i = 0; i < w->naux; i++) {
		v[1 + 2 * i] = w->aux_index[i];
		v[2 + 2 * i] = sizeof(struct perfdata_auxtrace);
	}
	w->feats[PERFDATA_FEAT_AUXTRACE] = (struct feat){ (uint8_t *)v, len };
	return 0;
}

int perfdata_writer_finish(struct perfdata_writer *w)
{
	struct perfdata_file_header h = { .size = sizeof(h), .attr_size = attr_entry_size() };
	struct perfdata_section table[MAX_FEATS];
	size_t nfeat = 0;
	uint64_t at;
	int e;

	if ((e = put(w, NULL, 0)) || (e = build_event_desc(w)) || (e = build_auxtrace_index(w)))
		return e;
	memcpy(h.magic, PERFDATA_MAGIC, sizeof(h.magic));
	h.data = (struct perfdata_section){ w->data_start, w->pos - w->data_start };
	h.attrs = (struct perfdata_section){ attrs_offset(w), w->nattrs * attr_entry_size() };
	for (unsigned int bit = 0; bit < MAX_FEATS; bit++)
		if (w->feats[bit].data) {
			h.features[bit / 64] |= 1ULL << (bit % 64);
			nfeat++;
		}
	/* The feature table follows the data; each feature's bytes follow it. */
	at = w->pos + nfeat * sizeof(table[0]);
	nfeat = 0;
	for (unsigned int bit = 0; bit < MAX_FEATS; bit++)
		if (w->feats[bit].data) {
			table[nfeat++] = (struct perfdata_section){ at, w->feats[bit].len };
			at += w->feats[bit].len;
		}
	if ((e = put(w, table, nfeat * sizeof(table[0]))))
		return e;
	for (unsigned int bit = 0; bit < MAX_FEATS; bit++)
		if (w->feats[bit].data && (e = put(w, w->feats[bit].data, w->feats[bit].len)))
			return e;
	if (fseeko(w->out.f, 0, SEEK_SET))
		return fail(w, -errno, "%s: %s", w->out.of.path, strerror(errno));
	w->pos = 0;
	if ((e = put(w, &h, sizeof(h))))
		return e;
	for (size_t i = 0; i < w->nattrs; i++) {
		uint64_t id = FIRST_ID + i;

		if ((e = put(w, &id, sizeof(id))))
			return e;
	}
	for (size_t i = 0; i < w->nattrs; i++) {
		struct perfdata_section ids = { ids_offset() + i * sizeof(uint64_t),
						sizeof(uint64_t) };

		if ((e = put(w, &w->attrs[i], PERFDATA_ATTR_SIZE)) || (e = put(w, &ids, sizeof(ids))))
			return e;
	}
	return pd_atomic_commit(&w->out, w->err, sizeof(w->err));
}
