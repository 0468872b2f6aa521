// SPDX-License-Identifier: MIT
/*
 * Payload access: uncompressed payloads are used in place (the file is
 * mapped, so PT bytes are never copied); zstd payloads are decompressed
 * once into a buffer of exactly the declared size, which rd_frame() has
 * already bounded, and kept until the reader is closed.
 */
#include "bundle/bundle_reader_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <zstd.h>

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
	raw = malloc(h->raw_size ? h->raw_size : 1);
	dctx = ZSTD_createDCtx();
	if (!raw || !dctx) {
		free(raw);
		ZSTD_freeDCtx(dctx);
		return rd_err(r, s, -ENOMEM, "out of memory for %llu bytes",
			      (unsigned long long)h->raw_size);
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
		if (!s->raw && (err = decompress(r, s)))
			return err;
		*p = s->raw;
		break;
	default:
		return rd_err(r, s, -EBADMSG, "unknown compression %u", s->h.compression);
	}
	*len = s->h.raw_size;
	return 0;
}
