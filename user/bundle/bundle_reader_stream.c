// SPDX-License-Identifier: MIT
/*
 * A payload read front to back in pieces (a CPU's PT for decoding, the
 * switch table at open), in memory that does not grow with it: zstd
 * payloads through zstd's streaming decoder, uncompressed ones copied out.
 * From a mapped file the stored bytes are read with pread(), so the file's
 * pages never enter the process's memory. Read through the mapping they
 * had to be dropped behind each read, and not all of them left: a fault
 * maps the cached pages around it too (the kernel's fault-around),
 * and with two streams over one payload (a stream's scan beside its
 * decoding) 2.6 MB of the 1 GiB benchmark's file stayed resident.
 */
#include "bundle/bundle_reader_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

/* Stored bytes read at a time as zstd's input. */
#define STAGE ((size_t)64 << 10)

struct mt_bundle_stream {
	const struct mt_bundle_reader *r;
	const struct rd_section *s;
	ZSTD_DCtx *dctx;		/* NULL for uncompressed payloads */
	ZSTD_inBuffer in;		/* the stored bytes at hand */
	uint8_t *stage;			/* zstd's input read from the file; NULL: in place */
	uint64_t fetched;		/* stored bytes read into the stage so far */
	uint64_t out;			/* payload bytes read so far */
	int done;			/* zstd's frame ended */
	char errmsg[256];
};

static int st_err(struct mt_bundle_stream *st, int code, const char *what, const char *why)
{
	size_t n = rd_where(st->errmsg, sizeof(st->errmsg), st->s);

	if (n < sizeof(st->errmsg))
		snprintf(st->errmsg + n, sizeof(st->errmsg) - n, "%s%s", what, why);
	return code;
}

/* N stored bytes from stored offset AT into BUF, read from the file. */
static int stored_pread(struct mt_bundle_stream *st, uint8_t *buf, size_t n, uint64_t at)
{
	off_t off = (off_t)(st->s->stored - st->r->base) + (off_t)at;

	while (n) {
		ssize_t k = pread(st->r->fd, buf, n, off);
		int e = errno;

		if (k < 0 && e == EINTR)
			continue;
		if (k < 0)
			return st_err(st, -e, "read: ", strerror(e));
		if (!k)
			return st_err(st, -EIO, "the file is shorter than when it was opened", "");
		buf += k;
		n -= (size_t)k;
		off += k;
	}
	return 0;
}

/* Reads the next stored bytes into the stage once zstd has taken those at hand. */
static int refill(struct mt_bundle_stream *st)
{
	uint64_t left = st->s->h.stored_size - st->fetched;
	size_t n = left < STAGE ? (size_t)left : STAGE;
	int rc;

	if (!st->stage || st->in.pos < st->in.size || !n)
		return 0;
	rc = stored_pread(st, st->stage, n, st->fetched);
	if (rc)
		return rc;
	st->fetched += n;
	st->in = (ZSTD_inBuffer){ st->stage, n, 0 };
	return 0;
}

/* Every stored byte has gone to zstd. */
static bool stored_end(const struct mt_bundle_stream *st)
{
	return st->in.pos == st->in.size && (!st->stage || st->fetched == st->s->h.stored_size);
}

int rd_stream_open(struct mt_bundle_reader *r, const struct rd_section *s,
		   struct mt_bundle_stream **out)
{
	struct mt_bundle_stream *st;

	*out = NULL;
	if (s->h.compression != MT_BUNDLE_COMP_NONE && s->h.compression != MT_BUNDLE_COMP_ZSTD)
		return rd_err(r, s, -EBADMSG, "unknown compression %u", s->h.compression);
	st = calloc(1, sizeof(*st));
	if (!st)
		return rd_err(r, s, -ENOMEM, "out of memory");
	st->r = r;
	st->s = s;
	st->in = (ZSTD_inBuffer){ s->stored, s->h.stored_size, 0 };
	if (s->h.compression == MT_BUNDLE_COMP_ZSTD) {
		st->dctx = ZSTD_createDCtx();
		if (r->fd >= 0) {
			st->stage = malloc(STAGE);
			st->in = (ZSTD_inBuffer){ st->stage, 0, 0 };
		}
		if (!st->dctx || (r->fd >= 0 && !st->stage)) {
			mt_bundle_stream_close(st);
			return rd_err(r, s, -ENOMEM, "out of memory");
		}
		/* Bounds the decoder's window as the whole-payload path does. */
		ZSTD_DCtx_setParameter(st->dctx, ZSTD_d_windowLogMax, RD_WINDOW_LOG);
	}
	*out = st;
	return 0;
}

