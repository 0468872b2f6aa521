// SPDX-License-Identifier: MIT
/*
 * A payload read front to back in pieces (a CPU's PT for decoding, the
 * switch table at open), in memory that does not grow with it: zstd
 * payloads through zstd's streaming decoder, uncompressed ones copied out
 * of the mapped file. Either way the file's pages behind the read leave
 * memory as it goes.
 */
#include "bundle/bundle_reader_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

struct mt_bundle_stream {
	const struct mt_bundle_reader *r;
	const struct rd_section *s;
	ZSTD_DCtx *dctx;		/* NULL for uncompressed payloads */
	ZSTD_inBuffer in;
	uint64_t out;			/* payload bytes read so far */
	size_t dropped;			/* stored bytes taken out of memory */
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

/*
 * Stored bytes behind the read dropped again each time. Streams reading
 * the same pages (a stream's scan beside its decoding, each CPU's view of
 * the switch table) make each other's dropped pages resident again: a
 * page fault maps the cached pages around it too (the kernel's
 * fault-around, 64 KiB by default), some of them behind the faulting
 * reader, and nothing dropped them a second time (9 MB of the 1 GiB
 * benchmark's switch table stayed).
 */
#define REDROP ((size_t)128 << 10)

/* The mapped file's pages before stored byte POS leave memory (they are
 * read from the file again if needed; lent memory is left alone). */
static void drop_before(struct mt_bundle_stream *st, size_t pos)
{
	size_t from = st->dropped > REDROP ? st->dropped - REDROP : 0;

	if (st->r->mapped && pos > st->dropped)
		st->dropped = from + rd_drop_pages(st->s->stored + from, pos - from);
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
		if (!st->dctx) {
			free(st);
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

	if (n > left)
		n = (size_t)left;
	memcpy(buf, st->s->stored + st->out, n);
	st->out += n;
	drop_before(st, (size_t)st->out);
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
		size_t left = ZSTD_decompressStream(st->dctx, to, &st->in);

		if (ZSTD_isError(left))
			return st_err(st, -EBADMSG, "zstd: ", ZSTD_getErrorName(left));
		if (extra.pos)
			return st_err(st, -EBADMSG, "zstd payload holds more bytes than the section declares", "");
		st->done = !left;
		if (!st->done && st->in.pos == st->in.size && to->pos < to->size)
			return st_err(st, -EBADMSG, "zstd payload ends inside its frame", "");
	}
	st->out += o.pos;
	drop_before(st, st->in.pos);
	if (st->done && st->out != raw)
		return st_err(st, -EBADMSG, "zstd payload holds fewer bytes than the section declares", "");
	if (st->done && st->in.pos != st->in.size)
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
	free(st);
}

int mt_bundle_pt_check(struct mt_bundle_reader *r, size_t i, uint64_t *len)
{
	const size_t step = (size_t)256 << 10;
	struct mt_bundle_stream *st;
	uint8_t *buf;
	ssize_t n = 0;
	int rc = mt_bundle_pt_stream_open(r, i, &st);

	*len = 0;
	if (rc < 0)
		return rc;
	buf = malloc(step);
	while (buf && (n = mt_bundle_stream_read(st, buf, step)) > 0)
		*len += (uint64_t)n;
	if (!buf)
		rc = rd_err(r, st->s, -ENOMEM, "out of memory");
	else if (n < 0)
		rc = rd_stream_err(r, st, (int)n);
	free(buf);
	mt_bundle_stream_close(st);
	return rc;
}
