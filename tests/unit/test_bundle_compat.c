// SPDX-License-Identifier: MIT
/*
 * Forward compatibility (unknown sections, longer descriptors and entries
 * from newer writers) and the API's argument and misuse errors.
 */
#include "test_bundle_sample.h"

#include "bundle/bundle_reader_internal.h"
#include "bundle/bundle_writer_internal.h"

#include <fcntl.h>

static struct mt_bundle_writer *new_writer(char *path, size_t len)
{
	struct mt_bundle_writer *w;
	char err[256];

	sample_tmp(path, len, "compat");
	MT_ASSERT_MSG(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)) == 0, "%s", err);
	return w;
}

static struct mt_bundle_reader *finish_and_open(struct mt_bundle_writer *w, const char *path)
{
	struct mt_bundle_reader *r;
	char err[512];

	MT_ASSERT_MSG(mt_bundle_writer_finish(w) == 0, "%s", mt_bundle_writer_errmsg(w));
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	return r;
}

MT_TEST(unknown_sections_are_skipped)
{
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct mt_bundle_section_info si;
	struct mt_bundle_cpu_desc cpu = sample_cpu(), got;
	uint8_t junk[600];
	char path[256];

	memset(junk, 0xab, sizeof(junk));
	w = new_writer(path, sizeof(path));
	MT_ASSERT_EQ(mt_bundle_write_section(w, 0x7777, "future", 6, junk, sizeof(junk),
					     MT_BUNDLE_COMP_ZSTD), 0);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	/* An unknown compression method inside an unknown section does not matter either. */
	MT_ASSERT_EQ(mt_bundle_write_section(w, 0x7778, NULL, 0, junk, 10, MT_BUNDLE_COMP_NONE), 0);
	r = finish_and_open(w, path);
	MT_ASSERT_EQ(mt_bundle_section_count(r), 3);
	MT_ASSERT_EQ(mt_bundle_section_info(r, 0, &si), 0);
	MT_ASSERT_EQ(si.type, 0x7777);
	MT_ASSERT_EQ(si.known, 0);
	MT_ASSERT_EQ(si.raw_size, sizeof(junk));
	MT_ASSERT(si.stored_size < si.raw_size);
	MT_ASSERT_STREQ(mt_bundle_section_name(si.type), "unknown");
	MT_ASSERT_EQ(mt_bundle_get_cpu(r, &got), 0);
	MT_ASSERT_EQ(got.model, cpu.model);
	mt_bundle_close(r);
	unlink(path);
}

/* Many sections, of a known table type and an unknown type, in one bundle. */
MT_TEST(many_small_sections)
{
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	const struct mt_bundle_switch_entry *sw;
	char path[256];
	size_t n;

	w = new_writer(path, sizeof(path));
	for (uint32_t i = 0; i < 20000; i++) {
		struct mt_bundle_switch_entry e = { .tsc = i, .cpu = i % 7 };

		MT_ASSERT_EQ(mt_bundle_write_switches(w, &e, 1), 0);
		MT_ASSERT_EQ(mt_bundle_write_section(w, 0x9000, NULL, 0, &i, 1, MT_BUNDLE_COMP_NONE), 0);
	}
	r = finish_and_open(w, path);
	MT_ASSERT_EQ(mt_bundle_section_count(r), 40000);
	MT_ASSERT_EQ(mt_bundle_switches(r, &sw, &n), 0);
	MT_ASSERT_EQ(n, 20000);
	for (uint32_t i = 0; i < 20000; i++)
		MT_ASSERT(sw[i].tsc == i && sw[i].cpu == i % 7);
	mt_bundle_close(r);
	unlink(path);
}

