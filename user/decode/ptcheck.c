// SPDX-License-Identifier: MIT
/*
 * Every PT stream read through when the decoder opens, for its errors and
 * its length, before anything is decoded (decoding reads it again, a
 * window at a time). The streams are independent and a snapshot of many
 * CPUs holds gigabytes of compressed PT, so up to JOBS threads read them
 * at once; the error reported is the first stream's to fail, as one
 * thread reading them in order would report, and no stream after it is
 * begun (a damaged snapshot is told at once, not after the rest).
 */
#include "decode/decode_internal.h"
#include "util/errmsg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct stream_check {
	uint64_t len;
	int rc;
	char msg[256];
};

struct checks {
	struct mt_bundle_reader *r;
	struct stream_check *c;
	size_t n, next;
	size_t first_failed;	/* N when none has */
	pthread_mutex_t lock;	/* next, first_failed, the reader's message */
};

static void check_one(struct checks *k, size_t i)
{
	struct stream_check *c = &k->c[i];
	struct mt_bundle_stream *st;

	/* Opening may write the reader's message: one at a time. */
	pthread_mutex_lock(&k->lock);
	c->rc = mt_bundle_pt_stream_open(k->r, i, &st);
	if (c->rc < 0)
		snprintf(c->msg, sizeof(c->msg), "%s", mt_bundle_reader_errmsg(k->r));
	pthread_mutex_unlock(&k->lock);
	if (c->rc < 0)
		return;
	c->rc = mt_bundle_stream_drain(st, &c->len);
	if (c->rc < 0)
		snprintf(c->msg, sizeof(c->msg), "%s", mt_bundle_stream_errmsg(st));
	mt_bundle_stream_close(st);
}

static void *check_main(void *arg)
{
	struct checks *k = arg;
	size_t i = SIZE_MAX;	/* the stream just read */

	for (;;) {
		bool more;

		pthread_mutex_lock(&k->lock);
		if (i != SIZE_MAX && k->c[i].rc < 0 && i < k->first_failed)
			k->first_failed = i;
		i = k->next++;
		more = i < k->n && i < k->first_failed;
		pthread_mutex_unlock(&k->lock);
		if (!more)
			return NULL;
		check_one(k, i);
	}
}

int mt_decode_check_streams(struct mt_decode *d, unsigned int jobs, char *err, size_t errlen)
{
	struct checks k = { d->r, calloc(d->ncpus ? d->ncpus : 1, sizeof(*k.c)), d->ncpus, 0,
			    d->ncpus, PTHREAD_MUTEX_INITIALIZER };
	pthread_t *th = jobs > 1 ? calloc(jobs - 1, sizeof(*th)) : NULL;
	unsigned int started = 0;
	int rc = 0;

	if (!k.c || (jobs > 1 && !th)) {
		free(k.c);
		free(th);
		return mt_errmsg(err, errlen, ENOMEM, "out of memory reading %zu PT streams",
				 d->ncpus);
	}
	/* This thread reads too; a thread that does not start leaves its
	 * streams to the others. */
	while (started + 1 < jobs && started + 1 < d->ncpus &&
	       !pthread_create(&th[started], NULL, check_main, &k))
		started++;
	check_main(&k);
	for (unsigned int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	for (size_t i = 0; i < d->ncpus && !rc; i++) {
		if (k.c[i].rc < 0)
			rc = mt_errmsg(err, errlen, -k.c[i].rc, "PT data of stream %zu: %s", i,
				       k.c[i].msg);
		d->cpus[i].len = (size_t)k.c[i].len;
		d->stats.pt_bytes += k.c[i].len;
	}
	free(k.c);
	free(th);
	return rc;
}
