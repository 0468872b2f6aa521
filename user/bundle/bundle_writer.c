// SPDX-License-Identifier: MIT
/*
 * Bundle writer: the file header, section streaming (placeholder header,
 * payload through zstd and crc32, header patched at the end) and END.
 */
#include "bundle/bundle_writer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define WR_BUF_SIZE (256 * 1024)
#define WR_MAX_DESC (64 * 1024)
#define WR_DEFAULT_LEVEL 3

struct mt_bundle_writer {
	int fd;
	uint64_t off;                   /* file offset of the next byte to write */
	uint64_t nsections;
	bool failed;                    /* an I/O error left the file inconsistent */
	bool finished;
	int level;
	bool no_compression;
	ZSTD_CCtx *cctx;
	uint8_t *buf;                   /* output staging, flushed in large writes */
	size_t buf_len;
	uint8_t *zout;                  /* compressor output chunk */
	size_t zout_size;

	/* the open section */
	bool in_section;
	uint64_t sec_off;
	struct mt_bundle_shdr sh;
	uint8_t *desc;
	uint64_t raw_done;
	uint32_t singletons;            /* bit per claimed singleton type */
	uint32_t *pt_cpus;
	size_t pt_ncpus;

	char errmsg[256];
};

int wr_error(struct mt_bundle_writer *w, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

const char *mt_bundle_writer_errmsg(const struct mt_bundle_writer *w)
{
	if (!w)
		return "no writer";
	return w->errmsg[0] ? w->errmsg : "no error";
}

static int wr_io_error(struct mt_bundle_writer *w, int err, const char *what)
{
	w->failed = true;
	return wr_error(w, err, "%s at offset %llu: %s", what, (unsigned long long)w->off,
			strerror(-err));
}

static int wr_flush(struct mt_bundle_writer *w)
{
	size_t done = 0;

	while (done < w->buf_len) {
		ssize_t n = write(w->fd, w->buf + done, w->buf_len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return wr_io_error(w, n < 0 ? -errno : -EIO, "write");
		done += (size_t)n;
	}
	w->buf_len = 0;
	return 0;
}

/* Appends file bytes through the staging buffer. */
static int wr_out(struct mt_bundle_writer *w, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		size_t n = WR_BUF_SIZE - w->buf_len;
		int err;

		if (n > len)
			n = len;
		memcpy(w->buf + w->buf_len, p, n);
		w->buf_len += n;
		w->off += n;
		p += n;
		len -= n;
		if (w->buf_len == WR_BUF_SIZE && (err = wr_flush(w)))
			return err;
	}
	return 0;
}

static int wr_pwrite(struct mt_bundle_writer *w, const void *data, size_t len, uint64_t off)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = pwrite(w->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return wr_io_error(w, n < 0 ? -errno : -EIO, "pwrite");
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int wr_usable(struct mt_bundle_writer *w)
{
	if (w->failed)
		return wr_error(w, -EIO, "writer failed earlier; the bundle is unusable");
	if (w->finished)
		return wr_error(w, -EINVAL, "bundle already finished");
	return 0;
}

int wr_claim_singleton(struct mt_bundle_writer *w, uint32_t type)
{
	int err = wr_usable(w);

	if (err)
		return err;
	if (type >= 32)
		return wr_error(w, -EINVAL, "internal: type %u is no singleton", type);
	if (w->singletons & (1U << type))
		return wr_error(w, -EINVAL, "section %s may appear only once",
				mt_bundle_section_name(type));
	w->singletons |= 1U << type;
	return 0;
}

int wr_claim_pt_cpu(struct mt_bundle_writer *w, uint32_t cpu)
{
	uint32_t *n;
	int err = wr_usable(w);

	if (err)
		return err;
	for (size_t i = 0; i < w->pt_ncpus; i++)
		if (w->pt_cpus[i] == cpu)
			return wr_error(w, -EINVAL, "PT data of cpu %u written twice", cpu);
	n = realloc(w->pt_cpus, (w->pt_ncpus + 1) * sizeof(*n));
	if (!n)
		return wr_error(w, -ENOMEM, "out of memory");
	n[w->pt_ncpus++] = cpu;
	w->pt_cpus = n;
	return 0;
}

int wr_section_begin(struct mt_bundle_writer *w, uint32_t type, const void *desc,
		     size_t desc_len, uint64_t raw_size, int compression)
{
	int err = wr_usable(w);

	if (err)
		return err;
	if (w->in_section)
		return wr_error(w, -EINVAL, "internal: section already open");
	if (desc_len > WR_MAX_DESC)
		return wr_error(w, -EINVAL, "%s descriptor of %zu bytes exceeds %d",
				mt_bundle_section_name(type), desc_len, WR_MAX_DESC);
	if (compression < 0)
		compression = w->no_compression || raw_size < MT_BUNDLE_MIN_COMPRESS ?
			MT_BUNDLE_COMP_NONE : MT_BUNDLE_COMP_ZSTD;
	if (compression != MT_BUNDLE_COMP_NONE && compression != MT_BUNDLE_COMP_ZSTD)
		return wr_error(w, -EINVAL, "unknown compression %d", compression);
	if (compression == MT_BUNDLE_COMP_ZSTD) {
		size_t r;

		ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
		r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level);
		if (!ZSTD_isError(r))
			r = ZSTD_CCtx_setPledgedSrcSize(w->cctx, raw_size);
		if (ZSTD_isError(r))
			return wr_error(w, -EINVAL, "zstd setup: %s", ZSTD_getErrorName(r));
	}
	free(w->desc);
	w->desc = malloc(desc_len ? desc_len : 1);
	if (!w->desc)
		return wr_error(w, -ENOMEM, "out of memory");
	if (desc_len)
		memcpy(w->desc, desc, desc_len);
	memset(&w->sh, 0, sizeof(w->sh));
	w->sh.magic = MT_BUNDLE_SHDR_MAGIC;
	w->sh.type = type;
	w->sh.shdr_size = sizeof(w->sh);
	w->sh.desc_size = (uint32_t)desc_len;
	w->sh.compression = (uint16_t)compression;
	w->sh.raw_size = raw_size;
	w->sh.payload_crc = (uint32_t)crc32_z(0, Z_NULL, 0);
	w->sec_off = w->off;
	w->raw_done = 0;
	w->in_section = true;
	/* The header is rewritten with sizes and checksums by wr_section_end(). */
	if ((err = wr_out(w, &w->sh, sizeof(w->sh))) || (err = wr_out(w, w->desc, desc_len)))
		return err;
	return 0;
}

static int wr_stored(struct mt_bundle_writer *w, const void *data, size_t len)
{
	w->sh.payload_crc = (uint32_t)crc32_z(w->sh.payload_crc, data, len);
	w->sh.stored_size += len;
	return wr_out(w, data, len);
}

static int wr_compress(struct mt_bundle_writer *w, const void *data, size_t len,
		       ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { data, len, 0 };

	for (;;) {
		ZSTD_outBuffer out = { w->zout, w->zout_size, 0 };
		size_t left = ZSTD_compressStream2(w->cctx, &out, &in, mode);
		int err;

		if (ZSTD_isError(left)) {
			w->failed = true;
			return wr_error(w, -EIO, "zstd: %s", ZSTD_getErrorName(left));
		}
		if (out.pos && (err = wr_stored(w, w->zout, out.pos)))
			return err;
		if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
			return 0;
	}
}

int wr_section_append(struct mt_bundle_writer *w, const void *data, size_t len)
{
	int err = wr_usable(w);

	if (err)
		return err;
	if (!w->in_section)
		return wr_error(w, -EINVAL, "internal: no open section");
	if (len > w->sh.raw_size - w->raw_done) {
		w->failed = true;
		return wr_error(w, -EINVAL, "%s payload exceeds its declared %llu bytes",
				mt_bundle_section_name(w->sh.type),
				(unsigned long long)w->sh.raw_size);
	}
	w->raw_done += len;
	if (w->sh.compression == MT_BUNDLE_COMP_ZSTD)
		return wr_compress(w, data, len, ZSTD_e_continue);
	return wr_stored(w, data, len);
}

int wr_section_end(struct mt_bundle_writer *w)
{
	uint32_t crc;
	int err = wr_usable(w);

	if (err)
		return err;
	if (!w->in_section)
		return wr_error(w, -EINVAL, "internal: no open section");
	w->in_section = false;
	if (w->raw_done != w->sh.raw_size) {
		w->failed = true;
		return wr_error(w, -EINVAL, "%s payload has %llu of its declared %llu bytes",
				mt_bundle_section_name(w->sh.type),
				(unsigned long long)w->raw_done,
				(unsigned long long)w->sh.raw_size);
	}
	if (w->sh.compression == MT_BUNDLE_COMP_ZSTD && (err = wr_compress(w, NULL, 0, ZSTD_e_end)))
		return err;
	if ((err = wr_flush(w)))
		return err;
	w->sh.hdr_crc = 0;
	crc = (uint32_t)crc32_z(0, (const void *)&w->sh, sizeof(w->sh));
	w->sh.hdr_crc = (uint32_t)crc32_z(crc, w->desc, w->sh.desc_size);
	if ((err = wr_pwrite(w, &w->sh, sizeof(w->sh), w->sec_off)))
		return err;
	w->nsections++;
	return 0;
}

int wr_section_tail(struct mt_bundle_writer *w, uint32_t type, const void *fixed,
		    size_t fixed_len, const char *tail, uint64_t raw_size, int compression)
{
	size_t tail_len = tail ? strlen(tail) : 0;
	uint8_t *desc;
	int err;

	if (tail_len > WR_MAX_DESC - fixed_len)
		return wr_error(w, -EINVAL, "%s: string of %zu bytes is too long",
				mt_bundle_section_name(type), tail_len);
	desc = malloc(fixed_len + tail_len);
	if (!desc)
		return wr_error(w, -ENOMEM, "out of memory");
	memcpy(desc, fixed, fixed_len);
	if (tail_len)
		memcpy(desc + fixed_len, tail, tail_len);
	err = wr_section_begin(w, type, desc, fixed_len + tail_len, raw_size, compression);
	free(desc);
	return err;
}

int mt_bundle_write_section(struct mt_bundle_writer *w, uint32_t type, const void *desc,
			    size_t desc_len, const void *payload, size_t len, int compression)
{
	int err;

	if (!w || (desc_len && !desc) || (len && !payload) || compression < MT_BUNDLE_COMP_AUTO)
		return w ? wr_error(w, -EINVAL, "write_section: invalid argument") : -EINVAL;
	if ((err = wr_section_begin(w, type, desc, desc_len, len, compression)) ||
	    (err = wr_section_append(w, payload, len)))
		return err;
	return wr_section_end(w);
}

static int wr_header(struct mt_bundle_writer *w)
{
	struct mt_bundle_file_header h;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MT_BUNDLE_MAGIC, MT_BUNDLE_MAGIC_LEN);
	h.version_major = MT_BUNDLE_VERSION_MAJOR;
	h.version_minor = MT_BUNDLE_VERSION_MINOR;
	h.header_size = sizeof(h);
	h.created_realtime_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	h.header_crc = (uint32_t)crc32_z(0, (const void *)&h, sizeof(h));
	return wr_out(w, &h, sizeof(h));
}

