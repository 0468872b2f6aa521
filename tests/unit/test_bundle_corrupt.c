// SPDX-License-Identifier: MIT
/*
 * Damaged bundles: truncation at every offset, flipped bytes everywhere,
 * bad magic and versions, huge declared sizes and structural lies behind
 * valid checksums. Each must fail cleanly with the section and file offset
 * in the message (and never crash: this binary runs under ASan/UBSan).
 */
#include "test_bundle_sample.h"

#include <zstd.h>

#define MAX_SECS 64

struct corpus {
	uint8_t *buf;
	size_t len;
	uint64_t off[MAX_SECS];         /* section offsets, END last */
	size_t nsec;                    /* including END */
	size_t header;                  /* file header size */
};

static void corpus_make(struct corpus *c, int no_compression)
{
	struct sample sm;
	char path[256];

	sample_init(&sm, 4, 64);
	sample_tmp(path, sizeof(path), "corrupt");
	sample_write(&sm, path, no_compression, NULL);
	c->buf = sample_load(path, &c->len);
	unlink(path);
	sample_fini(&sm);
	c->nsec = sample_offsets(c->buf, c->len, c->off, MAX_SECS);
	c->header = sizeof(struct mt_bundle_file_header);
	MT_ASSERT(c->nsec == 16 && c->off[0] == c->header);
}

/* The index of the section whose bytes include file offset `at`; -1 for the file header. */
static int section_at(const struct corpus *c, uint64_t at)
{
	int idx = -1;

	for (size_t i = 0; i < c->nsec; i++)
		if (at >= c->off[i])
			idx = (int)i;
	return idx;
}

/* Opens data[0..len) and expects error `code` (0: any) naming section idx at its offset. */
static void expect_error(const struct corpus *c, const uint8_t *data, size_t len, int code,
			 int idx, const char *what)
{
	struct mt_bundle_reader *r = (struct mt_bundle_reader *)1;
	char err[512], want[96];
	int rc = mt_bundle_open_mem(&r, data, len, err, sizeof(err));

	MT_ASSERT_MSG(rc < 0, "%s: accepted", what);
	MT_ASSERT_MSG(r == NULL, "%s: handle left set on failure", what);
	MT_ASSERT_MSG(!code || rc == code, "%s: error %d, expected %d (%s)", what, rc, code, err);
	if (idx < 0)
		snprintf(want, sizeof(want), "file header at offset 0: ");
	else
		snprintf(want, sizeof(want), "section %d ", idx);
	MT_ASSERT_MSG(!strncmp(err, want, strlen(want)), "%s: message '%s' lacks '%s'", what, err,
		      want);
	if (idx >= 0) {
		snprintf(want, sizeof(want), "at offset %llu: ",
			 (unsigned long long)(idx < (int)c->nsec ? c->off[idx] : c->len));
		MT_ASSERT_MSG(strstr(err, want), "%s: message '%s' lacks '%s'", what, err, want);
	}
}

