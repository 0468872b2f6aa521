// SPDX-License-Identifier: MIT
/* gzip outputs behind a stdio stream (gzout.h). */
#include "files/gzout.h"
#include "util/errmsg.h"

#include <errno.h>
#include <zlib.h>

static ssize_t gz_write(void *cookie, const char *buf, size_t size)
{
	int n = size ? gzwrite(cookie, buf, (unsigned int)size) : 0;

	if (size && n <= 0) {
		int zerr;

		gzerror(cookie, &zerr);
		errno = mt_zlib_errno(zerr);
		return 0;	/* stdio's error: the stream fails from here */
	}
	return n;
}

static int gz_close(void *cookie)
{
	int zerr = gzclose(cookie);

	if (zerr == Z_OK)
		return 0;
	errno = mt_zlib_errno(zerr);
	return EOF;
}

FILE *mt_fopen_write(const char *path, bool gzip)
{
	cookie_io_functions_t io = { NULL, gz_write, NULL, gz_close };
	gzFile gz;
	FILE *f;

	if (!gzip)
		return fopen(path, "we");
	if (!(gz = gzopen(path, "wb1")))
		return NULL;
	/* stdio buffers; zlib gets whole buffers, not an event at a time. */
	if (!(f = fopencookie(gz, "w", io))) {
		gzclose(gz);
		return NULL;
	}
	return f;
}
