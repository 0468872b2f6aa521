/* SPDX-License-Identifier: MIT */
/*
 * Re-sealing damaged bundles: recomputes section checksums so that tests and
 * the fuzzer reach the checks behind them. Independent of the library's own
 * framing code on purpose (a shared bug would hide itself).
 */
#ifndef MTRACE_TEST_BUNDLE_SEAL_H
#define MTRACE_TEST_BUNDLE_SEAL_H

#include "mtrace/bundle_format.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

/*
 * Recomputes the checksums of the section at off, each only where the bytes
 * it covers lie inside the buffer (tests also forge sizes that do not).
 */
static inline void sample_fix_crc(uint8_t *buf, size_t len, uint64_t off)
{
	struct mt_bundle_shdr h;
	uint64_t body;

	memcpy(&h, buf + off, sizeof(h));
	body = (uint64_t)h.shdr_size + h.desc_size;
	if (off + body > len)
		return;
	if (h.stored_size <= len - off - body)
		h.payload_crc = (uint32_t)crc32(0, buf + off + body, (uInt)h.stored_size);
	h.hdr_crc = 0;
	memcpy(buf + off, &h, sizeof(h));
	h.hdr_crc = (uint32_t)crc32(0, buf + off, (uInt)body);
	memcpy(buf + off, &h, sizeof(h));
}

/*
 * Re-seals the file header and every section it can frame; returns the
 * number of sections walked. Stops at the first size that leaves the buffer.
 */
static inline size_t sample_reseal(uint8_t *buf, size_t len)
{
	struct mt_bundle_file_header fh;
	uint64_t off;
	size_t n = 0;

	if (len < sizeof(fh))
		return 0;
	memcpy(&fh, buf, sizeof(fh));
	if (fh.header_size >= sizeof(fh) && fh.header_size <= len) {
		fh.header_crc = 0;
		memcpy(buf, &fh, sizeof(fh));
		fh.header_crc = (uint32_t)crc32(0, buf, fh.header_size);
		memcpy(buf, &fh, sizeof(fh));
	}
	for (off = fh.header_size; off + sizeof(struct mt_bundle_shdr) <= len; n++) {
		struct mt_bundle_shdr h;

		sample_fix_crc(buf, len, off);
		memcpy(&h, buf + off, sizeof(h));
		if (h.shdr_size < sizeof(h) || h.stored_size > len)
			break;
		off += (uint64_t)h.shdr_size + h.desc_size + h.stored_size;
	}
	return n;
}

#endif
