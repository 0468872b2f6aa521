// SPDX-License-Identifier: MIT
/*
 * Payload access: uncompressed payloads are used in place (the file is
 * mapped, so PT bytes are never copied); zstd payloads are decompressed
 * once, on first use, and kept until released or the reader is closed.
 * The mapped file's pages of a payload leave memory once it is
 * decompressed or released (see drop_stored()).
 */
#include "bundle/bundle_reader_internal.h"
#include "util/mt_array.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#define HUGE_PAGE (2u << 20)

size_t rd_drop_pages(const uint8_t *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(uintptr_t)(page - 1);

	/* A hint: failure costs only memory. */
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
	return hi > (uintptr_t)p ? hi - (uintptr_t)p : 0;
}

/*
 * Takes the mapped file's pages of a payload out of the process's memory:
 * the compressed bytes once decompressed (decompressing reads them back
 * in, and they would otherwise stay resident beside the output), and an
 * uncompressed payload on release. The mapping is private and never
 * written, so a later access reads the file again. Memory the caller lent
 * (mt_bundle_open_mem()) is left alone.
 */
static void drop_stored(const struct mt_bundle_reader *r, const struct rd_section *s)
{
	if (r->mapped)
		rd_drop_pages(s->stored, s->h.stored_size);
}

/*
 * Payload buffers are written once, front to back. For large ones, ask for
 * transparent huge pages: first-touch page faults otherwise dominate the
 * cost of decompression (several times slower than zstd itself in VMs).
 * Not for the last, partial one: a huge page there would hold up to 2 MiB
 * of memory that is never used.
 */