MT_TEST(intact_corpus_opens)
{
	struct corpus c;
	struct mt_bundle_reader *r;
	char err[512];

	corpus_make(&c, 0);
	MT_ASSERT_MSG(mt_bundle_open_mem(&r, c.buf, c.len, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_bundle_section_count(r), c.nsec - 1);
	mt_bundle_close(r);
	free(c.buf);
}

/* Truncation at every section boundary names the missing section. */
MT_TEST(truncate_at_every_section_boundary)
{
	struct corpus c;
	char what[64];

	corpus_make(&c, 0);
	for (size_t i = 0; i < c.nsec; i++) {
		snprintf(what, sizeof(what), "cut at section %zu", i);
		expect_error(&c, c.buf, c.off[i], -ENODATA, (int)i, what);
	}
	free(c.buf);
}

/* Truncation at every byte offset, compressed and uncompressed payloads. */
MT_TEST(truncate_at_every_offset)
{
	for (int raw = 0; raw < 2; raw++) {
		struct corpus c;
		char what[64];

		corpus_make(&c, raw);
		for (size_t len = 0; len < c.len; len++) {
			int idx = len < c.header ? -1 : section_at(&c, len);

			snprintf(what, sizeof(what), "cut at %zu of %zu", len, c.len);
			/* Nothing at all is no bundle; any start of one is truncated. */
			expect_error(&c, c.buf, len, len ? -ENODATA : -EBADMSG, idx, what);
		}
		free(c.buf);
	}
}

/* A cut inside the file header, also in its magic or version, says so. */
MT_TEST(truncate_in_file_header)
{
	struct corpus c;
	struct mt_bundle_reader *r;
	char err[512], want[128];

	corpus_make(&c, 0);
	for (size_t len = 1; len < c.header; len++) {
		snprintf(want, sizeof(want),
			 "file header at offset 0: truncated: header needs %zu bytes, file has %zu",
			 c.header, len);
		MT_ASSERT_EQ(mt_bundle_open_mem(&r, c.buf, len, err, sizeof(err)), -ENODATA);
		MT_ASSERT_STREQ(err, want);
	}
	free(c.buf);
}

/* Every single-byte change anywhere is caught by a magic, size or checksum check. */
MT_TEST(flip_every_byte)
{
	static const uint8_t masks[] = { 0x01, 0x80, 0xff };
	struct corpus c;
	uint8_t *copy;
	char what[64];

	corpus_make(&c, 0);
	copy = malloc(c.len);
	MT_ASSERT(copy);
	for (size_t m = 0; m < sizeof(masks); m++)
		for (size_t at = 0; at < c.len; at++) {
			memcpy(copy, c.buf, c.len);
			copy[at] ^= masks[m];
			snprintf(what, sizeof(what), "byte %zu ^ %#x", at, masks[m]);
			expect_error(&c, copy, c.len, 0, at < c.header ? -1 : section_at(&c, at), what);
		}
	free(copy);
	free(c.buf);
}

static void set_version(uint8_t *buf, uint16_t major, uint16_t minor)
{
	struct mt_bundle_file_header h;

	memcpy(&h, buf, sizeof(h));
	h.version_major = major;
	h.version_minor = minor;
	h.header_crc = 0;
	h.header_crc = (uint32_t)crc32(0, (const uint8_t *)&h, sizeof(h));
	memcpy(buf, &h, sizeof(h));
}

MT_TEST(newer_major_version_rejected)
{
	struct corpus c;
	struct mt_bundle_reader *r;
	char err[512];

	corpus_make(&c, 0);
	set_version(c.buf, MT_BUNDLE_VERSION_MAJOR + 1, 0);
	MT_ASSERT_EQ(mt_bundle_open_mem(&r, c.buf, c.len, err, sizeof(err)), -EPROTONOSUPPORT);
	MT_ASSERT_MSG(strstr(err, "format 2.0 is newer than this mtrace reads (1.x)"), "%s", err);
	set_version(c.buf, 0, 3);
	MT_ASSERT_EQ(mt_bundle_open_mem(&r, c.buf, c.len, err, sizeof(err)), -EBADMSG);
	MT_ASSERT_MSG(strstr(err, "bad format version 0.3"), "%s", err);
	free(c.buf);
}

MT_TEST(newer_minor_version_accepted)
{
	struct corpus c;
	struct mt_bundle_reader *r;
	uint16_t major, minor;
	char err[512];

	corpus_make(&c, 0);
	set_version(c.buf, MT_BUNDLE_VERSION_MAJOR, 9);
	MT_ASSERT_MSG(mt_bundle_open_mem(&r, c.buf, c.len, err, sizeof(err)) == 0, "%s", err);
	mt_bundle_version(r, &major, &minor);
	MT_ASSERT_EQ(major, MT_BUNDLE_VERSION_MAJOR);
	MT_ASSERT_EQ(minor, 9);
	mt_bundle_close(r);
	free(c.buf);
}

MT_TEST(bad_magic)
{
	struct corpus c;
	struct mt_bundle_reader *r;
	char err[512];

	corpus_make(&c, 0);
	memcpy(c.buf, "\x7f" "ELF", 4);
	MT_ASSERT_EQ(mt_bundle_open_mem(&r, c.buf, c.len, err, sizeof(err)), -EBADMSG);
	MT_ASSERT_STREQ(err, "file header at offset 0: not an mtrace bundle (bad magic)");
	MT_ASSERT_EQ(mt_bundle_open_mem(&r, "", 0, err, sizeof(err)), -EBADMSG);
	free(c.buf);
}

/* Patches a field of section idx's header and re-seals its checksums. */
static void patch_shdr(struct corpus *c, size_t idx, size_t field, const void *val, size_t n)
{
	memcpy(c->buf + c->off[idx] + field, val, n);
	sample_fix_crc(c->buf, c->len, c->off[idx]);
}

static size_t find_type(const struct corpus *c, uint32_t type)
{
	for (size_t i = 0; i < c->nsec; i++) {
		struct mt_bundle_shdr h;

		memcpy(&h, c->buf + c->off[i], sizeof(h));
		if (h.type == type)
			return i;
	}
	mt_fail(__FILE__, __LINE__, "no section of type %u", type);
}

/* Huge sizes behind valid checksums: refused before any allocation. */
MT_TEST(huge_declared_sizes)
{
	struct corpus c;
	uint64_t huge = 1ULL << 40, modest = 1ULL << 26;
	uint32_t big32 = 0x7fffffff;
	size_t pt, sw;
	char what[64];

	corpus_make(&c, 0);
	pt = find_type(&c, MT_BUNDLE_SEC_PT_DATA);
	patch_shdr(&c, pt, offsetof(struct mt_bundle_shdr, raw_size), &huge, 8);
	snprintf(what, sizeof(what), "raw_size 2^40");
	expect_error(&c, c.buf, c.len, -EFBIG, (int)pt, what);
	/* Within the absolute limit but far beyond what 256 stored bytes justify. */
	patch_shdr(&c, pt, offsetof(struct mt_bundle_shdr, raw_size), &modest, 8);
	expect_error(&c, c.buf, c.len, -EFBIG, (int)pt, "raw_size 64 MiB from a few bytes");
	free(c.buf);

	corpus_make(&c, 0);
	patch_shdr(&c, 3, offsetof(struct mt_bundle_shdr, stored_size), &huge, 8);
	expect_error(&c, c.buf, c.len, -ENODATA, 3, "stored_size 2^40");
	free(c.buf);

	corpus_make(&c, 0);
	patch_shdr(&c, 3, offsetof(struct mt_bundle_shdr, desc_size), &big32, 4);
	expect_error(&c, c.buf, c.len, -EBADMSG, 3, "desc_size 2 GiB");
	free(c.buf);

	/* A table claiming 2^60 entries. */
	corpus_make(&c, 1);
	sw = find_type(&c, MT_BUNDLE_SEC_SWITCHES);
	{
		uint64_t count = 1ULL << 60;

		patch_shdr(&c, sw, sizeof(struct mt_bundle_shdr) +
			   offsetof(struct mt_bundle_table_desc, count), &count, 8);
	}
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)sw, "table count 2^60");
	free(c.buf);
}

