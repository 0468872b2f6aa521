// SPDX-License-Identifier: MIT
/* Kernel text and function entries for the random walk; see ptg_kwalk.h. */
#include "ptg_kwalk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle/bundle.h"
#include "kcore/kallsyms.h"

static int cmp_seg(const void *a, const void *b)
{
	const struct ptg_seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The bundle and its parsed kallsyms; -errno with a message. */
static int open_kernel(const char *bundle, struct mt_bundle_reader **r, struct mt_ksyms *ks)
{
	char err[256];
	const char *text;
	size_t len;
	int rc = mt_bundle_open(r, bundle, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "ptgen: %s\n", err);
		return rc;
	}
	rc = mt_bundle_kallsyms(*r, &text, &len);
	if (rc == -ENOENT) {
		fprintf(stderr, "ptgen: %s has no kallsyms (record it with --kernel)\n", bundle);
	} else if (rc) {
		fprintf(stderr, "ptgen: %s: %s\n", bundle, mt_bundle_reader_errmsg(*r));
	} else if ((rc = mt_ksyms_parse(ks, text, len, err, sizeof(err)))) {
		fprintf(stderr, "ptgen: %s: %s\n", bundle, err);
	}
	if (rc)
		mt_bundle_close(*r);
	return rc;
}

static int load_segments(const char *bundle, struct mt_bundle_reader *r, struct ptg_image *img)
{
	size_t n = mt_bundle_ktext_count(r);
	struct ptg_seg *seg;

	if (!n) {
		fprintf(stderr, "ptgen: %s has no kernel text (record it with --kernel)\n", bundle);
		return -ENOENT;
	}
	seg = realloc(img->seg, (img->nseg + n) * sizeof(*seg));
	if (!seg)
		return -ENOMEM;
	img->seg = seg;
	memset(seg + img->nseg, 0, n * sizeof(*seg));
	for (size_t i = 0; i < n; i++) {
		struct ptg_seg *s = &img->seg[img->nseg];
		struct mt_bundle_ktext kt;
		const uint8_t *code;
		size_t len;

		if (mt_bundle_ktext_info(r, i, &kt) || mt_bundle_ktext_data(r, i, &code, &len)) {
			fprintf(stderr, "ptgen: %s\n", mt_bundle_reader_errmsg(r));
			return -EBADMSG;
		}
		*s = (struct ptg_seg){ .start = kt.addr, .end = kt.addr + len, .perms = "r-xp" };
		s->path = strdup(kt.name);
		s->bytes = malloc(len ? len : 1);
		img->nseg++;
		if (!s->path || !s->bytes)
			return -ENOMEM;
		memcpy(s->bytes, code, len);
	}
	qsort(img->seg, img->nseg, sizeof(*img->seg), cmp_seg);
	for (size_t i = 1; i < img->nseg; i++) {
		if (img->seg[i - 1].end > img->seg[i].start) {
			fprintf(stderr, "ptgen: %s: kernel text copies %s and %s overlap\n", bundle,
				img->seg[i - 1].path, img->seg[i].path);
			return -EBADMSG;
		}
	}
	return 0;
}

static int collect_funcs(const struct mt_ksyms *ks, const struct ptg_image *img,
			 uint64_t **funcs, size_t *n)
{
	uint64_t *v = malloc((ks->n ? ks->n : 1) * sizeof(*v));
	size_t out = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < ks->n; i++)
		if (mt_ksym_is_code(ks->syms[i].type) && ptg_image_find(img, ks->syms[i].addr))
			v[out++] = ks->syms[i].addr;
	qsort(v, out, sizeof(*v), cmp_u64);
	*n = 0;
	for (size_t i = 0; i < out; i++)
		if (!*n || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	*funcs = v;
	return 0;
}

int ptg_kwalk_load(const char *bundle, struct ptg_image *img, uint64_t **funcs, size_t *n)
{
	struct mt_bundle_reader *r;
	struct mt_ksyms ks;
	int err = open_kernel(bundle, &r, &ks);

	if (err)
		return err;
	err = load_segments(bundle, r, img);
	if (!err)
		err = collect_funcs(&ks, img, funcs, n);
	if (!err && !*n) {
		fprintf(stderr, "ptgen: %s: no kallsyms function lies in the kernel text\n", bundle);
		free(*funcs);
		err = -ENOENT;
	}
	if (err)
		ptg_image_fini(img);
	mt_ksyms_free(&ks);
	mt_bundle_close(r);
	return err;
}

int ptg_kwalk_symbols(const char *bundle, const char *const *names, uint64_t *addrs, size_t n)
{
	struct mt_bundle_reader *r;
	struct mt_ksyms ks;
	int err = open_kernel(bundle, &r, &ks);

	if (err)
		return err;
	for (size_t i = 0; !err && i < n; i++) {
		const struct mt_ksym *s = mt_ksyms_find(&ks, names[i]);

		if (s) {
			addrs[i] = s->addr;
		} else {
			fprintf(stderr, "ptgen: %s: no kernel symbol %s\n", bundle, names[i]);
			err = -ENOENT;
		}
	}
	mt_ksyms_free(&ks);
	mt_bundle_close(r);
	return err;
}

int ptg_kwalk_copy_kernel(struct mt_bundle_writer *w, const char *bundle)
{
	const struct mt_bundle_module *mods;
	struct mt_bundle_reader *r;
	const char *text;
	size_t len, nmods = 0;
	char err[256];
	int rc = mt_bundle_open(&r, bundle, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "ptgen: %s\n", err);
		return rc;
	}
	for (size_t i = 0; !rc && i < mt_bundle_ktext_count(r); i++) {
		struct mt_bundle_ktext kt;
		const uint8_t *code;

		rc = mt_bundle_ktext_info(r, i, &kt);
		if (!rc)
			rc = mt_bundle_ktext_data(r, i, &code, &len);
		if (!rc && (rc = mt_bundle_write_ktext(w, &kt, code, len)))
			goto out;	/* the writer's error, reported by the caller */
	}
	if (!rc)
		rc = mt_bundle_kallsyms(r, &text, &len);
	if (rc) {
		fprintf(stderr, "ptgen: %s: %s\n", bundle, mt_bundle_reader_errmsg(r));
		goto out;
	}
	nmods = mt_bundle_modules(r, &mods);
	if (nmods)
		rc = mt_bundle_write_modules(w, mods, nmods);
	if (!rc)
		rc = mt_bundle_write_kallsyms(w, text, len);
out:
	mt_bundle_close(r);
	return rc;
}
