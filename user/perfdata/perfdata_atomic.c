// SPDX-License-Identifier: MIT
/* Atomic output files; see perfdata_atomic.h. */
#include "perfdata/perfdata_atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pd_atomic_open(struct pd_atomic *a, const char *path, char *err, size_t errlen)
{
	int fd;

	memset(a, 0, sizeof(*a));
	a->path = strdup(path);
	if (!a->path || asprintf(&a->tmp, "%s.tmp.XXXXXX", path) < 0) {
		a->tmp = NULL;
		pd_atomic_abort(a);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	fd = mkostemp(a->tmp, O_CLOEXEC);
	if (fd < 0 || !(a->f = fdopen(fd, "wb+"))) {
		int e = errno;

		snprintf(err, errlen, "cannot create %s: %s", a->tmp, strerror(e));
		if (fd >= 0) {
			close(fd);
			unlink(a->tmp);
		}
		free(a->tmp);
		a->tmp = NULL;
		pd_atomic_abort(a);
		return -e;
	}
	/* mkstemp makes 0600 files; outputs get the usual umask-based mode
	 * (if that fails the file stays private, which is still correct). */
	mode_t um = umask(0);

	umask(um);
	(void)!fchmod(fd, 0666 & ~um);
	return 0;
}

int pd_atomic_commit(struct pd_atomic *a, char *err, size_t errlen)
{
	int e = 0;

	if (fflush(a->f) || ferror(a->f))
		e = errno ? errno : EIO;
	if (fclose(a->f) && !e)
		e = errno;
	a->f = NULL;
	if (!e && rename(a->tmp, a->path))
		e = errno;
	if (e) {
		snprintf(err, errlen, "cannot write %s: %s", a->path, strerror(e));
		pd_atomic_abort(a);
		return -e;
	}
	free(a->tmp);
	a->tmp = NULL;
	pd_atomic_abort(a);
	return 0;
}

void pd_atomic_abort(struct pd_atomic *a)
{
	if (a->f)
		fclose(a->f);
	if (a->tmp)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	memset(a, 0, sizeof(*a));
}

int pd_atomic_write_file(const char *path, const void *data, size_t len, char *err,
			 size_t errlen)
{
	struct pd_atomic a;
	int e = pd_atomic_open(&a, path, err, errlen);

	if (e)
		return e;
	if (len && fwrite(data, 1, len, a.f) != len) {
		e = errno ? -errno : -EIO;
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-e));
		pd_atomic_abort(&a);
		return e;
	}
	return pd_atomic_commit(&a, err, errlen);
}