/* The stream reader's error on CPU 0's PT, which must say WANT. */
static void stream_says(struct mt_bundle_reader *r, const char *want)
{
	struct mt_bundle_stream *st;
	uint8_t piece[4096];
	ssize_t n;

	MT_ASSERT_EQ(mt_bundle_pt_stream_open(r, 0, &st), 0);
	while ((n = mt_bundle_stream_read(st, piece, sizeof(piece))) > 0)
		;
	MT_ASSERT_EQ(n, -EBADMSG);
	MT_ASSERT_MSG(strstr(mt_bundle_stream_errmsg(st), want), "%s (want %s)",
		      mt_bundle_stream_errmsg(st), want);
	mt_bundle_stream_close(st);
}

/*
 * Opens C's bytes in memory or, FROM_FILE, from a file (whose streams read
 * it with pread() instead of in place).
 */
static void open_corpus(const struct corpus *c, int from_file, struct mt_bundle_reader **r)
{
	char path[256], err[512];
	FILE *f;

	if (!from_file) {
		MT_ASSERT_MSG(mt_bundle_open_mem(r, c->buf, c->len, err, sizeof(err)) == 0, "%s", err);
		return;
	}
	sample_tmp(path, sizeof(path), "corpus");
	f = fopen(path, "wb");
	MT_ASSERT(f && fwrite(c->buf, 1, c->len, f) == c->len && !fclose(f));
	MT_ASSERT_MSG(mt_bundle_open(r, path, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
}

/* A zstd payload that does not hold what the header declares, read whole
 * and as a stream. */
static void zstd_size_lies(int from_file)
{
	struct corpus c;
	struct mt_bundle_reader *r;
	struct mt_bundle_shdr h;
	const uint8_t *data;
	size_t pt, len;
	uint64_t raw;
	char err[512];

	corpus_make(&c, 0);
	pt = find_type(&c, MT_BUNDLE_SEC_PT_DATA);
	memcpy(&h, c.buf + c.off[pt], sizeof(h));
	MT_ASSERT_EQ(h.compression, MT_BUNDLE_COMP_ZSTD);
	raw = h.raw_size - 1;
	patch_shdr(&c, pt, offsetof(struct mt_bundle_shdr, raw_size), &raw, 8);
	/* The PT payload is decompressed on first access; the lie surfaces there. */
	open_corpus(&c, from_file, &r);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 0, &data, &len), -EBADMSG);
	MT_ASSERT_MSG(strstr(mt_bundle_reader_errmsg(r), "zstd frame holds 8192 bytes, section declares 8191"),
		      "%s", mt_bundle_reader_errmsg(r));
	snprintf(err, sizeof(err), "section %zu (pt-data, type 3) at offset %llu: ", pt,
		 (unsigned long long)c.off[pt]);
	MT_ASSERT_MSG(!strncmp(mt_bundle_reader_errmsg(r), err, strlen(err)), "%s",
		      mt_bundle_reader_errmsg(r));
	stream_says(r, "zstd payload holds more bytes than the section declares");
	mt_bundle_close(r);
	raw += 2;
	patch_shdr(&c, pt, offsetof(struct mt_bundle_shdr, raw_size), &raw, 8);
	open_corpus(&c, from_file, &r);
	stream_says(r, "zstd payload holds fewer bytes than the section declares");
	mt_bundle_close(r);
	free(c.buf);
}

