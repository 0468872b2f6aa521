// SPDX-License-Identifier: MIT
/* Buffered plain or gzip output (pf_sink.h). */
#include "pf_sink.h"
#include "util/regfile.h"
#include "util/errmsg.h"
#include "util/mt_array.h"
#include "util/text.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { SINK_BUF = 1 << 20 };

/* The writing thread and the buffer it writes (pf_sink.h). */
struct pf_sink_out {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a buffer to write, written, or stop */
	/* Under lock: the buffer being written, and how it went. */
	const uint8_t *data;
	size_t n;
	bool busy, stop, failed;
	char msg[160];
	/* The caller's: the buffer not being filled, free once !busy. */
	uint8_t *spare;
	size_t spare_cap;
};

/* Writes N bytes at P to the file; MSG (160 bytes) says why it failed. */
static int write_out(const struct pf_sink *s, const uint8_t *p, size_t n, char *msg)
{
	while (n) {
		ssize_t k;

		if (s->gz) {
			unsigned int chunk = n > INT_MAX ? INT_MAX : (unsigned int)n;
			int zerr;

			k = gzwrite(s->gz, p, chunk);
			if (k <= 0) {
				gzerror(s->gz, &zerr);
				snprintf(msg, 160, "write failed: %s", strerror(mt_zlib_errno(zerr)));
				return -EIO;
			}
		} else {
			k = write(s->fd, p, n);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				snprintf(msg, 160, "write failed: %s",
					 k < 0 ? strerror(errno) : "no progress");
				return -EIO;
			}
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct pf_sink *s = arg;
	struct pf_sink_out *o = s->out;
	char msg[160];

	pthread_mutex_lock(&o->lock);
	for (;;) {
		int rc;

		while (!o->busy && !o->stop)
			pthread_cond_wait(&o->cond, &o->lock);
		if (!o->busy)
			break;
		pthread_mutex_unlock(&o->lock);
		rc = write_out(s, o->data, o->n, msg);
		pthread_mutex_lock(&o->lock);
		if (rc && !o->failed) {
			o->failed = true;
			memcpy(o->msg, msg, sizeof(msg));
		}
		o->busy = false;
		pthread_cond_broadcast(&o->cond);
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

/* Starts the writing thread; without one the sink writes itself. */
static void start_writer(struct pf_sink *s)
{
	struct pf_sink_out *o = calloc(1, sizeof(*o));

	if (!o || !(o->spare = malloc(SINK_BUF))) {
		free(o);
		return;
	}
	o->spare_cap = SINK_BUF;
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->cond, NULL);
	s->out = o;
	if (pthread_create(&o->thread, NULL, writer_main, s)) {
		pthread_mutex_destroy(&o->lock);
		pthread_cond_destroy(&o->cond);
		free(o->spare);
		free(o);
		s->out = NULL;
	}
}

/* Waits until nothing is being written; -EIO (msg set) when a write
 * failed. */
static int wait_written(struct pf_sink *s)
{
	struct pf_sink_out *o = s->out;

	if (!o)
		return s->failed ? -EIO : 0;
	pthread_mutex_lock(&o->lock);
	while (o->busy)
		pthread_cond_wait(&o->cond, &o->lock);
	if (o->failed && !s->failed) {
		s->failed = 1;
		memcpy(s->msg, o->msg, sizeof(s->msg));
	}
	pthread_mutex_unlock(&o->lock);
	return s->failed ? -EIO : 0;
}

static void stop_writer(struct pf_sink *s)
{
	struct pf_sink_out *o = s->out;

	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	o->stop = true;
	pthread_cond_broadcast(&o->cond);
	pthread_mutex_unlock(&o->lock);
	pthread_join(o->thread, NULL);
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->cond);
	free(o->spare);
	free(o);
	s->out = NULL;
}

int pf_sink_open(struct pf_sink *s, const char *path, int gzip_level,
		 const struct mt_reporter *rep)
{
	char mode[8];

	*s = (struct pf_sink){ .fd = -1 };
	s->buf = malloc(SINK_BUF);
	if (!s->buf) {
		snprintf(s->msg, sizeof(s->msg), "out of memory for the output buffer");
		return -ENOMEM;
	}
	s->cap = SINK_BUF;
	s->fd = mt_open_write(path, 0644, rep);
	if (s->fd < 0) {
		snprintf(s->msg, sizeof(s->msg), "cannot create %s: %s", path, strerror(errno));
		goto fail;
	}
	if (mt_gz_named(path)) {
		snprintf(mode, sizeof(mode), "wb%d", gzip_level);
		s->gz = gzdopen(s->fd, mode);
		if (!s->gz) {
			snprintf(s->msg, sizeof(s->msg), "cannot start gzip output on %s", path);
			close(s->fd);
			goto fail;
		}
	}
	start_writer(s);
	return 0;
fail:
	free(s->buf);
	s->buf = NULL;
	s->failed = 1;
	return -EIO;
}

int pf_sink_flush(struct pf_sink *s)
{
	struct pf_sink_out *o = s->out;
	uint8_t *full = s->buf;
	size_t cap = s->cap;

	if (wait_written(s))
		return -EIO;
	if (!o) {
		if (write_out(s, s->buf, s->len, s->msg)) {
			s->failed = 1;
			return -EIO;
		}
		s->len = 0;
		return 0;
	}
	if (!s->len)
		return 0;
	/* The full buffer to the writing thread, the spare one to fill. */
	pthread_mutex_lock(&o->lock);
	o->data = full;
	o->n = s->len;
	o->busy = true;
	pthread_cond_broadcast(&o->cond);
	pthread_mutex_unlock(&o->lock);
	s->buf = o->spare;
	s->cap = o->spare_cap;
	o->spare = full;
	o->spare_cap = cap;
	s->len = 0;
	return 0;
}

uint8_t *pf_sink_reserve_slow(struct pf_sink *s, size_t n)
{
	if (pf_sink_flush(s))
		return NULL;
	/* One record larger than the buffer (a huge name): grow for it. */
	if (MT_ARRAY_GROW_TO(s->buf, s->cap, n)) {
		snprintf(s->msg, sizeof(s->msg), "out of memory for a %zu-byte record", n);
		s->failed = 1;
		return NULL;
	}
	return s->buf;
}

int pf_sink_write_direct(struct pf_sink *s, const void *p, size_t n)
{
	/* After what is being written, and as the only writer. */
	if (wait_written(s) || write_out(s, p, n, s->msg)) {
		s->failed = 1;
		return -EIO;
	}
	s->total += n;
	return 0;
}

int pf_sink_close(struct pf_sink *s)
{
	int ret = pf_sink_flush(s);

	if (wait_written(s))
		ret = -EIO;
	stop_writer(s);

	if (s->gz) {
		int rc = gzclose(s->gz);	/* also closes fd */

		/* Its last compressed bytes are written here: a full disk
		 * often shows first at the close. */
		if (rc != Z_OK && !ret) {
			snprintf(s->msg, sizeof(s->msg), "write failed: %s",
				 strerror(mt_zlib_errno(rc)));
			ret = -EIO;
		}
	} else if (s->fd >= 0 && close(s->fd) && !ret) {
		snprintf(s->msg, sizeof(s->msg), "close failed: %s", strerror(errno));
		ret = -EIO;
	}
	free(s->buf);
	s->buf = NULL;
	s->gz = NULL;
	s->fd = -1;
	return ret;
}
