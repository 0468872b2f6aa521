// SPDX-License-Identifier: MIT
/* Atomic output streams; see perfdata_atomic.h. */
#include "perfdata/perfdata_atomic.h"

#include <errno.h>
#include <string.h>

int pd_atomic_open(struct pd_atomic *a, const char *path, char *err, size_t errlen)
{
	int e;

	memset(a, 0, sizeof(*a));
	a->of.slot = -1;
	if ((e = mt_outfile_begin(&a->of, path, err, errlen)))
		return e;
	a->f = fopen(a->of.write_path, "wb+");
	if (!a->f) {
		e = -errno;
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-e));
		mt_outfile_abort(&a->of);
		return e;
	}
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
	if (e) {
		snprintf(err, errlen, "cannot write %s: %s", a->of.path, strerror(e));
		mt_outfile_abort(&a->of);
		return -e;
	}
	return mt_outfile_commit(&a->of, err, errlen);
}

void pd_atomic_abort(struct pd_atomic *a)
{
	if (a->f)
		fclose(a->f);
	a->f = NULL;
	mt_outfile_abort(&a->of);
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
