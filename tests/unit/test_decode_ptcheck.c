// SPDX-License-Identifier: MIT
/*
 * The decoder reads every PT stream through when it opens (ptcheck.c), on
 * up to its jobs' threads at once: the lengths must be the streams', and a
 * bundle with damaged streams must give the same error whatever the jobs,
 * the first damaged stream's, as a reading in order gives. A stream that
 * fails when decoding reads it again fails the run with its own error.
 */
#include "../lib/mt_test.h"
#include "test_bundle_sample.h"

#include "decode/decode.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define STREAMS 6

/* Stream I: compressible bytes (zstd keeps them in compressed blocks),
 * each stream its own length. */
static size_t stream_len(size_t i)
{
	return 20000 + i * 7001;
}

static void write_streams(const char *path)
{
	struct mt_bundle_cpu_desc cpu = sample_cpu();
	struct mt_bundle_pt_config_desc cfg = sample_cfg();
	struct mt_bundle_writer *w;
	char err[256];

	cfg.cr3_match = 0;
	memset(cfg.addr, 0, sizeof(cfg.addr));
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt_config(w, &cfg), 0);
	for (size_t i = 0; i < STREAMS; i++) {
		struct mt_bundle_pt_desc pt = { .cpu = (uint32_t)i, .stop_tsc = 1000 };
		size_t len = stream_len(i);
		uint8_t *data = malloc(len);

		MT_ASSERT(data);
		for (size_t k = 0; k < len; k++)
			data[k] = (uint8_t)(k % 97 + i);
		MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt, data, len), 0);
		free(data);
	}
	MT_ASSERT_MSG(mt_bundle_writer_finish(w) == 0, "%s", mt_bundle_writer_errmsg(w));
	mt_bundle_writer_free(w);
}

/* Opens the decoder on PATH with JOBS; its error (empty when it opened)
 * and, when it opened, the PT bytes it found. */
static int open_with(const char *path, unsigned int jobs, char *err, size_t errlen,
		     uint64_t *pt_bytes)
{
	struct mt_decode_opts o = { .jobs = jobs };
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	int rc;

	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, errlen) == 0, "%s", err);
	err[0] = 0;
	rc = mt_decode_open(&d, r, &o, err, errlen);
	if (!rc) {
		*pt_bytes = mt_decode_get_stats(d)->pt_bytes;
		mt_decode_free(d);
	}
	mt_bundle_close(r);
	return rc;
}

/* Makes PT stream I's section declare DELTA more bytes than its frame holds. */
static void lie_about_size(uint8_t *buf, size_t len, size_t i, int64_t delta)
{
	uint64_t off[64];
	size_t n = sample_offsets(buf, len, off, 64), seen = 0;

	for (size_t s = 0; s < n; s++) {
		struct mt_bundle_shdr h;

		memcpy(&h, buf + off[s], sizeof(h));
		if (h.type != MT_BUNDLE_SEC_PT_DATA || seen++ != i)
			continue;
		MT_ASSERT_EQ(h.compression, MT_BUNDLE_COMP_ZSTD);
		h.raw_size += (uint64_t)delta;
		memcpy(buf + off[s], &h, sizeof(h));
		sample_fix_crc(buf, len, off[s]);
		return;
	}
	mt_fail(__FILE__, __LINE__, "no PT stream %zu", i);
}

MT_TEST(streams_read_on_several_threads_give_their_lengths)
{
	static const unsigned int jobs[] = { 1, 2, 4, 16 };
	uint64_t want = 0, got;
	char path[256], err[512];

	for (size_t i = 0; i < STREAMS; i++)
		want += stream_len(i);
	sample_tmp(path, sizeof(path), "ptcheck");
	write_streams(path);
	for (size_t j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
		got = 0;
		MT_ASSERT_MSG(open_with(path, jobs[j], err, sizeof(err), &got) == 0, "%u jobs: %s",
			      jobs[j], err);
		MT_ASSERT_EQ(got, want);
	}
	unlink(path);
}

/* Streams 4 and 1 damaged (4 the other way): the error is stream 1's with
 * any number of jobs, though with several stream 4 may fail first. */
MT_TEST(the_first_damaged_stream_is_reported_whatever_the_jobs)
{
	static const unsigned int jobs[] = { 1, 2, 3, 6, 16 };
	char path[256], err[512], first[512];
	uint64_t unused;
	uint8_t *buf;
	size_t len;
	FILE *f;

	sample_tmp(path, sizeof(path), "ptcheck");
	write_streams(path);
	buf = sample_load(path, &len);
	lie_about_size(buf, len, 4, -1);
	lie_about_size(buf, len, 1, 1);
	f = fopen(path, "wb");
	MT_ASSERT(f && fwrite(buf, 1, len, f) == len && !fclose(f));
	free(buf);
	MT_ASSERT_EQ(open_with(path, 1, first, sizeof(first), &unused), -EBADMSG);
	MT_ASSERT_MSG(strstr(first, "PT data of stream 1: ") &&
			      strstr(first, "zstd payload holds fewer bytes than the section declares"),
		      "%s", first);
	for (int round = 0; round < 20; round++) {
		for (size_t j = 1; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
			MT_ASSERT_EQ(open_with(path, jobs[j], err, sizeof(err), &unused), -EBADMSG);
			MT_ASSERT_MSG(!strcmp(err, first), "%u jobs: '%s', one job: '%s'", jobs[j],
				      err, first);
		}
	}
	unlink(path);
}

static int no_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	(void)ctx;
	(void)pid;
	(void)tid;
	(void)ns;
	(void)ev;
	return 0;
}

/* A stream that cannot be read again once decoding starts (the file cut
 * short after the open-time read): the run fails with that stream's errno
 * and says why in one line, the first such stream's (the run once turned
 * it into -ENOMEM with no message at all). */
MT_TEST(a_stream_unreadable_while_decoding_is_reported)
{
	static const unsigned int jobs[] = { 1, 2, 6 };
	char path[256], err[512];

	for (size_t j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
		struct mt_decode_opts o = { .jobs = jobs[j] };
		struct mt_decode_sink sink = { .event = no_event, .late_inferred = 1 };
		struct mt_bundle_reader *r;
		struct mt_decode *d;
		uint64_t off[64];
		uint8_t *buf;
		size_t len, n, pt = 0;

		sample_tmp(path, sizeof(path), "ptcheck");
		write_streams(path);
		buf = sample_load(path, &len);
		n = sample_offsets(buf, len, off, 64);
		MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
		MT_ASSERT_MSG(mt_decode_open(&d, r, &o, err, sizeof(err)) == 0, "%s", err);
		/* Cut inside the third stream's payload. */
		for (size_t s = 0; s < n; s++) {
			struct mt_bundle_shdr h;

			memcpy(&h, buf + off[s], sizeof(h));
			if (h.type == MT_BUNDLE_SEC_PT_DATA && pt++ == 2) {
				MT_ASSERT_EQ(truncate(path, (off_t)(off[s] + h.shdr_size + h.desc_size + 10)), 0);
				break;
			}
		}
		MT_ASSERT_EQ(pt, 3);
		MT_ASSERT_EQ(mt_decode_run(d, &sink), -EIO);
		MT_ASSERT_MSG(strstr(mt_decode_error(d), "PT data of stream 2: ") &&
				      strstr(mt_decode_error(d), "the file is shorter than when it was opened"),
			      "%u jobs: '%s'", jobs[j], mt_decode_error(d));
		mt_decode_free(d);
		mt_bundle_close(r);
		free(buf);
		unlink(path);
	}
}
