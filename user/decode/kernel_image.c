// SPDX-License-Identifier: MIT
/* Kernel code sections and kernel symbols from a bundle; see kernel_image.h. */
#include "decode/kernel_image.h"
#include "util/errmsg.h"
#include "util/mt_array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* x86-64 kernel space: the upper half of the canonical address space. */
#define KERNEL_SPACE_START 0xffff800000000000ULL

static int cmp_krange(const void *a, const void *b)
{
	const struct mt_krange *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int write_all(int fd, const uint8_t *data, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* Copies every ktext payload into the memfd and records its range. */
static int stage_copies(struct mt_kimage *ki, struct mt_bundle_reader *r,
			struct pt_image_section_cache *iscache, char *err, size_t errlen)
{
	size_t n = mt_bundle_ktext_count(r);
	uint64_t offset = 0;

	/* The memfd is the image's only once ranges exist: see mt_kimage_fini(). */
	ki->ranges = calloc(n, sizeof(*ki->ranges));
	if (!ki->ranges || (ki->memfd = memfd_create("mtrace-ktext", MFD_CLOEXEC)) < 0)
		return mt_errmsg(err, errlen, errno, "kernel text: %s", strerror(errno));
	snprintf(ki->path, sizeof(ki->path), "/proc/self/fd/%d", ki->memfd);
	for (size_t i = 0; i < n; i++) {
		struct mt_bundle_ktext kt;
		const uint8_t *code;
		size_t len;

		int rc = mt_bundle_ktext_info(r, i, &kt);

		if (!rc)
			rc = mt_bundle_ktext_data(r, i, &code, &len);
		if (rc)
			return mt_errmsg(err, errlen, -rc, "kernel text %zu: %s", i,
					 mt_bundle_reader_errmsg(r));
		if (!len || kt.addr + len < kt.addr)
			return mt_errmsg(err, errlen, EBADMSG,
					 "kernel text %zu (%s at 0x%llx, %zu bytes) is empty or "
					 "runs past the end of the address space", i, kt.name,
					 (unsigned long long)kt.addr, len);
		rc = write_all(ki->memfd, code, len);
		if (rc)
			return mt_errmsg(err, errlen, -rc, "kernel text: staging %zu bytes: %s", len,
					 strerror(-rc));
		ki->ranges[ki->nranges] = (struct mt_krange){ kt.addr, kt.addr + len, kt.name, NULL, 0 };
		if (asprintf(&ki->ranges[ki->nranges].label, "[%s]", kt.name) < 0)
			return mt_errmsg(err, errlen, ENOMEM, "kernel text: out of memory");
		ki->nranges++;
	}
	/*
	 * Sections only once the file is complete: libipt remembers a file's
	 * size when a section is made and rejects the section as a bad image
	 * if the file has changed by the time it maps it.
	 */
	for (size_t i = 0; i < ki->nranges; i++) {
		struct mt_krange *kr = &ki->ranges[i];
		int isid = pt_iscache_add_file(iscache, ki->path, offset, kr->end - kr->start,
					       kr->start);

		if (isid < 0)
			return mt_errmsg(err, errlen, EIO, "kernel text %s at 0x%llx: %s", kr->name,
					 (unsigned long long)kr->start, pt_errstr(pt_errcode(isid)));
		kr->offset = offset;
		offset += kr->end - kr->start;
	}
	qsort(ki->ranges, ki->nranges, sizeof(*ki->ranges), cmp_krange);
	for (size_t i = 1; i < ki->nranges; i++) {
		const struct mt_krange *a = &ki->ranges[i - 1], *b = &ki->ranges[i];

		if (a->end > b->start)
			return mt_errmsg(err, errlen, EBADMSG,
					 "kernel text: copies %s [0x%llx, 0x%llx) and %s at 0x%llx "
					 "overlap", a->name, (unsigned long long)a->start,
					 (unsigned long long)a->end, b->name,
					 (unsigned long long)b->start);
	}
	return 0;
}

int mt_kimage_load(struct mt_kimage *ki, struct mt_bundle_reader *r,
		   struct pt_image_section_cache *iscache, char *err, size_t errlen)
{
	const char *text;
	size_t len;
	int rc;

	memset(ki, 0, sizeof(*ki));
	ki->memfd = -1;
	if (!mt_bundle_ktext_count(r))
		return 0;
	rc = stage_copies(ki, r, iscache, err, errlen);
	if (rc)
		goto fail;
	rc = mt_bundle_kallsyms(r, &text, &len);
	if (rc == -ENOENT)
		return 0;	/* code without names still decodes */
	if (rc) {
		mt_errmsg(err, errlen, -rc, "kallsyms: %s", mt_bundle_reader_errmsg(r));
		goto fail;
	}
	rc = mt_ksyms_parse(&ki->syms, text, len, err, errlen);
	if (rc)
		goto fail;
	return 0;
fail:
	mt_kimage_fini(ki);
	return rc;
}

void mt_kimage_fini(struct mt_kimage *ki)
{
	if (!ki)
		return;
	mt_ksyms_free(&ki->syms);
	for (size_t i = 0; i < ki->nranges; i++)
		free(ki->ranges[i].label);
	if (ki->ranges && ki->memfd >= 0)
		close(ki->memfd);
	free(ki->ranges);
	memset(ki, 0, sizeof(*ki));
	ki->memfd = -1;
}

int mt_kimage_add_to(const struct mt_kimage *ki, struct pt_image_section_cache *iscache,
		     struct pt_image *img)
{
	for (size_t i = 0; i < ki->nranges; i++) {
		const struct mt_krange *kr = &ki->ranges[i];
		int isid = pt_iscache_add_file(iscache, ki->path, kr->offset, kr->end - kr->start,
					       kr->start);

		if (isid < 0 || pt_image_add_cached(img, iscache, isid, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

bool mt_kimage_is_kernel_ip(uint64_t ip)
{
	return ip >= KERNEL_SPACE_START;
}

const struct mt_krange *mt_kimage_range(const struct mt_kimage *ki, uint64_t ip)
{
	size_t i = MT_ARRAY_UPPER_BOUND(ki->ranges, ki->nranges, start, ip);

	return i && ip < ki->ranges[i - 1].end ? &ki->ranges[i - 1] : NULL;
}

const struct mt_ksym *mt_kimage_symbol(const struct mt_kimage *ki, uint64_t ip)
{
	const struct mt_krange *range = mt_kimage_range(ki, ip);
	const struct mt_ksym *s;

	if (!range || !ki->syms.n)
		return NULL;
	s = mt_ksyms_lookup(&ki->syms, ip);
	return s && s->addr >= range->start ? s : NULL;
}