/* A newer minor version may append fields to descriptors and entries. */
MT_TEST(longer_descriptors_and_entries)
{
	struct {
		struct mt_bundle_pt_desc d;
		uint64_t future_field;
	} pt = { { .size = sizeof(pt), .cpu = 3, .stop_tsc = 99 }, 0x5555 };
	struct {
		struct mt_bundle_switch_entry e;
		uint64_t future_field;
	} sw[2] = { { { .tsc = 1, .cpu = 2, .next_tid = 7 }, 0x1111 },
		    { { .tsc = 2, .cpu = 3, .next_tid = 8 }, 0x2222 } };
	struct mt_bundle_table_desc td = { sizeof(td), sizeof(sw[0]), 2 };
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	const struct mt_bundle_switch_entry *got;
	struct mt_bundle_pt_desc gpt;
	const uint8_t *data;
	size_t len;
	char path[256];

	w = new_writer(path, sizeof(path));
	MT_ASSERT_EQ(mt_bundle_write_section(w, MT_BUNDLE_SEC_PT_DATA, &pt, sizeof(pt), "PT", 2,
					     MT_BUNDLE_COMP_NONE), 0);
	MT_ASSERT_EQ(mt_bundle_write_section(w, MT_BUNDLE_SEC_SWITCHES, &td, sizeof(td), sw,
					     sizeof(sw), MT_BUNDLE_COMP_ZSTD), 0);
	r = finish_and_open(w, path);
	MT_ASSERT_EQ(mt_bundle_pt_desc(r, 0, &gpt), 0);
	MT_ASSERT_EQ(gpt.cpu, 3);
	MT_ASSERT_EQ(gpt.stop_tsc, 99);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 0, &data, &len), 0);
	MT_ASSERT_EQ(len, 2);
	MT_ASSERT_MEMEQ(data, "PT", 2);
	MT_ASSERT_EQ(mt_bundle_switches(r, &got, &len), 0);
	MT_ASSERT_EQ(len, 2);
	MT_ASSERT_EQ(got[1].tsc, 2);
	MT_ASSERT_EQ(got[1].cpu, 3);
	MT_ASSERT_EQ(got[1].next_tid, 8);
	mt_bundle_close(r);
	unlink(path);
}

/*
 * The day a field is appended to a descriptor, the reader's struct outgrows
 * the 1.0 size. Simulated with the trigger descriptor as if skid_ns had come
 * after 1.0: an older descriptor (without it) reads with skid_ns zero and
 * its tail intact, a newer one (with a field after skid_ns) is cut to the
 * reader's struct, and one shorter than 1.0's is refused.
 */
MT_TEST(shorter_and_longer_descriptors)
{
	const size_t v1 = offsetof(struct mt_bundle_trigger_desc, skid_ns);
	struct mt_bundle_trigger_desc d = { .reason = 3, .freeze_path = 1, .cpu = 2, .tid = 7,
					    .freeze_tsc = 99, .skid_ns = 1234 };
	struct mt_bundle_reader *r = calloc(1, sizeof(*r));
	struct rd_section s = { .have_hdr = true, .h.type = MT_BUNDLE_SEC_TRIGGER };
	uint64_t newer_field = 0x5555;
	uint8_t buf[sizeof(d) + sizeof(newer_field) + 4];
	struct mt_bundle_trigger_desc got;
	const uint8_t *tail;
	size_t tail_len;

	MT_ASSERT(r);
	s.desc = buf;
	/* Older: the fixed part ends before skid_ns, the tail follows at once. */
	d.size = (uint32_t)v1;
	memcpy(buf, &d, v1);
	memcpy(buf + v1, "spec", 4);
	s.h.desc_size = (uint32_t)v1 + 4;
	memset(&got, 0xee, sizeof(got));
	MT_ASSERT_MSG(rd_desc_get(r, &s, &got, sizeof(got), v1, &tail, &tail_len) == 0, "%s",
		      r->errmsg);
	MT_ASSERT_EQ(got.size, v1);
	MT_ASSERT_EQ(got.reason, 3);
	MT_ASSERT_EQ(got.tid, 7);
	MT_ASSERT_EQ(got.freeze_tsc, 99);
	MT_ASSERT_EQ(got.skid_ns, 0);
	MT_ASSERT_EQ(tail_len, 4);
	MT_ASSERT_MEMEQ(tail, "spec", 4);

	/* Newer: one more field after skid_ns, then the tail. */
	d.size = sizeof(d) + sizeof(newer_field);
	memcpy(buf, &d, sizeof(d));
	memcpy(buf + sizeof(d), &newer_field, sizeof(newer_field));
	memcpy(buf + d.size, "spec", 4);
	s.h.desc_size = d.size + 4;
	MT_ASSERT_MSG(rd_desc_get(r, &s, &got, sizeof(got), v1, &tail, &tail_len) == 0, "%s",
		      r->errmsg);
	MT_ASSERT_EQ(got.skid_ns, 1234);
	MT_ASSERT_EQ(got.freeze_tsc, 99);
	MT_ASSERT_EQ(tail_len, 4);
	MT_ASSERT_MEMEQ(tail, "spec", 4);

	/* Shorter than 1.0's, or longer than the descriptor bytes: corrupt. */
	d.size = (uint32_t)v1 - 8;
	memcpy(buf, &d, sizeof(d.size));
	MT_ASSERT_EQ(rd_desc_get(r, &s, &got, sizeof(got), v1, &tail, &tail_len), -EBADMSG);
	MT_ASSERT_MSG(strstr(r->errmsg, "descriptor size 40 outside [48, 68]"), "%s", r->errmsg);
	MT_ASSERT(tail == NULL && got.reason == 0);
	d.size = s.h.desc_size + 1;
	memcpy(buf, &d, sizeof(d.size));
	MT_ASSERT_EQ(rd_desc_get(r, &s, &got, sizeof(got), v1, NULL, NULL), -EBADMSG);
	free(r);
}

