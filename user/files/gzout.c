// SPDX-License-Identifier: MIT
/* Counted outputs, gzip or plain, behind a stdio stream (gzout.h). */
#include "files/gzout.h"
#include "util/regfile.h"
#include "util/errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

struct wstream {
	gzFile gz;		/* NULL: plain, to fd */
	int fd;
	uint64_t *written;
};

static ssize_t w_write(void *cookie, const char *buf, size_t size)
{
	struct wstream *w = cookie;
	ssize_t n;
	int zerr;

	if (!size)
		return 0;
	if (w->gz) {
		n = gzwrite(w->gz, buf, (unsigned int)size);
		if (n <= 0) {
			gzerror(w->gz, &zerr);
			errno = mt_zlib_errno(zerr);
		}
	} else {
		do
			n = write(w->fd, buf, size);
		while (n < 0 && errno == EINTR);
	}
	if (n <= 0)
		return 0;	/* stdio's error: the stream fails from here */
	*w->written += (uint64_t)n;
	return n;
}

static int w_close(void *cookie)
{
	struct wstream *w = cookie;
	int zerr = w->gz ? gzclose(w->gz) : Z_OK;	/* gzclose() closes fd */
	int rc = 0;

	if (zerr != Z_OK) {
		errno = mt_zlib_errno(zerr);
		rc = EOF;
	} else if (!w->gz && close(w->fd)) {
		rc = EOF;
	}
	free(w);
	return rc;
}

FILE *mt_fopen_write(const char *path, bool gzip, uint64_t *written,
		     const struct mt_reporter *rep)
{
	cookie_io_functions_t io = { NULL, w_write, NULL, w_close };
	struct wstream *w = calloc(1, sizeof(*w));
	FILE *f;
	int e;

	if (!w)
		return NULL;
	*written = 0;
	w->written = written;
	w->fd = mt_open_write(path, 0666, rep);
	if (w->fd < 0 || (gzip && !(w->gz = gzdopen(w->fd, "wb1"))))
		goto fail;
	/* stdio buffers; zlib and write() get whole buffers, not an event at
	 * a time. */
	if ((f = fopencookie(w, "w", io)))
		return f;
fail:
	e = errno;
	if (w->gz)
		gzclose(w->gz);
	else if (w->fd >= 0)
		close(w->fd);
	free(w);
	errno = e ? e : ENOMEM;	/* gzdopen() fails only for memory */
	return NULL;
}