MT_TEST(zstd_size_lies_in_memory)
{
	zstd_size_lies(0);
}

MT_TEST(zstd_size_lies_in_a_file)
{
	zstd_size_lies(1);
}

/*
 * A zstd frame that does not state its content size, stored by hand in a
 * section whose raw_size lies (too large for the one-shot path, so the
 * growing decoder meets it, and too small).
 */
MT_TEST(zstd_frame_without_content_size)
{
	static const uint64_t claims[] = { 200000, 70000, 50000 };
	uint8_t zeros[65536] = { 0 }, frame[256];
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	ZSTD_inBuffer in = { zeros, sizeof(zeros), 0 };
	ZSTD_outBuffer out = { frame, sizeof(frame), 0 };
	struct mt_bundle_ktext_desc kd = { sizeof(kd), 0, 0x1000 };
	struct mt_bundle_writer *w;
	struct corpus c;
	char path[256];

	MT_ASSERT(cctx);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
	MT_ASSERT_EQ(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end), 0);
	ZSTD_freeCCtx(cctx);
	MT_ASSERT_EQ(ZSTD_getFrameContentSize(frame, out.pos), ZSTD_CONTENTSIZE_UNKNOWN);
	sample_tmp(path, sizeof(path), "nosize");
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, NULL, 0), 0);
	MT_ASSERT_EQ(mt_bundle_write_section(w, MT_BUNDLE_SEC_KTEXT, &kd, sizeof(kd), frame, out.pos,
					     MT_BUNDLE_COMP_NONE), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	c.buf = sample_load(path, &c.len);
	unlink(path);
	c.nsec = sample_offsets(c.buf, c.len, c.off, MAX_SECS);
	for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
		struct mt_bundle_reader *r;
		const uint8_t *data;
		uint16_t zstd = MT_BUNDLE_COMP_ZSTD;
		char err[512], want[128];
		size_t len;

		patch_shdr(&c, 0, offsetof(struct mt_bundle_shdr, compression), &zstd, 2);
		patch_shdr(&c, 0, offsetof(struct mt_bundle_shdr, raw_size), &claims[i], 8);
		MT_ASSERT_MSG(mt_bundle_open_mem(&r, c.buf, c.len, err, sizeof(err)) == 0, "%s", err);
		MT_ASSERT_EQ(mt_bundle_ktext_data(r, 0, &data, &len), -EBADMSG);
		snprintf(want, sizeof(want), "zstd payload holds %s%zu bytes, section declares %llu",
			 claims[i] < sizeof(zeros) ? "more than " : "",
			 claims[i] < sizeof(zeros) ? (size_t)claims[i] : sizeof(zeros),
			 (unsigned long long)claims[i]);
		MT_ASSERT_MSG(strstr(mt_bundle_reader_errmsg(r), want), "%s (want %s)",
			      mt_bundle_reader_errmsg(r), want);
		mt_bundle_close(r);
	}
	free(c.buf);
}

