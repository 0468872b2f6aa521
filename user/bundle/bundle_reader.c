// SPDX-License-Identifier: MIT
/*
 * Bundle reader: maps the file and walks its framing. Every header,
 * descriptor and payload is bounds-checked against the file size and
 * verified by its crc32 before anything reads it; each section of a known
 * type is then decoded by rd_section_load().
 */
#include "bundle/bundle_reader_internal.h"
#include "util/mt_array.h"
#include "util/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "bundle structs are read with memcpy: little-endian hosts only");

size_t rd_where(char *buf, size_t len, const struct rd_section *s)
{
	if (!s)
		return (size_t)snprintf(buf, len, "file header at offset 0: ");
	if (s->have_hdr)
		return (size_t)snprintf(buf, len, "section %zu (%s, type %u) at offset %llu: ",
					s->index, mt_bundle_section_name(s->h.type), s->h.type,
					(unsigned long long)s->off);
	return (size_t)snprintf(buf, len, "section %zu at offset %llu: ", s->index,
				(unsigned long long)s->off);
}

int rd_err(struct mt_bundle_reader *r, const struct rd_section *s, int code,
	   const char *fmt, ...)
{
	size_t n = rd_where(r->errmsg, sizeof(r->errmsg), s);
	va_list ap;

	if (n < sizeof(r->errmsg)) {
		va_start(ap, fmt);
		vsnprintf(r->errmsg + n, sizeof(r->errmsg) - n, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int rd_file_header(struct mt_bundle_reader *r, uint64_t *first)
{
	struct mt_bundle_file_header h;
	size_t magic = r->size < MT_BUNDLE_MAGIC_LEN ? r->size : MT_BUNDLE_MAGIC_LEN;
	uint32_t crc;

	/* A file cut anywhere in its header is a truncated bundle as long as
	 * what it has of the magic is right; its version, when it has one,
	 * first (another major version may have another header). */
	if (!r->size || memcmp(r->base, MT_BUNDLE_MAGIC, magic))
		return rd_err(r, NULL, -EBADMSG, "not an mtrace bundle (bad magic)");
	if (r->size >= MT_BUNDLE_MAGIC_LEN + 4) {
		memcpy(&h, r->base, MT_BUNDLE_MAGIC_LEN + 4);
		if (h.version_major > MT_BUNDLE_VERSION_MAJOR)
			return rd_err(r, NULL, -EPROTONOSUPPORT,
				      "bundle format %u.%u is newer than this mtrace reads (%u.x)",
				      h.version_major, h.version_minor, MT_BUNDLE_VERSION_MAJOR);
		if (h.version_major != MT_BUNDLE_VERSION_MAJOR)
			return rd_err(r, NULL, -EBADMSG, "bad format version %u.%u",
				      h.version_major, h.version_minor);
	}
	if (r->size < sizeof(h))
		return rd_err(r, NULL, -ENODATA, "truncated: header needs %zu bytes, file has %zu",
			      sizeof(h), r->size);
	memcpy(&h, r->base, sizeof(h));
	if (h.header_size < sizeof(h) || h.header_size > RD_MAX_DESC)
		return rd_err(r, NULL, -EBADMSG, "bad header size %u", h.header_size);
	if (h.header_size > r->size)
		return rd_err(r, NULL, -ENODATA, "truncated: header needs %u bytes, file has %zu",
			      h.header_size, r->size);
	/* The crc covers header_size bytes with the crc field taken as 0. */
	crc = (uint32_t)crc32_z(0, r->base, offsetof(struct mt_bundle_file_header, header_crc));
	crc = (uint32_t)crc32_z(crc, (const uint8_t *)"\0\0\0\0", 4);
	crc = (uint32_t)crc32_z(crc, r->base + sizeof(h), h.header_size - sizeof(h));
	if (crc != h.header_crc)
		return rd_err(r, NULL, -EBADMSG, "header checksum mismatch (stored %08x, computed %08x)",
			      h.header_crc, crc);
	r->major = h.version_major;
	r->minor = h.version_minor;
	*first = h.header_size;
	return 0;
}

static int rd_check_sizes(struct mt_bundle_reader *r, struct rd_section *s)
{
	const struct mt_bundle_shdr *h = &s->h;

	if (h->compression == MT_BUNDLE_COMP_NONE && h->raw_size != h->stored_size)
		return rd_err(r, s, -EBADMSG, "uncompressed payload of %llu bytes declares %llu",
			      (unsigned long long)h->stored_size,
			      (unsigned long long)h->raw_size);
	if (h->raw_size > RD_MAX_RAW)
		return rd_err(r, s, -EFBIG, "declared payload of %llu bytes exceeds the %llu limit",
			      (unsigned long long)h->raw_size, RD_MAX_RAW);
	if (h->stored_size < RD_MAX_RAW && h->raw_size > h->stored_size * RD_MAX_RATIO + 4096)
		return rd_err(r, s, -EFBIG,
			      "declared payload of %llu bytes from %llu stored exceeds zstd's %llux expansion",
			      (unsigned long long)h->raw_size, (unsigned long long)h->stored_size,
			      RD_MAX_RATIO);
	return 0;
}

/*
 * The crc32 of a payload of LEN bytes at P. In a mapped file its pages
 * leave memory behind the check as it goes (the mapping is private and
 * never written: they are read from the file again when used), so that
 * opening a large bundle does not bring all of it into memory.
 */
static uint32_t payload_crc(const struct mt_bundle_reader *r, const uint8_t *p, size_t len)
{
	const size_t step = (size_t)4 << 20;
	size_t done = 0, dropped = 0;
	uint32_t crc = 0;

	while (done < len) {
		size_t n = len - done < step ? len - done : step;

		crc = (uint32_t)crc32_z(crc, p + done, n);
		done += n;
		if (r->mapped)
			dropped += rd_drop_pages(p + dropped, done - dropped);
	}
	return crc;
}

/* Frames section s at s->off: header, descriptor, payload and their checksums. */
static int rd_frame(struct mt_bundle_reader *r, struct rd_section *s, uint64_t *next)
{
	uint64_t left = r->size - s->off, body;
	struct mt_bundle_shdr *h = &s->h;
	uint32_t crc;
	int err;

	if (left < sizeof(*h))
		return rd_err(r, s, -ENODATA, "truncated: header needs %zu bytes, %llu left",
			      sizeof(*h), (unsigned long long)left);
	memcpy(h, r->base + s->off, sizeof(*h));
	if (h->magic != MT_BUNDLE_SHDR_MAGIC)
		return rd_err(r, s, -EBADMSG, "bad section magic %08x", h->magic);
	s->have_hdr = true;
	if (h->shdr_size < sizeof(*h) || h->shdr_size > RD_MAX_DESC)
		return rd_err(r, s, -EBADMSG, "bad header size %u", h->shdr_size);
	if (h->desc_size > RD_MAX_DESC)
		return rd_err(r, s, -EBADMSG, "descriptor of %u bytes exceeds %u", h->desc_size,
			      RD_MAX_DESC);
	body = (uint64_t)h->shdr_size + h->desc_size;
	if (body > left)
		return rd_err(r, s, -ENODATA, "truncated: header and descriptor need %llu bytes, %llu left",
			      (unsigned long long)body, (unsigned long long)left);
	crc = (uint32_t)crc32_z(0, r->base + s->off, offsetof(struct mt_bundle_shdr, hdr_crc));
	crc = (uint32_t)crc32_z(crc, (const uint8_t *)"\0\0\0\0", 4);
	crc = (uint32_t)crc32_z(crc, r->base + s->off + offsetof(struct mt_bundle_shdr, reserved),
				body - offsetof(struct mt_bundle_shdr, reserved));
	if (crc != h->hdr_crc)
		return rd_err(r, s, -EBADMSG, "header checksum mismatch (stored %08x, computed %08x)",
			      h->hdr_crc, crc);
	if ((err = rd_check_sizes(r, s)))
		return err;
	if (h->stored_size > left - body)
		return rd_err(r, s, -ENODATA, "truncated: payload needs %llu bytes, %llu left",
			      (unsigned long long)h->stored_size,
			      (unsigned long long)(left - body));
	s->desc = r->base + s->off + h->shdr_size;
	s->stored = s->desc + h->desc_size;
	crc = payload_crc(r, s->stored, h->stored_size);
	if (crc != h->payload_crc)
		return rd_err(r, s, -EBADMSG,
			      "payload checksum mismatch at offset %llu (stored %08x, computed %08x)",
			      (unsigned long long)(s->off + body), h->payload_crc, crc);
	*next = s->off + body + h->stored_size;
	return 0;
}

static int rd_end(struct mt_bundle_reader *r, struct rd_section *s, uint64_t next)
{
	struct mt_bundle_end_desc d;
	int err;

	if ((err = rd_desc_get(r, s, &d, sizeof(d), MT_BUNDLE_V1_END_DESC, NULL, NULL)))
		return err;
	if (d.section_count != s->index)
		return rd_err(r, s, -EBADMSG, "end says %llu sections precede it, found %zu",
			      (unsigned long long)d.section_count, s->index);
	if (next != r->size)
		return rd_err(r, s, -EBADMSG, "%llu bytes of trailing data after the end section",
			      (unsigned long long)(r->size - next));
	return 0;
}

static int rd_walk(struct mt_bundle_reader *r)
{
	uint64_t off = 0, next = 0;
	int err;

	if ((err = rd_file_header(r, &off)))
		return err;
	for (;;) {
		struct rd_section *s;

		if (off == r->size) {
			struct rd_section end = { .index = r->nsecs, .off = off };

			return rd_err(r, &end, -ENODATA,
				      "truncated: the file ends without an end section");
		}
		if ((err = MT_ARRAY_RESERVE(r->secs, r->secs_cap, r->nsecs, 1)))
			return rd_err(r, NULL, err, "out of memory");
		s = &r->secs[r->nsecs];
		memset(s, 0, sizeof(*s));
		s->index = r->nsecs++;
		s->off = off;
		if ((err = rd_frame(r, s, &next)))
			return err;
		r->total_raw += s->h.raw_size;
		if (r->max_total_raw && r->total_raw > r->max_total_raw)
			return rd_err(r, s, -EFBIG,
				      "the sections so far declare %llu bytes decompressed from a %zu-byte file, more than the limit of %llu (--max-decompressed SIZE raises it)",
				      (unsigned long long)r->total_raw, r->size,
				      (unsigned long long)r->max_total_raw);
		if (s->h.type == MT_BUNDLE_SEC_END) {
			r->nsecs--;             /* END is framing, not content */
			return rd_end(r, s, next);
		}
		if ((err = rd_section_load(r, s)))
			return err;
		off = next;
	}
}

static int rd_new(struct mt_bundle_reader **out)
{
	struct mt_bundle_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->cpu_sec = r->cfg_sec = r->trig_sec = r->kallsyms_sec = r->clock_sec = RD_NONE;
	r->fd = -1;
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
	return 0;
}

static void copy_err(char *err, size_t errlen, const char *path, const char *msg)
{
	if (!err || !errlen)
		return;
	if (path)
		snprintf(err, errlen, "%s: %s", path, msg);
	else
		snprintf(err, errlen, "%s", msg);
}

static int rd_finish_open(struct mt_bundle_reader *r, struct mt_bundle_reader **out,
			  const char *path, char *err, size_t errlen)
{
	int rc = rd_walk(r);

	if (rc) {
		copy_err(err, errlen, path, r->errmsg);
		mt_bundle_close(r);
		return rc;
	}
	/*
	 * Everything read at open is held apart from the file by now, so none
	 * of its pages need stay mapped: the checksums leave behind a page at
	 * each section's edges, and a fault there may have mapped the whole
	 * large folio around it (2 MiB of a 1 GiB snapshot on a 6.18 kernel).
	 */
	if (r->mapped) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);

		/* The mapping ends at a page boundary, past the file's end. */
		rd_drop_pages(r->base, (r->size + page - 1) / page * page);
	}
	*out = r;
	return 0;
}

/* The default limit on the sum of declared payload sizes (bundle_reader_internal.h). */
static uint64_t default_total_limit(size_t file_size)
{
	uint64_t lim = (uint64_t)file_size * RD_FAST_RATIO;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t mem = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;

	if (lim < RD_MIN_TOTAL)
		lim = RD_MIN_TOTAL;
	return mem && lim > mem ? mem : lim;
}

int mt_bundle_open_mem(struct mt_bundle_reader **out, const void *buf, size_t len,
		       char *err, size_t errlen)
{
	struct mt_bundle_reader *r;

	if (!out || (!buf && len)) {
		copy_err(err, errlen, NULL, "mt_bundle_open_mem: invalid argument");
		return -EINVAL;
	}
	*out = NULL;
	if (rd_new(&r)) {
		copy_err(err, errlen, NULL, "out of memory");
		return -ENOMEM;
	}
	r->base = buf ? buf : (const uint8_t *)"";
	r->size = len;
	r->max_total_raw = default_total_limit(len);
	return rd_finish_open(r, out, NULL, err, errlen);
}

int mt_bundle_open_fd(struct mt_bundle_reader **out, int fd, const char *name,
		      const struct mt_bundle_limits *lim, char *err, size_t errlen)
{
	struct mt_bundle_reader *r;
	struct stat st;
	void *map;
	int rc;

	if (!out || fd < 0 || !name) {
		copy_err(err, errlen, NULL, "mt_bundle_open_fd: invalid argument");
		return -EINVAL;
	}
	*out = NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		copy_err(err, errlen, name, "not a regular file");
		return -EINVAL;
	}
	if (st.st_size == 0) {
		copy_err(err, errlen, name, "empty file, not an mtrace bundle");
		return -ENODATA;
	}
	/* Every byte is read for its checksum: the file is read ahead into the
	 * page cache, not into this process's memory (MAP_POPULATE would map
	 * all of it at once; the checksum pass drops what it has read). */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		copy_err(err, errlen, name, strerror(-rc));
		return rc;
	}
	madvise(map, (size_t)st.st_size, MADV_WILLNEED);	/* a hint */
	if (rd_new(&r)) {
		munmap(map, (size_t)st.st_size);
		copy_err(err, errlen, name, "out of memory");
		return -ENOMEM;
	}
	r->base = map;
	r->size = (size_t)st.st_size;
	r->mapped = true;
	/* Streams read the file with pread() (bundle_reader_stream.c). */
	r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (r->fd < 0) {
		rc = -errno;
		mt_bundle_close(r);
		copy_err(err, errlen, name, strerror(-rc));
		return rc;
	}
	r->max_total_raw = lim && lim->max_total_raw ? lim->max_total_raw
						     : default_total_limit(r->size);
	return rd_finish_open(r, out, name, err, errlen);
}