static void set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

int mt_bundle_writer_create(struct mt_bundle_writer **out, const char *path,
			    const struct mt_bundle_writer_opts *opts, char *err, size_t errlen)
{
	struct mt_bundle_writer *w;
	int rc;

	if (!out || !path || (opts && opts->size < sizeof(uint32_t))) {
		set_err(err, errlen, "mt_bundle_writer_create: invalid argument");
		return -EINVAL;
	}
	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->fd = -1;
	w->level = WR_DEFAULT_LEVEL;
	if (opts) {
		/* Options structs grow at the end: read only what the caller has. */
		struct mt_bundle_writer_opts o = { 0 };

		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
		if (o.zstd_level)
			w->level = o.zstd_level;
		w->no_compression = o.no_compression;
	}
	w->zout_size = ZSTD_CStreamOutSize();
	w->buf = malloc(WR_BUF_SIZE);
	w->zout = malloc(w->zout_size);
	w->cctx = ZSTD_createCCtx();
	if (!w->buf || !w->zout || !w->cctx) {
		mt_bundle_writer_free(w);
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		rc = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		mt_bundle_writer_free(w);
		return rc;
	}
	if ((rc = wr_header(w)) || (rc = wr_flush(w))) {
		set_err(err, errlen, w->errmsg);
		mt_bundle_writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int mt_bundle_writer_finish(struct mt_bundle_writer *w)
{
	struct mt_bundle_end_desc end = { sizeof(end), 0, 0 };
	int err;

	if (!w)
		return -EINVAL;
	if ((err = wr_usable(w)))
		return err;
	if (w->in_section)
		return wr_error(w, -EINVAL, "a section is still open");
	end.section_count = w->nsections;
	if ((err = mt_bundle_write_section(w, MT_BUNDLE_SEC_END, &end, sizeof(end), NULL, 0,
					   MT_BUNDLE_COMP_NONE)))
		return err;
	w->finished = true;
	err = close(w->fd);
	w->fd = -1;
	if (err && errno != EINTR)
		return wr_io_error(w, -errno, "close");
	return 0;
}

void mt_bundle_writer_free(struct mt_bundle_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	free(w->buf);
	free(w->zout);
	free(w->desc);
	free(w->pt_cpus);
	free(w);
}