static uint8_t *alloc_raw(uint64_t size)
{
	uint8_t *p;

	if (size < HUGE_PAGE)
		return malloc(size ? size : 1);
	p = aligned_alloc(HUGE_PAGE, (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
	/* A hint: failure costs only speed. */
	if (p)
		madvise(p, size / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE);
	return p;
}

/*
 * Streaming into a buffer that grows only as output really arrives, for
 * payloads beyond RD_FAST_RATIO (long runs of one byte, such as zero
 * padding): a forged raw_size then costs no more memory than the data the
 * frame really holds, plus a window of at most 2^RD_WINDOW_LOG bytes.
 */
static int unzstd_growing(struct mt_bundle_reader *r, struct rd_section *s, uint8_t **out)
{
	const struct mt_bundle_shdr *h = &s->h;
	ZSTD_inBuffer in = { s->stored, h->stored_size, 0 };
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	uint64_t want = h->stored_size * RD_FAST_RATIO;
	uint8_t *buf = NULL;
	size_t pos = 0, left = 1, cap = 0, room = 0;

	if (!dctx)
		return rd_err(r, s, -ENOMEM, "out of memory");
	ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, RD_WINDOW_LOG);
	while (left) {
		ZSTD_outBuffer o;

		/* Room doubles with the output, never past the declared size. */
		if (!buf || (pos == room && room < h->raw_size)) {
			want = buf ? (uint64_t)pos * 2 : want;
			if (want > h->raw_size)
				want = h->raw_size;
			if (MT_ARRAY_GROW_TO(buf, cap, want ? want : 1)) {
				free(buf);
				ZSTD_freeDCtx(dctx);
				return rd_err(r, s, -ENOMEM, "out of memory for %llu bytes",
					      (unsigned long long)want);
			}
			room = cap < h->raw_size ? cap : h->raw_size;
		}
		o = (ZSTD_outBuffer){ buf, room, pos };
		left = ZSTD_decompressStream(dctx, &o, &in);
		pos = o.pos;
		/* Stop on errors, on more output than declared, and when input runs dry. */
		if (ZSTD_isError(left) || (pos == h->raw_size && left) ||
		    (in.pos == in.size && o.pos < o.size && left))
			break;
	}
	ZSTD_freeDCtx(dctx);
	if (ZSTD_isError(left) || left || in.pos != in.size || pos != h->raw_size) {
		free(buf);
		if (ZSTD_isError(left))
			return rd_err(r, s, -EBADMSG, "zstd: %s", ZSTD_getErrorName(left));
		return rd_err(r, s, -EBADMSG, "zstd payload holds %s%zu bytes, section declares %llu",
			      left ? "more than " : "", pos, (unsigned long long)h->raw_size);
	}
	*out = buf;
	return 0;
}

static int decompress(struct mt_bundle_reader *r, struct rd_section *s)
{
	const struct mt_bundle_shdr *h = &s->h;
	unsigned long long fsize = ZSTD_getFrameContentSize(s->stored, h->stored_size);
	ZSTD_DCtx *dctx;
	uint8_t *raw;
	size_t n;

	if (fsize == ZSTD_CONTENTSIZE_ERROR)
		return rd_err(r, s, -EBADMSG, "payload is not a zstd frame");
	if (fsize != ZSTD_CONTENTSIZE_UNKNOWN && fsize != h->raw_size)
		return rd_err(r, s, -EBADMSG, "zstd frame holds %llu bytes, section declares %llu",
			      fsize, (unsigned long long)h->raw_size);
	if (h->raw_size > h->stored_size * RD_FAST_RATIO + 4096)
		return unzstd_growing(r, s, &s->raw);
	raw = alloc_raw(h->raw_size);
	if (!raw)
		return rd_err(r, s, -ENOMEM, "out of memory for %llu bytes",
			      (unsigned long long)h->raw_size);
	dctx = ZSTD_createDCtx();
	if (!dctx) {
		free(raw);
		return rd_err(r, s, -ENOMEM, "out of memory");
	}
	/* One-shot decoding writes straight into raw and cannot exceed its size. */
	n = ZSTD_decompressDCtx(dctx, raw, h->raw_size, s->stored, h->stored_size);
	ZSTD_freeDCtx(dctx);
	if (ZSTD_isError(n) || n != h->raw_size) {
		free(raw);
		if (ZSTD_isError(n))
			return rd_err(r, s, -EBADMSG, "zstd: %s", ZSTD_getErrorName(n));
		return rd_err(r, s, -EBADMSG, "zstd payload holds %zu bytes, section declares %llu",
			      n, (unsigned long long)h->raw_size);
	}
	s->raw = raw;
	return 0;
}

int rd_payload(struct mt_bundle_reader *r, struct rd_section *s, const uint8_t **p,
	       size_t *len)
{
	int err;

	switch (s->h.compression) {
	case MT_BUNDLE_COMP_NONE:
		*p = s->stored;
		break;
	case MT_BUNDLE_COMP_ZSTD:
		err = 0;
		pthread_mutex_lock(&r->lock);
		if (!s->raw && !(err = decompress(r, s)))
			drop_stored(r, s);
		pthread_mutex_unlock(&r->lock);
		if (err)
			return err;
		*p = s->raw;
		break;
	default:
		return rd_err(r, s, -EBADMSG, "unknown compression %u", s->h.compression);
	}
	*len = s->h.raw_size;
	return 0;
}

/*
 * Used in place, a table's strings would fault the file's pages back in at
 * every use after open has dropped them, and one fault can map a whole
 * large folio of the page cache (2 MiB, seen on a 6.18 kernel with ext4).
 */
int rd_payload_held(struct mt_bundle_reader *r, struct rd_section *s, const uint8_t **p,
		    size_t *len)
{
	if (s->h.compression != MT_BUNDLE_COMP_NONE || !r->mapped)
		return rd_payload(r, s, p, len);
	pthread_mutex_lock(&r->lock);
	if (!s->raw) {
		s->raw = malloc(s->h.raw_size ? s->h.raw_size : 1);
		if (s->raw) {
			memcpy(s->raw, s->stored, s->h.raw_size);
			drop_stored(r, s);
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (!s->raw)
		return rd_err(r, s, -ENOMEM, "out of memory");
	*p = s->raw;
	*len = s->h.raw_size;
	return 0;
}

void rd_payload_release(struct mt_bundle_reader *r, struct rd_section *s)
{
	pthread_mutex_lock(&r->lock);
	free(s->raw);
	s->raw = NULL;
	if (s->h.compression == MT_BUNDLE_COMP_NONE)
		drop_stored(r, s);
	pthread_mutex_unlock(&r->lock);
}
