// SPDX-License-Identifier: MIT
/* Buffered plain or gzip output (pf_sink.h). */
#include "pf_sink.h"
#include "util/mt_array.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { SINK_BUF = 1 << 20 };

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int pf_sink_open(struct pf_sink *s, const char *path, int gzip_level)
{
	char mode[8];

	*s = (struct pf_sink){ .fd = -1 };
	s->buf = malloc(SINK_BUF);
	if (!s->buf) {
		snprintf(s->msg, sizeof(s->msg), "out of memory for the output buffer");
		return -ENOMEM;
	}
	s->cap = SINK_BUF;
	s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (s->fd < 0) {
		snprintf(s->msg, sizeof(s->msg), "cannot create %s: %s", path, strerror(errno));
		goto fail;
	}
	if (ends_with(path, ".gz")) {
		snprintf(mode, sizeof(mode), "wb%d", gzip_level);
		s->gz = gzdopen(s->fd, mode);
		if (!s->gz) {
			snprintf(s->msg, sizeof(s->msg), "cannot start gzip output on %s", path);
			close(s->fd);
			goto fail;
		}
	}
	return 0;
fail:
	free(s->buf);
	s->buf = NULL;
	s->failed = 1;
	return -EIO;
}

static int write_out(struct pf_sink *s, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k;

		if (s->gz) {
			unsigned int chunk = n > INT_MAX ? INT_MAX : (unsigned int)n;
			int errnum;

			k = gzwrite(s->gz, p, chunk);
			if (k <= 0) {
				snprintf(s->msg, sizeof(s->msg), "gzip write failed: %s",
					 gzerror(s->gz, &errnum));
				return -EIO;
			}
		} else {
			k = write(s->fd, p, n);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				snprintf(s->msg, sizeof(s->msg), "write failed: %s",
					 k < 0 ? strerror(errno) : "no progress");
				return -EIO;
			}
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int pf_sink_flush(struct pf_sink *s)
{
	if (s->failed)
		return -EIO;
	if (write_out(s, s->buf, s->len)) {
		s->failed = 1;
		return -EIO;
	}
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
	if (s->failed || write_out(s, p, n)) {
		s->failed = 1;
		return -EIO;
	}
	s->total += n;
	return 0;
}

int pf_sink_close(struct pf_sink *s)
{
	int ret = pf_sink_flush(s);

	if (s->gz) {
		int rc = gzclose(s->gz);	/* also closes fd */

		if (rc != Z_OK && !ret) {
			snprintf(s->msg, sizeof(s->msg), "gzip close failed (zlib error %d)", rc);
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