/*
 * Bundles written by format 1.0 and checked in (the fuzzer's seeds) must
 * keep reading the same: a guard against unnoticed format changes.
 */
MT_TEST(golden_bundles_still_read)
{
	static const char *const names[] = { "sample-zstd.mtrace", "sample-raw.mtrace" };
	struct mt_bundle_reader *r;
	struct mt_bundle_pt_desc pt;
	struct sample sm;
	const uint8_t *data;
	char dir[512], path[600], err[512];
	size_t len;

	/* __FILE__ is relative to the top of the tree, where the tests run. */
	snprintf(dir, sizeof(dir), "%s", __FILE__);
	*strrchr(dir, '/') = 0;
	snprintf(path, sizeof(path), "%s/../fuzz/corpus/fuzz_bundle/%s", dir, names[0]);
	if (access(path, R_OK))
		mt_skip("%s not found: run from the top of the source tree", path);
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/../fuzz/corpus/fuzz_bundle/%s", dir, names[i]);
		sample_init(&sm, 4, 64);
		MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
		sample_check(&sm, r, 0);
		mt_bundle_close(r);
		sample_fini(&sm);
	}
	snprintf(path, sizeof(path), "%s/../fuzz/corpus/fuzz_bundle/future-minor.mtrace", dir);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_bundle_section_count(r), 3);
	MT_ASSERT_EQ(mt_bundle_pt_desc(r, 0, &pt), 0);
	MT_ASSERT_EQ(pt.cpu, 1);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 0, &data, &len), 0);
	MT_ASSERT_EQ(len, 4);
	MT_ASSERT_MEMEQ(data, "\x02\x82\x02\x82", 4);
	mt_bundle_close(r);
}

MT_TEST(writer_rejects_misuse)
{
	struct mt_bundle_writer *w;
	struct mt_bundle_cpu_desc cpu = sample_cpu();
	struct mt_bundle_pt_desc pt = { .cpu = 1 };
	struct mt_bundle_pt_desc bad_off = { .cpu = 2, .write_offset = 100 };
	uint8_t long_bid[65] = { 0 };
	struct mt_bundle_file f = { "/bin/x", long_bid, sizeof(long_bid), 0, 0 };
	struct mt_bundle_file nopath = { NULL, NULL, 0, 0, 0 };
	char path[256];

	w = new_writer(path, sizeof(path));
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), -EINVAL);
	MT_ASSERT_STREQ(mt_bundle_writer_errmsg(w), "section cpu may appear only once");
	MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt, "x", 1), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt, "x", 1), -EINVAL);
	MT_ASSERT_STREQ(mt_bundle_writer_errmsg(w), "PT data of cpu 1 written twice");
	MT_ASSERT_EQ(mt_bundle_write_pt_ring(w, &bad_off, "ring", 4), -EINVAL);
	MT_ASSERT_STREQ(mt_bundle_writer_errmsg(w), "cpu 2: write offset 100 beyond ring of 4 bytes");
	MT_ASSERT_EQ(mt_bundle_write_file(w, &f, "x", 1), -EINVAL);
	MT_ASSERT_STREQ(mt_bundle_writer_errmsg(w), "/bin/x: build-id of 65 bytes (at most 64)");
	MT_ASSERT_EQ(mt_bundle_write_file(w, &nopath, "x", 1), -EINVAL);
	MT_ASSERT_EQ(mt_bundle_write_pt(w, NULL, "x", 1), -EINVAL);
	MT_ASSERT_EQ(mt_bundle_write_maps(w, NULL, 2), -EINVAL);
	MT_ASSERT_EQ(mt_bundle_write_section(w, 99, NULL, 0, NULL, 0, 5), -EINVAL);
	MT_ASSERT_STREQ(mt_bundle_writer_errmsg(w), "unknown compression 5");
	MT_ASSERT_EQ(mt_bundle_embed_file(w, &f, "/nonexistent/mtrace-test"), -ENOENT);
	MT_ASSERT(strstr(mt_bundle_writer_errmsg(w), "/nonexistent/mtrace-test"));
	/* Misuse leaves the bundle intact: it still finishes and reads back. */
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), -EINVAL);
	MT_ASSERT_STREQ(mt_bundle_writer_errmsg(w), "bundle already finished");
	mt_bundle_writer_free(w);
	{
		struct mt_bundle_reader *r;
		char err[512];

		MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
		MT_ASSERT_EQ(mt_bundle_pt_count(r), 1);
		mt_bundle_close(r);
	}
	unlink(path);
}

