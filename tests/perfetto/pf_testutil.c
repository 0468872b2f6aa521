// SPDX-License-Identifier: MIT
/* Scratch files and trace checks for the Perfetto writer tests. */
#include "pf_testutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "../lib/mt_test.h"

static char dir[256];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void remove_dir(void)
{
	nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

const char *pft_path(const char *name)
{
	static char path[512];
	const char *tmp = getenv("TMPDIR");

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/mtrace-pf-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		MT_ASSERT_MSG(mkdtemp(dir), "cannot create a scratch directory");
		atexit(remove_dir);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

void pft_read_clean(const char *path, struct pfr_trace *t)
{
	MT_ASSERT_MSG(pfr_read(path, t) == 0, "cannot read %s", path);
	size_t n = t->nerrors;

	/* The first few say what broke; the rest usually follow from them. */
	for (size_t i = 0; i < n && i < 10; i++)
		printf("# %s: %s\n", path, t->errors[i]);
	if (n)
		pfr_free(t);
	MT_ASSERT_MSG(n == 0, "%zu import-rule errors in %s", n, path);
}

const struct pfr_annot *pft_annot(const struct pfr_event *e, const char *name)
{
	const struct pfr_annot *a = pfr_annot(e, name);

	MT_ASSERT_MSG(a, "event at %" PRIu64 " has no annotation %s", e->ts, name);
	return a;
}

size_t pft_thread_events(const struct pfr_trace *t, int64_t tid)
{
	const struct pfr_track *tr = pfr_thread_track(t, tid);
	size_t n = 0;

	for (size_t i = 0; tr && i < t->nevents; i++)
		n += t->events[i].track == tr->uuid;
	return n;
}

const struct pfr_event *pft_thread_event(const struct pfr_trace *t, int64_t tid, size_t n)
{
	const struct pfr_track *tr = pfr_thread_track(t, tid);

	MT_ASSERT_MSG(tr, "no thread track for tid %" PRId64, tid);
	for (size_t i = 0; i < t->nevents; i++)
		if (t->events[i].track == tr->uuid && !n--)
			return &t->events[i];
	mt_fail(__FILE__, __LINE__, "tid %" PRId64 " has too few events", tid);
}
