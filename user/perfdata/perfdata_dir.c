// SPDX-License-Identifier: MIT
/* perf.data directories; see perfdata_dir.h. */
#include "perfdata/perfdata_dir.h"

#include "util/errmsg.h"
#include "perfdata/perfdata_kcore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const top_names[] = { "data", PERFDATA_KCORE_DIR, NULL };
static const char *const kcore_names[] = { "kcore", "kallsyms", "modules", NULL };
/* data, then kcore_dir's files (the array ends in NULL). */
_Static_assert(sizeof(kcore_names) / sizeof(kcore_names[0]) == PERFDATA_DIR_FILES,
	       "perfdata_dir_files() lists every file");

static bool listed(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(name, *names))
			return true;
	return false;
}

/* Whether DIR holds nothing but entries of NAMES (and, in kcore_dir, its files). */
static bool only_perf_entries(const char *dir, const char *const *names)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool ok = d != NULL;

	while (ok && (de = readdir(d))) {
		char sub[PATH_MAX];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ok = listed(de->d_name, names);
		if (ok && !strcmp(de->d_name, PERFDATA_KCORE_DIR)) {
			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			ok = only_perf_entries(sub, kcore_names);
		}
	}
	if (d)
		closedir(d);
	return ok;
}

/* Removes a perf.data directory's own entries, then the directory. */
static void remove_tree(const char *dir)
{
	char p[PATH_MAX];

	for (size_t i = 0; kcore_names[i]; i++) {
		snprintf(p, sizeof(p), "%s/" PERFDATA_KCORE_DIR "/%s", dir, kcore_names[i]);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/" PERFDATA_KCORE_DIR, dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/data", dir);
	unlink(p);
	rmdir(dir);
}

/* Whether PATH is the working directory or one of its parents, which a
 * rename cannot replace (EBUSY, after all the work). */
static bool holds_cwd(const char *path)
{
	char dir[PATH_MAX], cwd[PATH_MAX];
	size_t n;

	if (!realpath(path, dir) || !getcwd(cwd, sizeof(cwd)))
		return false;
	n = strlen(dir);
	return !strncmp(cwd, dir, n) && (cwd[n] == '/' || !cwd[n] || n == 1);
}

int perfdata_dir_check(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (!path[0] || path[strlen(path) - 1] == '/')
		return mt_errmsg(err, errlen, EINVAL, "'%s': name the directory without a final /",
				 path);
	if (strlen(path) + 16 > PATH_MAX)
		return mt_errmsg(err, errlen, ENAMETOOLONG, "%s: path too long", path);
	if (holds_cwd(path))
		return mt_errmsg(err, errlen, EINVAL,
				 "%s holds the working directory, which cannot be replaced: name a directory of its own",
				 path);
	if (!lstat(path, &st) && (!S_ISDIR(st.st_mode) || !only_perf_entries(path, top_names)))
		return mt_errmsg(err, errlen, EEXIST,
				 "%s exists and is not a perf.data directory (data, kcore_dir): "
				 "not replaced", path);
	return 0;
}

int perfdata_dir_begin(struct perfdata_dir *d, const char *path, char *err, size_t errlen)
{
	int e;

	memset(d, 0, sizeof(*d));
	if ((e = perfdata_dir_check(path, err, errlen)))
		return e;
	snprintf(d->path, sizeof(d->path), "%s", path);
	/* Hidden beside PATH, as other outputs' temporaries are: DIR/.tmp-BASE-XXXXXX. */
	const char *base = strrchr(path, '/');

	snprintf(d->tmp, sizeof(d->tmp), "%.*s.tmp-%s-XXXXXX", base ? (int)(base - path + 1) : 0,
		 path, base ? base + 1 : path);
	if (!mkdtemp(d->tmp)) {
		int e = -errno;

		d->tmp[0] = 0;
		return mt_errmsg(err, errlen, -e, "cannot create a directory beside %s: %s", path,
				 strerror(-e));
	}
	return 0;
}

int perfdata_dir_commit(struct perfdata_dir *d, char *err, size_t errlen)
{
	int e = 0;

	if (!rename(d->tmp, d->path)) {
		d->tmp[0] = 0;
		return 0;
	}
	/* An older perf.data directory is there: swap, then remove the old one. */
	if ((errno == ENOTEMPTY || errno == EEXIST) &&
	    !renameat2(AT_FDCWD, d->tmp, AT_FDCWD, d->path, RENAME_EXCHANGE)) {
		remove_tree(d->tmp);
		d->tmp[0] = 0;
		return 0;
	}
	e = mt_errmsg(err, errlen, errno, "cannot put %s in place: %s", d->path, strerror(errno));
	perfdata_dir_abort(d);
	return e;
}

void perfdata_dir_abort(struct perfdata_dir *d)
{
	if (d->tmp[0])
		remove_tree(d->tmp);
	d->tmp[0] = 0;
}

void perfdata_data_path(const char *path, char *out, size_t len)
{
	struct stat st;

	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		snprintf(out, len, "%s/data", path);
	else
		snprintf(out, len, "%s", path);
}

size_t perfdata_dir_files(const char *path, char out[PERFDATA_DIR_FILES][PATH_MAX])
{
	struct stat st;
	size_t n = 0;

	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(out[n++], PATH_MAX, "%s", path);
		return n;
	}
	snprintf(out[n++], PATH_MAX, "%s/data", path);
	for (size_t i = 0; kcore_names[i]; i++)
		snprintf(out[n++], PATH_MAX, "%s/" PERFDATA_KCORE_DIR "/%s", path, kcore_names[i]);
	return n;
}

int perfdata_open_input(struct perfdata_file *f, const char *path, char *kcore_dir,
			size_t kcore_dir_len)
{
	char data[PATH_MAX];
	const uint8_t *p;
	struct stat st;
	size_t len;
	int e;

	kcore_dir[0] = 0;
	perfdata_data_path(path, data, sizeof(data));
	if ((e = perfdata_open(f, data))) {
		/* The caller names PATH; a directory's file is named here. */
		char why[sizeof(f->err)];

		if (!strcmp(data, path))
			return e;
		memcpy(why, f->err, sizeof(why));
		if (e == -ENOENT)
			snprintf(f->err, sizeof(f->err), "a directory without a file 'data': not a perf.data directory (perf record --kcore's), nor a bundle");
		else
			snprintf(f->err, sizeof(f->err), "data: %.*s", (int)sizeof(why) - 7, why);
		return e;
	}
	if (!perfdata_feature(f, PERFDATA_FEAT_DIR_FORMAT, &p, &len)) {
		snprintf(f->err, sizeof(f->err), "a perf.data directory of several files "
			 "(perf record --threads) is not read; record without --threads");
		return -EPROTONOSUPPORT;
	}
	if (strcmp(data, path)) {
		snprintf(kcore_dir, kcore_dir_len, "%s/" PERFDATA_KCORE_DIR, path);
		if (stat(kcore_dir, &st) || !S_ISDIR(st.st_mode))
			kcore_dir[0] = 0;
	}
	return 0;
}