/* Structural errors behind valid checksums. */
MT_TEST(structural_lies)
{
	struct corpus c;
	size_t sec, cpu, end;
	uint32_t v;
	uint64_t v64;

	corpus_make(&c, 1);
	sec = find_type(&c, MT_BUNDLE_SEC_MAPS);
	/* The first map's path reference points past the pool. */
	v = 100000;
	patch_shdr(&c, sec, sizeof(struct mt_bundle_shdr) + sizeof(struct mt_bundle_table_desc) +
		   offsetof(struct mt_bundle_map_entry, path), &v, 4);
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)sec, "path outside pool");
	free(c.buf);

	corpus_make(&c, 1);
	sec = find_type(&c, MT_BUNDLE_SEC_MAPS);
	/* The first path ("/usr/bin/app") stretched over its NUL and the build-id after it. */
	v = 12 + 1 + 20;
	patch_shdr(&c, sec, sizeof(struct mt_bundle_shdr) + sizeof(struct mt_bundle_table_desc) +
		   offsetof(struct mt_bundle_map_entry, path.len), &v, 4);
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)sec, "path with an inner NUL");
	free(c.buf);

	corpus_make(&c, 1);
	sec = find_type(&c, MT_BUNDLE_SEC_MAPS);
	/* An empty map range: the first map (0x400000-0x401000) ends where it starts. */
	v64 = 0x400000;
	patch_shdr(&c, sec, sizeof(struct mt_bundle_shdr) + sizeof(struct mt_bundle_table_desc) +
		   offsetof(struct mt_bundle_map_entry, end), &v64, 8);
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)sec, "empty map range");
	free(c.buf);

	corpus_make(&c, 1);
	sec = find_type(&c, MT_BUNDLE_SEC_MODULES);
	/* A module whose range runs backwards. */
	v64 = 0;
	patch_shdr(&c, sec, sizeof(struct mt_bundle_shdr) + sizeof(struct mt_bundle_table_desc) +
		   offsetof(struct mt_bundle_module_entry, end), &v64, 8);
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)sec, "reversed module range");
	free(c.buf);

	corpus_make(&c, 1);
	sec = find_type(&c, MT_BUNDLE_SEC_KTEXT);
	/* Kernel text that would run past the end of the address space. */
	v64 = ~0ULL - 100;
	patch_shdr(&c, sec, sizeof(struct mt_bundle_shdr) +
		   offsetof(struct mt_bundle_ktext_desc, addr), &v64, 8);
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)sec, "wrapping kernel text");
	free(c.buf);

	corpus_make(&c, 1);
	sec = find_type(&c, MT_BUNDLE_SEC_MAPS);
	/* Entry size below the v1 size. */
	v = 8;
	patch_shdr(&c, sec, sizeof(struct mt_bundle_shdr) +
		   offsetof(struct mt_bundle_table_desc, entry_size), &v, 4);
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)sec, "entry size 8");
	free(c.buf);

	corpus_make(&c, 1);
	cpu = find_type(&c, MT_BUNDLE_SEC_CPU);
	/* Descriptor claims to be shorter than version 1's. */
	v = 12;
	patch_shdr(&c, cpu, sizeof(struct mt_bundle_shdr), &v, 4);
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)cpu, "short cpu descriptor");
	free(c.buf);

	corpus_make(&c, 1);
	/* A second cpu section: retype the pt-config section. */
	cpu = find_type(&c, MT_BUNDLE_SEC_PT_CONFIG);
	v = MT_BUNDLE_SEC_CPU;
	patch_shdr(&c, cpu, offsetof(struct mt_bundle_shdr, type), &v, 4);
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)cpu, "duplicate cpu");
	free(c.buf);

	corpus_make(&c, 1);
	end = c.nsec - 1;
	/* END miscounts the sections. */
	v64 = 3;
	patch_shdr(&c, end, sizeof(struct mt_bundle_shdr) +
		   offsetof(struct mt_bundle_end_desc, section_count), &v64, 8);
	expect_error(&c, c.buf, c.len, -EBADMSG, (int)end, "end count");
	free(c.buf);

	corpus_make(&c, 1);
	/* Unknown compression on a known section. */
	v = 7;
	patch_shdr(&c, 0, offsetof(struct mt_bundle_shdr, compression), &v, 2);
	expect_error(&c, c.buf, c.len, -EBADMSG, 0, "compression 7");
	free(c.buf);
}

