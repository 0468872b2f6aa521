// SPDX-License-Identifier: MIT
/*
 * The context-switch table, read as a stream of entries over its
 * sections: checked this way at open, taken in this way by the decoder,
 * and loaded whole only for those who ask for it (mt_bundle_switches()).
 */
#include "bundle/bundle_reader_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entries read from the payload per step. */
#define SWITCHES_STEP 4096

struct mt_bundle_switch_stream {
	struct mt_bundle_reader *r;
	size_t next, end;		/* sections of r->swsecs still to open */
	const struct rd_switches *cur;	/* the open one's, or NULL */
	struct mt_bundle_stream *st;
	uint64_t left;			/* its entries not read yet */
	uint8_t *step;			/* SWITCHES_STEP entries as stored */
	char errmsg[512];
};

static int ss_stream_err(struct mt_bundle_switch_stream *ss, int code)
{
	snprintf(ss->errmsg, sizeof(ss->errmsg), "%s", mt_bundle_stream_errmsg(ss->st));
	return code;
}

/* Stream over sections [FIRST, END) of the table. */
static int ss_open(struct mt_bundle_reader *r, size_t first, size_t end,
		   struct mt_bundle_switch_stream **out)
{
	struct mt_bundle_switch_stream *ss = calloc(1, sizeof(*ss));
	size_t entry = sizeof(struct mt_bundle_switch_entry);

	*out = NULL;
	for (size_t k = first; k < end; k++)
		if (r->swsecs[k].entry_size > entry)
			entry = r->swsecs[k].entry_size;
	if (!ss || !(ss->step = malloc(SWITCHES_STEP * entry))) {
		free(ss);
		return -ENOMEM;
	}
	ss->r = r;
	ss->next = first;
	ss->end = end;
	*out = ss;
	return 0;
}

/* The open section read through to its end (its pool, unused: for the
 * frame's checks), and closed. */
static int ss_finish(struct mt_bundle_switch_stream *ss)
{
	ssize_t n;

	while ((n = mt_bundle_stream_read(ss->st, ss->step, SWITCHES_STEP * ss->cur->entry_size)) > 0)
		;
	if (n < 0)
		return ss_stream_err(ss, (int)n);
	mt_bundle_stream_close(ss->st);
	ss->st = NULL;
	ss->cur = NULL;
	return 0;
}

/* Up to MAX entries of the open section into OUT. */
static ssize_t ss_read_entries(struct mt_bundle_switch_stream *ss,
			       struct mt_bundle_switch_entry *out, size_t max)
{
	const struct rd_switches *c = ss->cur;
	size_t k = max < SWITCHES_STEP ? max : SWITCHES_STEP;
	ssize_t n;

	if (k > ss->left)
		k = (size_t)ss->left;
	n = mt_bundle_stream_read(ss->st, ss->step, k * c->entry_size);
	if (n < 0)
		return ss_stream_err(ss, (int)n);
	if ((size_t)n != k * c->entry_size) {
		size_t w = rd_where(ss->errmsg, sizeof(ss->errmsg), &ss->r->secs[c->sec]);

		if (w < sizeof(ss->errmsg))
			snprintf(ss->errmsg + w, sizeof(ss->errmsg) - w,
				 "payload ends inside entry %llu",
				 (unsigned long long)(c->count - ss->left + (size_t)n / c->entry_size));
		return -EBADMSG;
	}
	for (size_t i = 0; i < k; i++)
		rd_copy_prefix(&out[i], sizeof(*out), ss->step + i * c->entry_size, c->entry_size);
	ss->left -= k;
	return (ssize_t)k;
}

ssize_t mt_bundle_switch_stream_read(struct mt_bundle_switch_stream *ss,
				     struct mt_bundle_switch_entry *out, size_t max)
{
	int err;

	if (!ss || (!out && max))
		return -EINVAL;
	while (max && !(ss->cur && ss->left)) {
		if (ss->cur && (err = ss_finish(ss)))
			return err;
		if (ss->next == ss->end)
			return 0;
		ss->cur = &ss->r->swsecs[ss->next++];
		ss->left = ss->cur->count;
		if ((err = rd_stream_open(ss->r, &ss->r->secs[ss->cur->sec], &ss->st))) {
			ss->cur = NULL;
			snprintf(ss->errmsg, sizeof(ss->errmsg), "%s", ss->r->errmsg);
			return err;
		}
	}
	return max ? ss_read_entries(ss, out, max) : 0;
}

int mt_bundle_switch_stream_open(struct mt_bundle_reader *r,
				 struct mt_bundle_switch_stream **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	return r ? ss_open(r, 0, r->nswsecs, out) : -EINVAL;
}

const char *mt_bundle_switch_stream_errmsg(const struct mt_bundle_switch_stream *ss)
{
	return ss ? ss->errmsg : "no stream";
}

void mt_bundle_switch_stream_close(struct mt_bundle_switch_stream *ss)
{
	if (!ss)
		return;
	mt_bundle_stream_close(ss->st);
	free(ss->step);
	free(ss);
}

size_t mt_bundle_switch_count(const struct mt_bundle_reader *r)
{
	return r ? r->nsw : 0;
}

/* Reads sections [FIRST, END) into DST (NULL: only through), for *GOT
 * entries; the reader's message on error. */
static int ss_read_all(struct mt_bundle_reader *r, size_t first, size_t end,
		       struct mt_bundle_switch_entry *dst, size_t *got)
{
	struct mt_bundle_switch_entry sink[64];
	struct mt_bundle_switch_stream *ss;
	ssize_t n;
	int err = ss_open(r, first, end, &ss);

	*got = 0;
	if (err)
		return rd_err(r, &r->secs[r->swsecs[first].sec], err, "out of memory");
	do {
		n = mt_bundle_switch_stream_read(ss, dst ? dst + *got : sink,
						 dst ? r->nsw - *got : sizeof(sink) / sizeof(*sink));
		*got += n > 0 ? (size_t)n : 0;
	} while (n > 0);
	/* The last section's end, after its last entry. */
	if (!n && ss->cur)
		n = ss_finish(ss);
	if (n < 0)
		snprintf(r->errmsg, sizeof(r->errmsg), "%s", ss->errmsg);
	mt_bundle_switch_stream_close(ss);
	return n < 0 ? (int)n : 0;
}

int rd_switches_check(struct mt_bundle_reader *r, size_t k)
{
	size_t got;

	return ss_read_all(r, k, k + 1, NULL, &got);
}

int mt_bundle_switches(struct mt_bundle_reader *r, const struct mt_bundle_switch_entry **sw,
		       size_t *n)
{
	int err = 0;
	size_t got = 0;

	if (!r || !sw || !n)
		return -EINVAL;
	pthread_mutex_lock(&r->lock);
	if (!r->sw && r->nsw) {
		const struct rd_section *s = &r->secs[r->swsecs[0].sec];

		r->sw = malloc(r->nsw * sizeof(*r->sw));
		if (!r->sw)
			err = rd_err(r, s, -ENOMEM, "out of memory for %zu entries", r->nsw);
		else if ((err = ss_read_all(r, 0, r->nswsecs, r->sw, &got)) || got != r->nsw) {
			free(r->sw);
			r->sw = NULL;
			err = err ? err : rd_err(r, s, -EBADMSG, "the table changed since open");
		}
	}
	pthread_mutex_unlock(&r->lock);
	*sw = r->sw;
	*n = r->sw ? r->nsw : 0;
	return err;
}
