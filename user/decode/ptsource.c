// SPDX-License-Identifier: MIT
/* PT streams read in windows; see ptsource.h. */
#include "decode/ptsource.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Windows are clamped to the stream. */
static void clamp(const struct mt_pt_source *src, uint64_t *begin, uint64_t *end)
{
	if (*end > src->size)
		*end = src->size;
	if (*begin > *end)
		*begin = *end;
}

static const uint8_t *buffer_window(void *ctx, uint64_t begin, uint64_t end, size_t *got)
{
	struct mt_pt_buffer *b = ctx;

	clamp(&b->src, &begin, &end);
	*got = (size_t)(end - begin);
	return b->p + begin;
}

void mt_pt_buffer_init(struct mt_pt_buffer *b, const uint8_t *p, size_t len)
{
	b->src = (struct mt_pt_source){ buffer_window, len, b };
	b->p = p;
}

static int fail(struct mt_pt_reader *pr, int err)
{
	if (!pr->err) {
		pr->err = err;
		snprintf(pr->errmsg, sizeof(pr->errmsg), "PT data of stream %zu: %s", pr->index,
			 pr->st ? mt_bundle_stream_errmsg(pr->st)
				: mt_bundle_reader_errmsg(pr->r));
	}
	return err;
}

/* Appends up to WANT more bytes to the buffer (fewer at the stream's end). */
static int fill(struct mt_pt_reader *pr, size_t want)
{
	while (want) {
		ssize_t n = mt_bundle_stream_read(pr->st, pr->buf + pr->len, want);

		if (n < 0)
			return fail(pr, (int)n);
		if (!n)
			return 0;
		pr->len += (size_t)n;
		want -= (size_t)n;
	}
	return 0;
}

/* Starts reading the stream from its first byte. */
static int restart(struct mt_pt_reader *pr)
{
	int rc;

	mt_bundle_stream_close(pr->st);
	pr->st = NULL;
	pr->base = pr->len = 0;
	rc = mt_bundle_pt_stream_open(pr->r, pr->index, &pr->st);
	return rc < 0 ? fail(pr, rc) : 0;
}

/* Moves the buffer's start to BEGIN, reading and dropping what lies before. */
static int advance(struct mt_pt_reader *pr, uint64_t begin)
{
	uint64_t drop = begin - pr->base;

	if (drop < pr->len) {
		memmove(pr->buf, pr->buf + drop, pr->len - (size_t)drop);
		pr->len -= (size_t)drop;
		pr->base = begin;
		return 0;
	}
	drop -= pr->len;
	pr->len = 0;
	pr->base = begin - drop;
	while (drop) {
		size_t step = drop < pr->cap ? (size_t)drop : pr->cap;
		int rc = fill(pr, step);

		if (rc < 0)
			return rc;
		if (!pr->len)
			break;
		drop -= pr->len;
		pr->base += pr->len;
		pr->len = 0;
	}
	return 0;
}

/*
 * Room for NEED bytes. Windows all have about the requested size, a few
 * bytes more or less (they end at a PSB): a sixteenth more is enough
 * slack, where doubling would keep, and touch, twice the window.
 */
static int grow(struct mt_pt_reader *pr, size_t need)
{
	size_t cap = need + need / 16;
	uint8_t *p;

	if (need <= pr->cap)
		return 0;
	p = cap < need ? NULL : realloc(pr->buf, cap);
	if (!p) {
		pr->err = -ENOMEM;
		snprintf(pr->errmsg, sizeof(pr->errmsg), "out of memory for %zu bytes of PT", need);
		return -ENOMEM;
	}
	pr->buf = p;
	pr->cap = cap;
	return 0;
}

static const uint8_t *reader_window(void *ctx, uint64_t begin, uint64_t end, size_t *got)
{
	struct mt_pt_reader *pr = ctx;
	size_t need;

	*got = 0;
	clamp(&pr->src, &begin, &end);
	need = (size_t)(end - begin);
	if (pr->err)
		return NULL;
	if (grow(pr, need ? need : 1) < 0)
		return NULL;
	if ((!pr->st || begin < pr->base) && restart(pr) < 0)
		return NULL;
	if (advance(pr, begin) < 0 || (pr->len < need && fill(pr, need - pr->len) < 0))
		return NULL;
	*got = pr->len < need ? pr->len : need;
	return pr->buf;
}

void mt_pt_reader_init(struct mt_pt_reader *pr, struct mt_bundle_reader *r, size_t i,
		       uint64_t size)
{
	memset(pr, 0, sizeof(*pr));
	pr->src = (struct mt_pt_source){ reader_window, size, pr };
	pr->r = r;
	pr->index = i;
}

void mt_pt_reader_fini(struct mt_pt_reader *pr)
{
	mt_bundle_stream_close(pr->st);
	free(pr->buf);
	pr->st = NULL;
	pr->buf = NULL;
}