MT_TEST(trailing_bytes_after_end)
{
	struct corpus c;
	uint8_t *longer;

	corpus_make(&c, 0);
	longer = calloc(1, c.len + 5);
	MT_ASSERT(longer);
	memcpy(longer, c.buf, c.len);
	expect_error(&c, longer, c.len + 5, -EBADMSG, (int)c.nsec - 1, "5 trailing bytes");
	free(longer);
	free(c.buf);
}

/* A lazily decoded payload reads in full (every byte touched) or fails naming its section. */
static void payload_ok(struct mt_bundle_reader *r, int rc, const uint8_t *d, size_t len,
		       const char *what, size_t i)
{
	if (rc == 0) {
		volatile uLong sum = crc32(0, d, (uInt)len);

		(void)sum;
		return;
	}
	MT_ASSERT_MSG(strstr(mt_bundle_reader_errmsg(r), "section ") != NULL, "%s %zu: %s", what, i,
		      mt_bundle_reader_errmsg(r));
}

/*
 * CPU I's PT read through the stream reader in pieces of an odd size:
 * the bytes of the whole payload (D, LEN) when that read worked (RC 0),
 * an error with its section named when it did not.
 */
static void stream_matches(struct mt_bundle_reader *r, size_t i, int rc, const uint8_t *d,
			   size_t len)
{
	struct mt_bundle_stream *st;
	uint8_t piece[999];
	size_t at = 0;
	ssize_t n;

	if (mt_bundle_pt_stream_open(r, i, &st) < 0) {
		MT_ASSERT(rc < 0);
		return;
	}
	while ((n = mt_bundle_stream_read(st, piece, sizeof(piece))) > 0) {
		MT_ASSERT(rc || (at + (size_t)n <= len && !memcmp(piece, d + at, (size_t)n)));
		at += (size_t)n;
	}
	if (!rc) {
		MT_ASSERT_MSG(n == 0 && at == len, "pt %zu: read %zu of %zu bytes: %s", i, at, len,
			      mt_bundle_stream_errmsg(st));
	} else {
		MT_ASSERT_MSG(n < 0, "pt %zu: the whole payload failed, the stream read %zu bytes",
			      i, at);
		MT_ASSERT_MSG(strstr(mt_bundle_stream_errmsg(st), "section ") != NULL, "%s",
			      mt_bundle_stream_errmsg(st));
	}
	mt_bundle_stream_close(st);
}

