// SPDX-License-Identifier: MIT
/* The kernel code of a perf.data recording; see perfdata_kernel_src.h. */
#include "perfdata/perfdata_kernel_src.h"

#include "kcore/kallsyms.h"
#include "kcore/kcore_capture.h"
#include "perfdata/perfdata_import.h"
#include "util/mt_array.h"
#include "util/regfile.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KALLSYMS_MAX (256 << 20)

/* The reference symbol's address in DIR/kallsyms (0: none or unreadable). */
static uint64_t ref_in_kallsyms(const char *dir, const char *sym)
{
	char path[2 * PATH_MAX], err[256];
	struct mt_ksyms ks;
	const struct mt_ksym *s;
	uint64_t addr = 0;
	size_t len = 0, cap = 0;
	char *text = NULL;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	if ((fd = mt_open_regular(path, NULL)) < 0)
		return 0;
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return 0;
	}
	for (;;) {
		size_t n;

		if (len == cap &&
		    (cap >= KALLSYMS_MAX || MT_ARRAY_RESERVE(text, cap, len, (size_t)1 << 20)))
			break;
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (!n)
			break;
	}
	fclose(f);
	if (text && !mt_ksyms_parse(&ks, text, len, err, sizeof(err))) {
		if ((s = mt_ksyms_find(&ks, sym)) && !s->module)
			addr = s->addr;
		mt_ksyms_free(&ks);
	}
	free(text);
	return addr;
}

static void bid_hex(const struct perfdata_kernel_map *km, char *hex)
{
	for (size_t i = 0; i < km->bid_len; i++)
		sprintf(hex + 2 * i, "%02x", km->bid[i]);
	hex[2 * km->bid_len] = 0;
}

static bool has_kcore_files(const char *dir)
{
	char p[2 * PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/kcore", dir);
	if (stat(p, &st) || !S_ISREG(st.st_mode))
		return false;
	snprintf(p, sizeof(p), "%s/kallsyms", dir);
	return !stat(p, &st) && S_ISREG(st.st_mode);
}

/*
 * BUILDID_DIR/[kernel.kcore]/BUILDID/TIMESTAMP: the newest copy (names are
 * YYYYmmddHHMMSShh) whose kallsyms puts the reference symbol where the
 * recording's kernel map does, as perf's own lookup requires.
 */
static bool cached_kcore(const struct perfdata_kernel_map *km, const char *buildid_dir,
			 const char *sym, char *out, size_t outlen)
{
	char dir[PATH_MAX], hex[2 * PERFDATA_BUILD_ID_MAX + 1], best[NAME_MAX + 1] = "";
	struct dirent *de;
	DIR *d;

	bid_hex(km, hex);
	snprintf(dir, sizeof(dir), "%s/[kernel.kcore]/%s", buildid_dir, hex);
	if (!km->bid_len || !(d = opendir(dir)))
		return false;
	while ((de = readdir(d))) {
		char sub[PATH_MAX + NAME_MAX + 2];

		if (de->d_name[0] == '.' || strcmp(de->d_name, best) <= 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (has_kcore_files(sub) && ref_in_kallsyms(sub, sym) == km->ref_addr)
			snprintf(best, sizeof(best), "%s", de->d_name);
	}
	closedir(d);
	if (best[0])
		snprintf(out, outlen, "%s/%s", dir, best);
	return best[0] != 0;
}

/* Whether perf's build-id cache holds the kernel's kallsyms (what perf record keeps). */
static bool kallsyms_cached(const struct perfdata_kernel_map *km, const char *buildid_dir)
{
	char hex[2 * PERFDATA_BUILD_ID_MAX + 1], p[PATH_MAX];
	struct stat st;

	if (!buildid_dir)
		return false;
	bid_hex(km, hex);
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s/kallsyms", buildid_dir, hex, hex + 2);
	return !stat(p, &st) && S_ISREG(st.st_mode);
}

int perfdata_kernel_source(const struct perfdata_kernel_map *km, const char *kcore_dir,
			   const char *buildid_dir, char *out, size_t outlen, char *why,
			   size_t whylen)
{
	const char *sym = strchr(km->name, ']');
	const char *name = km->bid_name[0] ? km->bid_name : km->name;

	if (kcore_dir && kcore_dir[0]) {
		snprintf(out, outlen, "%s", kcore_dir);
		return 1;
	}
	sym = sym && sym[1] ? sym + 1 : "_text";
	if (buildid_dir && km->name[0] == '[' && cached_kcore(km, buildid_dir, sym, out, outlen))
		return 1;
	if (!km->name[0])
		snprintf(why, whylen, "the recording has no kernel map record");
	else if (!strcmp(name, "/proc/kcore"))
		snprintf(why, whylen, "the recording names /proc/kcore, the live kernel of the machine "
			 "it was made on, not a copy");
	else if (name[0] == '/')
		snprintf(why, whylen, "the recording names the vmlinux %.200s, which mtrace does not "
			 "read (it holds the code as built, not as patched at run time)", name);
	else if (km->bid_len && kallsyms_cached(km, buildid_dir))
		snprintf(why, whylen, "the recording holds no copy of it and perf's build-id cache "
			 "%.200s only its kallsyms (names, not code)", buildid_dir);
	else if (km->bid_len)
		snprintf(why, whylen, "the recording holds no copy of it and %.200s/[kernel.kcore] "
			 "none for its build-id", buildid_dir ? buildid_dir : "~/.debug");
	else
		snprintf(why, whylen, "the recording holds no copy of it, and %s",
			 PERFDATA_NO_BUILD_ID);
	return 0;
}

int perfdata_import_kcore(struct mt_bundle_writer *w, const char *dir, uint64_t *bytes,
			  char *why, size_t whylen, char *err, size_t errlen)
{
	char kcore[PATH_MAX + 16], kallsyms[PATH_MAX + 16], msg[512] = "";
	struct mt_kcore_capture_opts o = { kcore, kallsyms };
	struct mt_kcore_capture_stats st;
	int rc, fd;

	*bytes = 0;
	snprintf(kcore, sizeof(kcore), "%s/kcore", dir);
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", dir);
	/* perf writes its copies readable by their owner only: say so plainly. */
	if ((fd = mt_open_regular(kcore, NULL)) < 0) {
		snprintf(why, whylen, "cannot read %.400s: %s", kcore, strerror(errno));
		return 0;
	}
	close(fd);
	rc = mt_kcore_capture(w, &o, &st, msg, sizeof(msg));
	if (rc && st.ranges) {
		snprintf(err, errlen, "%s", msg);
		return rc;
	}
	if (rc || !st.ranges) {
		snprintf(why, whylen, "%.400s: %s", dir,
			 msg[0] ? msg : "no kernel range of kallsyms lies in kcore");
		return 0;
	}
	if (st.skipped)
		snprintf(why, whylen, "%.300s: %zu kernel range%s not in kcore (%s)", dir, st.skipped,
			 mt_plural(st.skipped, "", "s"), msg);
	*bytes = st.bytes;
	return (int)st.ranges;
}