int mt_bundle_open(struct mt_bundle_reader **out, const char *path, char *err, size_t errlen)
{
	const char *kind;
	int fd, rc;

	if (!out || !path) {
		copy_err(err, errlen, NULL, "mt_bundle_open: invalid argument");
		return -EINVAL;
	}
	*out = NULL;
	fd = mt_open_regular(path, &kind);
	if (fd < 0 && kind) {
		char why[64];

		snprintf(why, sizeof(why), "%s, not a regular file", kind);
		copy_err(err, errlen, path, why);
		return -EINVAL;
	}
	if (fd < 0) {
		rc = -errno;
		copy_err(err, errlen, path, strerror(-rc));
		return rc;
	}
	rc = mt_bundle_open_fd(out, fd, path, NULL, err, errlen);
	close(fd);
	return rc;
}

void mt_bundle_close(struct mt_bundle_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nsecs; i++)
		free(r->secs[i].raw);
	for (size_t i = 0; i < r->nfiles; i++) {
		free(r->files[i].path);
		free(r->files[i].build_id);
	}
	for (size_t i = 0; i < r->nktexts; i++)
		free(r->ktexts[i].name);
	free(r->secs);
	free(r->trig_spec);
	free(r->pts);
	free(r->files);
	free(r->ktexts);
	free(r->swsecs);
	free(r->sw);
	free(r->maps);
	free(r->threads);
	free(r->modules);
	free(r->anchors);
	if (r->mapped)
		munmap((void *)r->base, r->size);
	if (r->fd >= 0)
		close(r->fd);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

const char *mt_bundle_reader_errmsg(const struct mt_bundle_reader *r)
{
	if (!r)
		return "no reader";
	return r->errmsg[0] ? r->errmsg : "no error";
}