static void read_everything(struct mt_bundle_reader *r)
{
	const uint8_t *d;
	const char *text;
	size_t len;
	int rc;

	/* Each getter runs before its results are passed on (argument order is unspecified). */
	for (size_t i = 0; i < mt_bundle_pt_count(r); i++) {
		rc = mt_bundle_pt_data(r, i, &d, &len);
		payload_ok(r, rc, d, len, "pt", i);
		stream_matches(r, i, rc, d, len);
	}
	for (size_t i = 0; i < mt_bundle_file_count(r); i++) {
		rc = mt_bundle_file_data(r, i, &d, &len);
		payload_ok(r, rc, d, len, "file", i);
	}
	for (size_t i = 0; i < mt_bundle_ktext_count(r); i++) {
		rc = mt_bundle_ktext_data(r, i, &d, &len);
		payload_ok(r, rc, d, len, "ktext", i);
	}
	rc = mt_bundle_kallsyms(r, &text, &len);
	if (rc != -ENOENT)
		payload_ok(r, rc, (const uint8_t *)text, len, "kallsyms", 0);
}

/*
 * Random multi-byte damage with checksums re-sealed, so that the checks
 * behind the checksums see it: the reader must either accept or fail with
 * a message, and every accepted bundle must be fully readable.
 */
MT_TEST(resealed_random_damage)
{
	struct corpus c;
	uint8_t *copy;
	uint64_t seed = 0x1234567;
	int accepted = 0, rejected = 0;

	for (int raw = 0; raw < 2; raw++) {
		corpus_make(&c, raw);
		copy = malloc(c.len);
		MT_ASSERT(copy);
		for (int iter = 0; iter < 3000; iter++) {
			struct mt_bundle_reader *r;
			size_t sec = (size_t)(sample_rand(&seed) % (c.nsec - 1));
			uint64_t lo = c.off[sec] + offsetof(struct mt_bundle_shdr, stored_size);
			uint64_t span = c.off[sec + 1] - lo;
			int n = 1 + (int)(sample_rand(&seed) % 4);
			char err[512];

			memcpy(copy, c.buf, c.len);
			for (int k = 0; k < n; k++)
				copy[lo + sample_rand(&seed) % span] = (uint8_t)sample_rand(&seed);
			sample_fix_crc(copy, c.len, c.off[sec]);
			if (mt_bundle_open_mem(&r, copy, c.len, err, sizeof(err))) {
				MT_ASSERT_MSG(strstr(err, " at offset "), "%s", err);
				rejected++;
				continue;
			}
			accepted++;
			read_everything(r);
			mt_bundle_close(r);
		}
		free(copy);
		free(c.buf);
	}
	MT_ASSERT(accepted > 0 && rejected > 0);
}