/*
 * A source that fails mid-copy drops only its own section. sysfs attributes
 * claim a 4 KiB size and deliver less: a file that "shrinks" while read.
 */
MT_TEST(embed_failure_keeps_bundle_usable)
{
	static const char src[] = "/sys/kernel/mm/transparent_hugepage/enabled";
	struct mt_bundle_file f = { "/lib/libshrinks.so", NULL, 0, 0, 0 };
	struct mt_bundle_cpu_desc cpu = sample_cpu();
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct stat st;
	char path[256];

	if (stat(src, &st) || !S_ISREG(st.st_mode) || st.st_size != 4096)
		mt_skip("%s is not a 4 KiB sysfs attribute here", src);
	w = new_writer(path, sizeof(path));
	MT_ASSERT_EQ(mt_bundle_embed_file(w, &f, src), -EIO);
	MT_ASSERT_MSG(strstr(mt_bundle_writer_errmsg(w), "file shrank while being embedded"), "%s",
		      mt_bundle_writer_errmsg(w));
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	r = finish_and_open(w, path);
	MT_ASSERT_EQ(mt_bundle_file_count(r), 0);
	MT_ASSERT_EQ(mt_bundle_section_count(r), 1);
	mt_bundle_close(r);
	unlink(path);
}

/*
 * The writer's abort, white-box: a section dropped while still staged and
 * one whose start already reached the file both vanish without a trace.
 */
MT_TEST(section_abort_restores_output)
{
	static const size_t sizes[] = { 10, 600 * 1024 };
	struct mt_bundle_cpu_desc cpu = sample_cpu();
	uint8_t *junk = calloc(1, 600 * 1024);
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct stat st;
	char path[256];

	MT_ASSERT(junk);
	for (size_t i = 0; i < 2; i++) {
		w = new_writer(path, sizeof(path));
		MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
		MT_ASSERT_EQ(wr_section_begin(w, 0x8000, NULL, 0, 1 << 20, MT_BUNDLE_COMP_NONE), 0);
		MT_ASSERT_EQ(wr_section_append(w, junk, sizes[i]), 0);
		MT_ASSERT_EQ(wr_section_abort(w), 0);
		MT_ASSERT_EQ(mt_bundle_write_kallsyms(w, "k", 1), 0);
		r = finish_and_open(w, path);
		MT_ASSERT_EQ(mt_bundle_section_count(r), 2);
		mt_bundle_close(r);
		MT_ASSERT_EQ(stat(path, &st), 0);
		MT_ASSERT_EQ(st.st_size, sizeof(struct mt_bundle_file_header) +
			     3 * sizeof(struct mt_bundle_shdr) + sizeof(struct mt_bundle_cpu_desc) +
			     sizeof(struct mt_bundle_blob_desc) + 1 + sizeof(struct mt_bundle_end_desc));
		unlink(path);
	}
	free(junk);
}

MT_TEST(writer_null_and_create_errors)
{
	struct mt_bundle_writer *w = (struct mt_bundle_writer *)1;
	char err[256];

	MT_ASSERT_EQ(mt_bundle_writer_create(&w, "/nonexistent-dir/x.mtrace", NULL, err,
					     sizeof(err)), -ENOENT);
	MT_ASSERT(w == NULL);
	MT_ASSERT_STREQ(err, "/nonexistent-dir/x.mtrace: No such file or directory");
	MT_ASSERT_EQ(mt_bundle_writer_create(NULL, "x", NULL, err, sizeof(err)), -EINVAL);
	MT_ASSERT_EQ(mt_bundle_writer_finish(NULL), -EINVAL);
	MT_ASSERT_EQ(mt_bundle_write_cpu(NULL, NULL), -EINVAL);
	MT_ASSERT_EQ(mt_bundle_write_switches(NULL, NULL, 0), -EINVAL);
	MT_ASSERT_EQ(mt_bundle_write_clock(NULL, NULL, NULL, 0), -EINVAL);
	MT_ASSERT_STREQ(mt_bundle_writer_errmsg(NULL), "no writer");
	mt_bundle_writer_free(NULL);
}