int rd_stream_err(struct mt_bundle_reader *r, const struct mt_bundle_stream *st, int code)
{
	/* The stream's message names the section already. */
	snprintf(r->errmsg, sizeof(r->errmsg), "%s", st->errmsg);
	return code;
}

int mt_bundle_pt_stream_open(struct mt_bundle_reader *r, size_t i, struct mt_bundle_stream **out)
{
	*out = NULL;
	if (!r || i >= r->npts)
		return -EINVAL;
	return rd_stream_open(r, &r->secs[r->pts[i].sec], out);
}

static ssize_t read_stored(struct mt_bundle_stream *st, uint8_t *buf, size_t n)
{
	uint64_t left = st->s->h.raw_size - st->out;
	int rc;

	if (n > left)
		n = (size_t)left;
	if (st->r->fd < 0)
		memcpy(buf, st->s->stored + st->out, n);
	else if ((rc = stored_pread(st, buf, n, st->out)))
		return rc;
	st->out += n;
	return (ssize_t)n;
}

/*
 * Up to N bytes, never more than the section declares: once those are
 * out, a spare byte of room shows whether the frame holds more, and the
 * frame must end there.
 */
static ssize_t read_zstd(struct mt_bundle_stream *st, uint8_t *buf, size_t n)
{
	const uint64_t raw = st->s->h.raw_size;
	ZSTD_outBuffer o = { buf, n < raw - st->out ? n : (size_t)(raw - st->out), 0 };
	uint8_t spare;

	while (!st->done && !(o.pos == o.size && o.size)) {
		ZSTD_outBuffer extra = { &spare, 1, 0 };
		ZSTD_outBuffer *to = st->out + o.pos < raw ? &o : &extra;
		size_t left;
		int rc = refill(st);

		if (rc)
			return rc;
		left = ZSTD_decompressStream(st->dctx, to, &st->in);
		if (ZSTD_isError(left))
			return st_err(st, -EBADMSG, "zstd: ", ZSTD_getErrorName(left));
		if (extra.pos)
			return st_err(st, -EBADMSG, "zstd payload holds more bytes than the section declares", "");
		st->done = !left;
		if (!st->done && stored_end(st) && to->pos < to->size)
			return st_err(st, -EBADMSG, "zstd payload ends inside its frame", "");
	}
	st->out += o.pos;
	if (st->done && st->out != raw)
		return st_err(st, -EBADMSG, "zstd payload holds fewer bytes than the section declares", "");
	if (st->done && !stored_end(st))
		return st_err(st, -EBADMSG, "bytes after the zstd frame", "");
	return (ssize_t)o.pos;
}

ssize_t mt_bundle_stream_read(struct mt_bundle_stream *st, uint8_t *buf, size_t n)
{
	if (!st || (!buf && n))
		return -EINVAL;
	if (!n)
		return 0;
	return st->dctx ? read_zstd(st, buf, n) : read_stored(st, buf, n);
}

const char *mt_bundle_stream_errmsg(const struct mt_bundle_stream *st)
{
	return st ? st->errmsg : "no stream";
}

void mt_bundle_stream_close(struct mt_bundle_stream *st)
{
	if (!st)
		return;
	ZSTD_freeDCtx(st->dctx);
	free(st->stage);
	free(st);
}

int mt_bundle_stream_drain(struct mt_bundle_stream *st, uint64_t *len)
{
	const size_t step = (size_t)256 << 10;
	uint8_t *buf = malloc(step);
	ssize_t n = 0;

	*len = 0;
	if (!buf)
		return st_err(st, -ENOMEM, "out of memory", "");
	while ((n = mt_bundle_stream_read(st, buf, step)) > 0)
		*len += (uint64_t)n;
	free(buf);
	return n < 0 ? (int)n : 0;
}

int mt_bundle_pt_check(struct mt_bundle_reader *r, size_t i, uint64_t *len)
{
	struct mt_bundle_stream *st;
	int rc = mt_bundle_pt_stream_open(r, i, &st);

	*len = 0;
	if (rc < 0)
		return rc;
	rc = mt_bundle_stream_drain(st, len);
	if (rc < 0)
		rd_stream_err(r, st, rc);
	mt_bundle_stream_close(st);
	return rc;
}
