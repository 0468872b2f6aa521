// SPDX-License-Identifier: MIT
/* Binaries for perf's --symfs; see perfdata_symfs.h. */
#include "perfdata/perfdata_symfs.h"

#include "perfdata/perfdata_atomic.h"
#include "util/regfile.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <ftw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int perfdata_mkdirs_created(const char *dir, char *top, size_t toplen, char *err, size_t errlen)
{
	char buf[4096];
	size_t n = strlen(dir);

	if (top && toplen)
		top[0] = 0;
	if (n == 0 || n >= sizeof(buf)) {
		snprintf(err, errlen, "bad directory name '%s'", dir);
		return -EINVAL;
	}
	memcpy(buf, dir, n + 1);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = 0;
			if (!mkdir(buf, 0777)) {
				/* Made from the root down: the first one made is the outermost. */
				if (top && toplen && !top[0])
					snprintf(top, toplen, "%s", buf);
			} else if (errno != EEXIST) {
				snprintf(err, errlen, "cannot create directory %s: %s", buf,
					 strerror(errno));
				return -errno;
			}
			*p = c;
			if (!c)
				return 0;
		}
	}
}

int perfdata_mkdirs(const char *dir, char *err, size_t errlen)
{
	return perfdata_mkdirs_created(dir, NULL, 0, err, errlen);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void perfdata_remove_tree(const char *top)
{
	if (top[0])
		nftw(top, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

bool perfdata_elf_has_build_id(int fd, const uint8_t *bid, size_t bid_len)
{
	const void *id;
	ssize_t n;
	Elf *elf;
	bool same;

	if (!bid_len)
		return true;
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return false;
	n = dwelf_elf_gnu_build_id(elf, &id);
	same = n == (ssize_t)bid_len && !memcmp(id, bid, bid_len);
	elf_end(elf);
	return same;
}

int perfdata_open_build(const char *path, const uint8_t *bid, size_t bid_len, char *why,
			size_t whylen)
{
	/* A map record may name anything; only regular files hold code. */
	const char *kind;
	int fd = mt_open_regular(path, &kind);

	if (fd < 0) {
		if (kind)
			snprintf(why, whylen, "here it is %s", kind);
		else if (errno == ENOENT || errno == ENOTDIR)
			snprintf(why, whylen, "no such file here");
		else
			snprintf(why, whylen, "the file here cannot be opened: %s", strerror(errno));
		return -1;
	}
	if (!perfdata_elf_has_build_id(fd, bid, bid_len)) {
		snprintf(why, whylen, "the file here has another build-id");
		close(fd);
		return -1;
	}
	return fd;
}

bool perfdata_path_has_build_id(const char *path, const uint8_t *bid, size_t bid_len)
{
	int fd = perfdata_open_build(path, bid, bid_len, NULL, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Maps the local file PATH if it is the traced binary. */
static int map_local(const char *path, const uint8_t *bid, size_t bid_len, void **data,
		     size_t *len, char *warn, size_t warnlen)
{
	char why[256];
	struct stat st;
	int fd = perfdata_open_build(path, bid, bid_len, why, sizeof(why));

	*data = NULL;
	if (fd < 0) {
		snprintf(warn, warnlen, "%s: not embedded in the bundle, and %s", path, why);
		return 0;
	}
	*len = fstat(fd, &st) ? 0 : (size_t)st.st_size;
	*data = *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (*data == MAP_FAILED || !*len) {
		*data = NULL;
		snprintf(warn, warnlen, "%s: cannot map the local file", path);
		return 0;
	}
	return 1;
}

/* Whether AS, a recorded path, has no "." or ".." component: joined to the
 * symfs directory, it names a file inside it. The kernel never records
 * such a path; a bundle from elsewhere might, to write over the user's. */
static bool stays_inside(const char *as)
{
	for (const char *c = as; *c;) {
		size_t n = strcspn(c, "/");

		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n + (c[n] == '/');
	}
	return true;
}

int perfdata_symfs_put(struct mt_bundle_reader *r, const char *dir, const char *path,
		       const uint8_t *bid, size_t bid_len, const char *as, const char *keep,
		       char *warn, size_t warnlen, char *err, size_t errlen)
{
	const uint8_t *code = NULL;
	const char *is;
	char dest[4096], *slash;
	void *mapped = NULL;
	size_t len = 0;
	int idx, e;

	if (!stays_inside(as)) {
		snprintf(warn, warnlen, "%s: not copied: its '.' or '..' would write outside %s",
			 as, dir);
		return 0;
	}
	idx = mt_bundle_file_find(r, bid_len ? bid : NULL, bid_len, path);
	if (idx >= 0) {
		if ((e = mt_bundle_file_data(r, (size_t)idx, &code, &len))) {
			snprintf(err, errlen, "%s: embedded copy: %s", path,
				 mt_bundle_reader_errmsg(r));
			return e;
		}
	} else if (path[0] != '/' ||
		   !map_local(path, bid, bid_len, &mapped, &len, warn, warnlen)) {
		if (path[0] != '/')
			snprintf(warn, warnlen, "%s: no copy in the bundle", path);
		return 0;
	} else {
		code = mapped;
	}
	if ((size_t)snprintf(dest, sizeof(dest), "%s%s", dir, as) >= sizeof(dest)) {
		snprintf(err, errlen, "%s%s: path too long", dir, as);
		e = -ENAMETOOLONG;
		goto out;
	}
	/* The symfs leads back to the recorded file (a link to /, a bind
	 * mount), or to the bundle: writing would replace it. */
	if ((is = mt_same_file(dest, path) ? "that file itself" :
		  keep && mt_same_file(dest, keep) ? "the bundle being exported" : NULL)) {
		snprintf(warn, warnlen, "%s: not copied: %s is %s", as, dest, is);
		e = 0;
		goto out;
	}
	slash = strrchr(dest, '/');
	*slash = 0;
	e = perfdata_mkdirs(dest, err, errlen);
	*slash = '/';
	if (!e)
		e = pd_atomic_write_file(dest, code, len, err, errlen);
	if (!e)
		e = 1;
out:
	if (mapped)
		munmap(mapped, len);
	return e;
}