/* A writer freed before finish leaves a file every reader rejects as truncated. */
MT_TEST(unfinished_bundle_is_truncated)
{
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct mt_bundle_cpu_desc cpu = sample_cpu();
	char path[256], err[512], want[400];

	w = new_writer(path, sizeof(path));
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_EQ(mt_bundle_open(&r, path, err, sizeof(err)), -ENODATA);
	snprintf(want, sizeof(want), "%s: section 1 at offset %zu: truncated: the file ends without an end section",
		 path, sizeof(struct mt_bundle_file_header) + sizeof(struct mt_bundle_shdr) +
		 sizeof(struct mt_bundle_cpu_desc));
	MT_ASSERT_STREQ(err, want);
	unlink(path);
}

MT_TEST(reader_open_errors)
{
	struct mt_bundle_reader *r = (struct mt_bundle_reader *)1;
	char path[256], err[512];
	const struct mt_bundle_map *maps;
	struct mt_bundle_cpu_desc cpu;
	const char *text;
	size_t len;

	MT_ASSERT_EQ(mt_bundle_open(&r, "/nonexistent/b.mtrace", err, sizeof(err)), -ENOENT);
	MT_ASSERT(r == NULL);
	MT_ASSERT_STREQ(err, "/nonexistent/b.mtrace: No such file or directory");
	MT_ASSERT_EQ(mt_bundle_open(&r, "/", err, sizeof(err)), -EINVAL);
	MT_ASSERT_STREQ(err, "/: a directory, not a regular file");
	sample_tmp(path, sizeof(path), "empty");
	MT_ASSERT_EQ(mt_bundle_open(&r, path, err, sizeof(err)), -ENODATA);
	MT_ASSERT(strstr(err, "empty file"));
	unlink(path);
	MT_ASSERT_EQ(mt_bundle_open(NULL, path, NULL, 0), -EINVAL);
	/* NULL handles: counts are 0, getters -EINVAL, close is a no-op. */
	MT_ASSERT_EQ(mt_bundle_section_count(NULL), 0);
	MT_ASSERT_EQ(mt_bundle_maps(NULL, &maps), 0);
	MT_ASSERT(maps == NULL);
	MT_ASSERT_EQ(mt_bundle_get_cpu(NULL, &cpu), -EINVAL);
	MT_ASSERT_EQ(mt_bundle_kallsyms(NULL, &text, &len), -EINVAL);
	MT_ASSERT_STREQ(mt_bundle_reader_errmsg(NULL), "no reader");
	mt_bundle_close(NULL);
}

/* Absent optional sections read as -ENOENT or empty, never as garbage. */
MT_TEST(absent_sections)
{
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct mt_bundle_cpu_desc cpu;
	struct mt_bundle_pt_config_desc cfg;
	struct mt_bundle_trigger trig;
	const struct mt_bundle_clock_entry *anchors;
	const uint8_t *data;
	const char *text;
	size_t n;
	char path[256];

	w = new_writer(path, sizeof(path));
	r = finish_and_open(w, path);
	MT_ASSERT_EQ(mt_bundle_section_count(r), 0);
	MT_ASSERT_EQ(mt_bundle_get_cpu(r, &cpu), -ENOENT);
	MT_ASSERT_EQ(mt_bundle_get_pt_config(r, &cfg), -ENOENT);
	MT_ASSERT_EQ(mt_bundle_get_trigger(r, &trig), -ENOENT);
	MT_ASSERT_EQ(mt_bundle_clock(r, NULL, &anchors, &n), -ENOENT);
	MT_ASSERT_EQ(mt_bundle_kallsyms(r, &text, &n), -ENOENT);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 0, &data, &n), -EINVAL);
	MT_ASSERT_EQ(mt_bundle_file_find(r, NULL, 0, "/bin/true"), -ENOENT);
	MT_ASSERT_EQ(mt_bundle_switch_count(r), 0);
	mt_bundle_close(r);
	unlink(path);
}
