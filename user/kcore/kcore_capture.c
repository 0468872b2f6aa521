// SPDX-License-Identifier: MIT
/* Kernel, module and BPF JIT text from kcore into a bundle (see the header). */
#include "kcore/kcore_capture.h"
#include "util/mt_array.h"
#include "util/regfile.h"

#include "kcore/kallsyms.h"
#include "kcore/kcore.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KPAGE 4096ULL
#define KALLSYMS_MAX (256ULL << 20)

/* Reads a whole procfs file, whose st_size is 0, into a malloc'ed buffer. */
static int read_proc_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap);
	int fd = mt_open_regular(path, NULL);

	if (fd < 0 || !buf) {
		int rc = fd < 0 ? -errno : -ENOMEM;

		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		free(buf);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	for (;;) {
		ssize_t r;

		if (n == cap && (cap >= KALLSYMS_MAX || MT_ARRAY_RESERVE(buf, cap, n, 1))) {
			snprintf(err, errlen, "%s: larger than %llu MiB or out of memory", path,
				 KALLSYMS_MAX >> 20);
			free(buf);
			close(fd);
			return -EFBIG;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = -errno;

			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
			free(buf);
			close(fd);
			return rc;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	*out = buf;
	*len = n;
	return 0;
}

static uint64_t page_down(uint64_t a)
{
	return a & ~(KPAGE - 1);
}

static uint64_t page_up(uint64_t a)
{
	return (a + KPAGE - 1) & ~(KPAGE - 1);
}

static int copy_range(struct mt_bundle_writer *w, struct mt_kcore *k, uint64_t start,
		      uint64_t end, const char *name, struct mt_kcore_capture_stats *st,
		      char *err, size_t errlen)
{
	struct mt_bundle_ktext kt = { .addr = start, .name = name };
	size_t len = (size_t)(end - start);
	void *buf = malloc(len);
	int rc;

	if (!buf) {
		snprintf(err, errlen, "kcore: out of memory for %zu bytes of %s", len, name);
		return -ENOMEM;
	}
	rc = mt_kcore_read(k, start, buf, len);
	if (rc == -ERANGE) {
		/* Not backed by kcore (e.g. unloaded meanwhile): note it and go on. */
		snprintf(err, errlen, "%s", mt_kcore_errmsg(k));
		st->skipped++;
		free(buf);
		return 0;
	}
	if (!rc) {
		rc = mt_bundle_write_ktext(w, &kt, buf, len);
		if (rc)
			snprintf(err, errlen, "%s", mt_bundle_writer_errmsg(w));
	} else {
		snprintf(err, errlen, "%s", mt_kcore_errmsg(k));
	}
	if (!rc) {
		st->ranges++;
		st->bytes += len;
	}
	free(buf);
	return rc;
}

static int copy_core_text(struct mt_bundle_writer *w, struct mt_kcore *k,
			  const struct mt_ksyms *ks, struct mt_kcore_capture_stats *st,
			  char *err, size_t errlen)
{
	const struct mt_ksym *s = mt_ksyms_find(ks, "_stext"), *e = mt_ksyms_find(ks, "_etext");

	if (!s || !e || e->addr <= s->addr) {
		snprintf(err, errlen, "kallsyms: no valid _stext/_etext pair");
		return -EBADMSG;
	}
	return copy_range(w, k, page_down(s->addr), page_up(e->addr), "kernel", st, err, errlen);
}

/*
 * Module and BPF code: runs of one module's code symbols no more than a page
 * apart form one range, named after the module, which ends a page past its
 * last symbol but never inside the next module's first page, so that every
 * byte belongs to exactly one named range. Each module also gets an entry in
 * the modules table spanning its symbols.
 */
static int copy_module_text(struct mt_bundle_writer *w, struct mt_kcore *k,
			    const struct mt_ksyms *ks, struct mt_kcore_capture_stats *st,
			    char *err, size_t errlen)
{
	struct mt_bundle_module *mods = calloc(ks->n ? ks->n : 1, sizeof(*mods));
	size_t nmods = 0, i = 0;
	int rc = 0;

	if (!mods) {
		snprintf(err, errlen, "kcore: out of memory for the module table");
		return -ENOMEM;
	}
	uint64_t prev_end = 0;

	while (!rc && i < ks->n) {
		const struct mt_ksym *first = &ks->syms[i];
		uint64_t start, end;

		if (!first->module || !mt_ksym_is_code(first->type)) {
			i++;
			continue;
		}
		start = page_down(first->addr) < prev_end ? prev_end : page_down(first->addr);
		end = page_up(first->addr + 1) + KPAGE;
		for (i++; i < ks->n && ks->syms[i].addr <= end; i++) {
			const struct mt_ksym *s = &ks->syms[i];

			if (!s->module || !mt_ksym_is_code(s->type))
				continue;
			if (strcmp(s->module, first->module)) {
				end = page_down(s->addr) > start ? page_down(s->addr) : s->addr;
				break;
			}
			end = page_up(s->addr + 1) + KPAGE;
		}
		prev_end = end;
		if (end > start)
			rc = copy_range(w, k, start, end, first->module, st, err, errlen);
	}
	for (size_t j = 0; !rc && j < ks->n; j++) {
		const struct mt_ksym *s = &ks->syms[j];
		size_t m;

		if (!s->module || !mt_ksym_is_code(s->type))
			continue;
		for (m = 0; m < nmods && strcmp(mods[m].name, s->module); m++)
			;
		if (m == nmods)
			mods[nmods++] = (struct mt_bundle_module){ s->addr, s->addr + 1, s->module };
		if (s->addr < mods[m].start)
			mods[m].start = s->addr;
		if (s->addr + 1 > mods[m].end)
			mods[m].end = s->addr + 1;
	}
	if (!rc && nmods) {
		rc = mt_bundle_write_modules(w, mods, nmods);
		if (rc)
			snprintf(err, errlen, "%s", mt_bundle_writer_errmsg(w));
	}
	free(mods);
	return rc;
}

int mt_kcore_capture(struct mt_bundle_writer *w, const struct mt_kcore_capture_opts *opts,
		     struct mt_kcore_capture_stats *stats, char *err, size_t errlen)
{
	const char *kallsyms = opts && opts->kallsyms_path ? opts->kallsyms_path : "/proc/kallsyms";
	const char *kcore = opts && opts->kcore_path ? opts->kcore_path : "/proc/kcore";
	struct mt_ksyms ks;
	struct mt_kcore *k = NULL;
	size_t len = 0;
	char *text = NULL;
	int rc;

	memset(stats, 0, sizeof(*stats));
	rc = read_proc_file(kallsyms, &text, &len, err, errlen);
	if (rc)
		return rc;
	rc = mt_ksyms_parse(&ks, text, len, err, errlen);
	if (!rc)
		rc = mt_kcore_open(&k, kcore, err, errlen);
	if (!rc)
		rc = copy_core_text(w, k, &ks, stats, err, errlen);
	if (!rc)
		rc = copy_module_text(w, k, &ks, stats, err, errlen);
	if (!rc) {
		rc = mt_bundle_write_kallsyms(w, text, len);
		if (rc)
			snprintf(err, errlen, "%s", mt_bundle_writer_errmsg(w));
	}
	mt_kcore_close(k);
	mt_ksyms_free(&ks);
	free(text);
	return rc;
}
