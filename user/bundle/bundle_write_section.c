// SPDX-License-Identifier: MIT
/*
 * Section streaming: a placeholder header, the payload through zstd and
 * crc32 into the output, and the header rewritten in place at the end with
 * the final sizes and checksums. Also the output staging beneath it.
 */
#include "bundle/bundle_writer_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define WR_MAX_DESC (64 * 1024)

int wr_io_error(struct mt_bundle_writer *w, int err, const char *what)
{
	w->failed = true;
	return wr_error(w, err, "%s at offset %llu: %s", what, (unsigned long long)w->off,
			strerror(-err));
}

static int wr_write(struct mt_bundle_writer *w, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return wr_io_error(w, n < 0 ? -errno : -EIO, "write");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int wr_flush(struct mt_bundle_writer *w)
{
	int err = wr_write(w, w->buf, w->buf_len);

	w->buf_len = 0;
	return err;
}

/* Appends file bytes: small ones through the staging buffer, large ones directly. */
int wr_out(struct mt_bundle_writer *w, const void *data, size_t len)
{
	const uint8_t *p = data;
	int err;

	if (len >= WR_BUF_SIZE) {
		if ((err = wr_flush(w)) || (err = wr_write(w, p, len)))
			return err;
		w->off += len;
		return 0;
	}
	while (len) {
		size_t n = WR_BUF_SIZE - w->buf_len;

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

int wr_pwrite(struct mt_bundle_writer *w, const void *data, size_t len, uint64_t off)
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
		/* Levels up to 19 stay within the format's window; 20 and up do not. */
		if (!ZSTD_isError(r) && w->level > 19)
			r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_windowLog,
						   MT_BUNDLE_ZSTD_WINDOW_LOG_MAX);
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
	w->zstd_ended = false;
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
	if (w->sh.compression != MT_BUNDLE_COMP_ZSTD)
		return wr_stored(w, data, len);
	/* Ending the frame with the last input lets zstd compress it without buffering it. */
	if (w->raw_done == w->sh.raw_size) {
		w->zstd_ended = true;
		return wr_compress(w, data, len, ZSTD_e_end);
	}
	return wr_compress(w, data, len, ZSTD_e_continue);
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
	if (w->sh.compression == MT_BUNDLE_COMP_ZSTD && !w->zstd_ended &&
	    (err = wr_compress(w, NULL, 0, ZSTD_e_end)))
		return err;
	w->sh.hdr_crc = 0;
	crc = (uint32_t)crc32_z(0, (const void *)&w->sh, sizeof(w->sh));
	w->sh.hdr_crc = (uint32_t)crc32_z(crc, w->desc, w->sh.desc_size);
	/* A small section's header is still staged: patch it there, no system call. */
	if (w->sec_off >= w->off - w->buf_len)
		memcpy(w->buf + (w->sec_off - (w->off - w->buf_len)), &w->sh, sizeof(w->sh));
	else if ((err = wr_flush(w)) || (err = wr_pwrite(w, &w->sh, sizeof(w->sh), w->sec_off)))
		return err;
	w->nsections++;
	return 0;
}

int wr_section_abort(struct mt_bundle_writer *w)
{
	if (!w->in_section)
		return 0;
	/* Cut the output back to where the section began, as if it never started. */
	w->in_section = false;
	if (w->sec_off >= w->off - w->buf_len) {
		w->buf_len -= (size_t)(w->off - w->sec_off);
	} else {
		/* The section's start reached the file: the staged bytes are all its own. */
		w->buf_len = 0;
		if (ftruncate(w->fd, (off_t)w->sec_off) ||
		    lseek(w->fd, (off_t)w->sec_off, SEEK_SET) < 0) {
			w->failed = true;
			return -errno;
		}
	}
	w->off = w->sec_off;
	w->failed = false;
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
