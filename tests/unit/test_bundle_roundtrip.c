// SPDX-License-Identifier: MIT
/* Bundle round trips: every section type written and read back field by field. */
#include "test_bundle_sample.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Writes the sample, opens it from the file and from memory, checks both. */
static void roundtrip(size_t nswitch, size_t pt_random, int no_compression)
{
	struct sample sm;
	struct mt_bundle_reader *r;
	char path[256], src[256], err[512];
	uint8_t *buf;
	size_t len;
	FILE *f;

	sample_init(&sm, nswitch, pt_random);
	sample_tmp(path, sizeof(path), "rt");
	sample_tmp(src, sizeof(src), "src");
	f = fopen(src, "wb");
	MT_ASSERT(f && fwrite("embedded library bytes", 1, 22, f) == 22 && !fclose(f));
	sample_write(&sm, path, no_compression, src);

	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
	sample_check(&sm, r, 1);
	{
		const uint8_t *data;
		struct mt_bundle_file fi;
		int i = mt_bundle_file_find(r, NULL, 0, "/usr/lib/libembedded.so");

		static const uint8_t other_bid[3] = { 1, 2, 3 };

		MT_ASSERT_EQ(i, 1);
		/* A build-id match wins; a path match counts only without contradicting ids. */
		MT_ASSERT_EQ(mt_bundle_file_find(r, sample_bid, sizeof(sample_bid), "/x"), 0);
		MT_ASSERT_EQ(mt_bundle_file_find(r, other_bid, 3, "/usr/lib/libembedded.so"), 1);
		MT_ASSERT_EQ(mt_bundle_file_find(r, other_bid, 3, "/usr/bin/app"), -ENOENT);
		MT_ASSERT_EQ(mt_bundle_file_find(r, NULL, 0, "/usr/bin/app"), 0);
		MT_ASSERT_EQ(mt_bundle_file_find(r, NULL, 0, NULL), -EINVAL);
		MT_ASSERT_EQ(mt_bundle_file_info(r, 1, &fi), 0);
		MT_ASSERT(fi.mtime_ns != 0); /* taken from the source file */
		MT_ASSERT_EQ(mt_bundle_file_data(r, 1, &data, &len), 0);
		MT_ASSERT_EQ(len, 22);
		MT_ASSERT_MEMEQ(data, "embedded library bytes", 22);
	}
	mt_bundle_close(r);

	buf = sample_load(path, &len);
	MT_ASSERT_MSG(mt_bundle_open_mem(&r, buf, len, err, sizeof(err)) == 0, "open_mem: %s", err);
	sample_check(&sm, r, 1);
	mt_bundle_close(r);
	free(buf);
	unlink(path);
	unlink(src);
	sample_fini(&sm);
}

MT_TEST(every_section_compressed)
{
	roundtrip(1000, 100000, 0);
}

MT_TEST(every_section_uncompressed)
{
	roundtrip(1000, 100000, 1);
}

MT_TEST(empty_tables_and_pt)
{
	roundtrip(0, 0, 0);
}

/* Compression is chosen per section: big compressible payloads shrink, tiny ones stay raw. */
MT_TEST(compression_where_it_pays)
{
	struct sample sm;
	struct mt_bundle_reader *r;
	struct mt_bundle_section_info si;
	char path[256], err[512];
	int saw_zstd_switches = 0, saw_raw_maps = 0;

	sample_init(&sm, 5000, 1000);
	sample_tmp(path, sizeof(path), "comp");
	sample_write(&sm, path, 0, NULL);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
	for (size_t i = 0; i < mt_bundle_section_count(r); i++) {
		MT_ASSERT_EQ(mt_bundle_section_info(r, i, &si), 0);
		MT_ASSERT(si.known);
		if (si.type == MT_BUNDLE_SEC_SWITCHES) {
			MT_ASSERT_EQ(si.compression, MT_BUNDLE_COMP_ZSTD);
			MT_ASSERT_MSG(si.stored_size * 4 < si.raw_size, "switches %llu -> %llu",
				      (unsigned long long)si.raw_size,
				      (unsigned long long)si.stored_size);
			saw_zstd_switches++;
		}
		if (si.type == MT_BUNDLE_SEC_MAPS) {
			/* 3 maps: below the size where a zstd frame pays */
			MT_ASSERT_EQ(si.compression, MT_BUNDLE_COMP_NONE);
			saw_raw_maps++;
		}
	}
	MT_ASSERT_EQ(saw_zstd_switches, 2);
	MT_ASSERT_EQ(saw_raw_maps, 1);
	mt_bundle_close(r);
	unlink(path);
	sample_fini(&sm);
}

/* Uncompressed PT is handed out in place: the pointer lies inside the caller's buffer. */
MT_TEST(uncompressed_pt_is_not_copied)
{
	struct sample sm;
	struct mt_bundle_reader *r;
	const uint8_t *data;
	char path[256], err[512];
	uint8_t *buf;
	size_t len, dlen;

	sample_init(&sm, 10, 4096);
	sample_tmp(path, sizeof(path), "inplace");
	sample_write(&sm, path, 1, NULL);
	buf = sample_load(path, &len);
	MT_ASSERT_MSG(mt_bundle_open_mem(&r, buf, len, err, sizeof(err)) == 0, "open: %s", err);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 2, &data, &dlen), 0);
	MT_ASSERT(data > buf && data + dlen <= buf + len);
	MT_ASSERT_MEMEQ(data, sm.random, dlen);
	/* Releasing in-place PT changes nothing. */
	MT_ASSERT_EQ(mt_bundle_pt_release(r, 2), 0);
	MT_ASSERT_MEMEQ(data, sm.random, dlen);
	mt_bundle_close(r);
	free(buf);
	unlink(path);
	sample_fini(&sm);
}

/* A larger bundle: several MiB of PT per CPU stream through the writer and back. */
MT_TEST(large_pt_streams)
{
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct mt_bundle_pt_desc pt = { .cpu = 7, .flags = MT_BUNDLE_PT_WRAPPED };
	const size_t ring = 16u << 20;
	uint8_t *buf = malloc(ring);
	const uint8_t *data;
	char path[256], err[512];
	uint64_t seed = 42;
	size_t len;

	MT_ASSERT(buf);
	/* Half random, half a repeating packet-like pattern: realistic for compression. */
	for (size_t i = 0; i < ring; i++)
		buf[i] = i < ring / 2 ? (uint8_t)sample_rand(&seed) : (uint8_t)(i % 17 < 3 ? 0x02 : i);
	pt.write_offset = ring / 3;
	sample_tmp(path, sizeof(path), "large");
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt_ring(w, &pt, buf, ring), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 0, &data, &len), 0);
	MT_ASSERT_EQ(len, ring);
	MT_ASSERT_MEMEQ(data, buf + ring / 3, ring - ring / 3);
	MT_ASSERT_MEMEQ(data + ring - ring / 3, buf, ring / 3);
	/* Released and fetched again: decompressed anew, same bytes. */
	MT_ASSERT_EQ(mt_bundle_pt_release(r, 0), 0);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 0, &data, &len), 0);
	MT_ASSERT_EQ(len, ring);
	MT_ASSERT_MEMEQ(data + ring - ring / 3, buf, ring / 3);
	MT_ASSERT_EQ(mt_bundle_pt_release(r, 1), -EINVAL);
	mt_bundle_close(r);
	free(buf);
	unlink(path);
}

/* Resident bytes of this process's mappings of the file at PATH. */
static size_t mapped_rss(const char *path)
{
	char real[PATH_MAX], line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/smaps", "r");
	size_t total = 0, kb;
	int ours = 0;

	MT_ASSERT(f && realpath(path, real));
	while (fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/'), *colon = strchr(line, ':');
		char *space = strchr(line, ' ');

		/* A mapping's first line, "start-end perms offset dev:inode path", has
		 * its first colon after a space; its fields' lines before. */
		if (space && colon && colon > space)
			ours = name && !strncmp(name, real, strlen(real)) &&
			       name[strlen(real)] == '\n';
		else if (ours && sscanf(line, "Rss: %zu kB", &kb) == 1)
			total += kb * 1024;
	}
	fclose(f);
	return total;
}

/*
 * Two streams over one payload, one behind the other by a varying amount
 * (each CPU's view of the switch table, a scan beside its decoding), bring
 * none of the file's pages into memory: read through the mapping, a
 * fault of one mapped cached pages around it, some of them behind it,
 * which it had dropped.
 */
MT_TEST(streams_side_by_side_leave_no_pages)
{
	const size_t n = 1u << 20;
	struct mt_bundle_switch_entry *v = malloc(n * sizeof(*v)), step[8192];
	struct mt_bundle_switch_stream *ahead, *behind;
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	char path[256], err[512];
	size_t got_a = 0, got_b = 0, opened;
	uint64_t seed = 3;

	MT_ASSERT(v);
	for (uint32_t i = 0; i < n; i++)
		v[i] = (struct mt_bundle_switch_entry){ .tsc = 1000 * (uint64_t)i +
							      sample_rand(&seed) % 1000,
							.cpu = i % 2, .next_tid = (uint32_t)(i % 5) };
	sample_tmp(path, sizeof(path), "sidebyside");
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_switches(w, v, n), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
	opened = mapped_rss(path);
	MT_ASSERT_EQ(mt_bundle_switch_stream_open(r, &ahead), 0);
	MT_ASSERT_EQ(mt_bundle_switch_stream_open(r, &behind), 0);
	while (got_a < n * 3 / 4) {
		ssize_t k = mt_bundle_switch_stream_read(ahead, step, 1 + sample_rand(&seed) % 8192);

		MT_ASSERT(k > 0);
		got_a += (size_t)k;
		while (got_b + 20000 < got_a) {
			k = mt_bundle_switch_stream_read(behind, step, 1 + sample_rand(&seed) % 4096);
			MT_ASSERT(k > 0);
			MT_ASSERT_MEMEQ(step, v + got_b, (size_t)k * sizeof(*step));
			got_b += (size_t)k;
		}
		MT_ASSERT_MSG(mapped_rss(path) <= opened, "%zu bytes resident, %zu after open",
			      mapped_rss(path), opened);
	}
	mt_bundle_switch_stream_close(ahead);
	mt_bundle_switch_stream_close(behind);
	mt_bundle_close(r);
	free(v);
	unlink(path);
}

/*
 * The file's pages of a payload leave memory behind the checksums at open,
 * and again once it is decompressed (the compressed bytes) or released
 * (uncompressed PT), and the payload reads back the same afterwards.
 */
MT_TEST(payload_pages_leave_memory)
{
	const size_t ring = 4u << 20;
	uint8_t *buf = malloc(ring);
	uint64_t seed = 7;

	MT_ASSERT(buf);
	for (size_t i = 0; i < ring; i++)
		buf[i] = i < ring / 2 ? (uint8_t)sample_rand(&seed) : (uint8_t)(i % 17 < 3 ? 2 : i);
	for (int raw = 0; raw < 2; raw++) {
		struct mt_bundle_writer_opts opts = { .size = sizeof(opts), .no_compression = raw };
		struct mt_bundle_pt_desc pt = { .cpu = 0 };
		struct mt_bundle_writer *w;
		struct mt_bundle_reader *r;
		const uint8_t *data;
		char path[256], err[512];
		size_t len;

		sample_tmp(path, sizeof(path), "pages");
		MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, &opts, err, sizeof(err)), 0);
		MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt, buf, ring), 0);
		MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
		mt_bundle_writer_free(w);
		MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
		/* Read for the checksums, and out of memory behind them. */
		MT_ASSERT_MSG(mapped_rss(path) <= 64 * 1024, "open: %zu bytes still resident",
			      mapped_rss(path));
		MT_ASSERT_EQ(mt_bundle_pt_data(r, 0, &data, &len), 0);
		MT_ASSERT_EQ(len, ring);
		MT_ASSERT_MEMEQ(data, buf, ring);
		if (raw)
			MT_ASSERT_EQ(mt_bundle_pt_release(r, 0), 0);
		MT_ASSERT_MSG(mapped_rss(path) <= 64 * 1024, "%s: %zu bytes still resident",
			      raw ? "released" : "decompressed", mapped_rss(path));
		MT_ASSERT_EQ(mt_bundle_pt_release(r, 0), 0);
		MT_ASSERT_EQ(mt_bundle_pt_data(r, 0, &data, &len), 0);
		MT_ASSERT_EQ(len, ring);
		MT_ASSERT_MEMEQ(data, buf, ring);
		mt_bundle_close(r);
		unlink(path);
	}
	free(buf);
}

/* Every byte of the strings a reader's tables hold, summed (so they are read). */
static unsigned int touch_tables(struct mt_bundle_reader *r)
{
	const struct mt_bundle_map *m;
	const struct mt_bundle_thread *t;
	const struct mt_bundle_module *mod;
	struct mt_bundle_trigger trig;
	struct mt_bundle_file f;
	unsigned int sum = 0;
	size_t n;

	n = mt_bundle_maps(r, &m);
	for (size_t i = 0; i < n; i++) {
		sum += (unsigned int)strlen(m[i].path);
		for (size_t k = 0; k < m[i].build_id_len; k++)
			sum += m[i].build_id[k];
	}
	n = mt_bundle_threads(r, &t);
	for (size_t i = 0; i < n; i++) {
		sum += (unsigned int)strlen(t[i].comm);
		for (size_t k = 0; k < t[i].cmdline_len; k++)
			sum += (unsigned char)t[i].cmdline[k];
	}
	n = mt_bundle_modules(r, &mod);
	for (size_t i = 0; i < n; i++)
		sum += (unsigned int)strlen(mod[i].name);
	MT_ASSERT_EQ(mt_bundle_get_trigger(r, &trig), 0);
	sum += (unsigned int)strlen(trig.spec);
	for (size_t i = 0; i < mt_bundle_file_count(r); i++) {
		MT_ASSERT_EQ(mt_bundle_file_info(r, i, &f), 0);
		for (size_t k = 0; k < f.build_id_len; k++)
			sum += f.build_id[k];
	}
	MT_ASSERT_EQ(mt_bundle_file_find(r, sample_bid, sizeof(sample_bid), NULL), 0);
	return sum;
}

/*
 * After open, nothing but a payload's own reading maps the file: not the
 * pages the checksums leave at each section's edges, and not the tables'
 * strings, stored in place or not. A fault on either may map a whole large
 * folio of the page cache (2 MiB of a 1 GiB snapshot on a 6.18 kernel).
 */
MT_TEST(tables_and_edges_leave_no_file_pages)
{
	struct sample sm;

	sample_init(&sm, 1000, 3u << 20);
	for (int raw = 0; raw < 2; raw++) {
		struct mt_bundle_reader *r;
		char path[256], err[512];
		unsigned int first;

		sample_tmp(path, sizeof(path), "edges");
		sample_write(&sm, path, raw, NULL);
		MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
		MT_ASSERT_MSG(mapped_rss(path) == 0, "%s: open left %zu bytes resident",
			      raw ? "uncompressed" : "compressed", mapped_rss(path));
		first = touch_tables(r);
		MT_ASSERT_MSG(mapped_rss(path) == 0, "%s: the tables brought %zu bytes back",
			      raw ? "uncompressed" : "compressed", mapped_rss(path));
		MT_ASSERT_EQ(touch_tables(r), first);
		sample_check(&sm, r, 0);
		mt_bundle_close(r);
		unlink(path);
	}
	sample_fini(&sm);
}

/* A bundle cut short after open (rewritten in place, say) leaves the
 * tables readable: used in place, their strings took SIGBUS. */
MT_TEST(tables_outlive_a_shrunk_file)
{
	struct mt_bundle_reader *r;
	char path[256], err[512];
	struct sample sm;
	unsigned int before;

	sample_init(&sm, 10, 4096);
	sample_tmp(path, sizeof(path), "shrunk-tables");
	sample_write(&sm, path, 1, NULL);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
	before = touch_tables(r);
	MT_ASSERT_EQ(truncate(path, 0), 0);
	MT_ASSERT_EQ(touch_tables(r), before);
	mt_bundle_close(r);
	unlink(path);
	sample_fini(&sm);
}

/* Zero padding compresses beyond the one-shot ratio: the growing decoder handles it. */
/* A PT payload, compressed or not: its writer's options (RAW: stored as is). */
static void write_pt_bundle(const char *path, const uint8_t *buf, size_t len, int raw)
{
	struct mt_bundle_writer_opts opts = { .size = sizeof(opts), .no_compression = raw };
	struct mt_bundle_pt_desc pt = { .cpu = 0 };
	struct mt_bundle_writer *w;
	char err[512];

	MT_ASSERT_MSG(mt_bundle_writer_create(&w, path, &opts, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt, buf, len), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
}

static uint8_t *pt_like(size_t len)
{
	uint8_t *buf = malloc(len);
	uint64_t seed = 11;

	MT_ASSERT(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = i % 3 ? (uint8_t)sample_rand(&seed) : (uint8_t)(i % 17 < 3 ? 2 : i);
	return buf;
}

/*
 * A PT stream read by two readers, one ahead of the other (a stream's scan
 * beside its decoding), reads every byte right and maps none of the
 * file's pages, compressed or not.
 */
MT_TEST(pt_streams_map_no_file_pages)
{
	const size_t len = 6u << 20, lead = 1u << 20;
	uint8_t *buf = pt_like(len), *a = malloc(65536), *b = malloc(len);

	MT_ASSERT(a && b);
	for (int raw = 0; raw < 2; raw++) {
		struct mt_bundle_stream *ahead, *behind;
		struct mt_bundle_reader *r;
		size_t got_a = 0, got_b = 0, opened;
		char path[256], err[512];
		ssize_t k;

		sample_tmp(path, sizeof(path), "ptpages");
		write_pt_bundle(path, buf, len, raw);
		MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
		opened = mapped_rss(path);
		MT_ASSERT_EQ(mt_bundle_pt_stream_open(r, 0, &ahead), 0);
		MT_ASSERT_EQ(mt_bundle_pt_stream_open(r, 0, &behind), 0);
		while (got_b < len) {
			while (got_a < got_b + lead && got_a < len) {
				k = mt_bundle_stream_read(ahead, a, 65536);
				MT_ASSERT(k > 0);
				MT_ASSERT_MEMEQ(a, buf + got_a, (size_t)k);
				got_a += (size_t)k;
			}
			k = mt_bundle_stream_read(behind, b + got_b, 300000);
			MT_ASSERT(k > 0);
			got_b += (size_t)k;
			MT_ASSERT_MSG(mapped_rss(path) <= opened, "%s: %zu bytes resident, %zu after open",
				      raw ? "stored" : "zstd", mapped_rss(path), opened);
		}
		MT_ASSERT_MEMEQ(b, buf, len);
		MT_ASSERT_EQ(mt_bundle_stream_read(behind, b, 1), 0);
		mt_bundle_stream_close(ahead);
		mt_bundle_stream_close(behind);
		mt_bundle_close(r);
		unlink(path);
	}
	free(a);
	free(b);
	free(buf);
}

/* A bundle cut short after it was opened: a stream says so, and neither
 * crashes (a read through the mapping would take SIGBUS) nor ends early. */
MT_TEST(pt_stream_of_a_shrunk_file_fails)
{
	const size_t len = 4u << 20;
	uint8_t *buf = pt_like(len), *out = malloc(len);

	MT_ASSERT(out);
	for (int raw = 0; raw < 2; raw++) {
		struct mt_bundle_stream *st;
		struct mt_bundle_reader *r;
		char path[256], err[512];
		ssize_t k = 0;

		sample_tmp(path, sizeof(path), "shrunk");
		write_pt_bundle(path, buf, len, raw);
		MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
		MT_ASSERT_EQ(mt_bundle_pt_stream_open(r, 0, &st), 0);
		MT_ASSERT_EQ(truncate(path, 1u << 20), 0);
		while ((k = mt_bundle_stream_read(st, out, 1u << 20)) > 0)
			;
		MT_ASSERT_EQ(k, -EIO);
		MT_ASSERT_MSG(strstr(mt_bundle_stream_errmsg(st), "shorter than when it was opened"),
			      "%s", mt_bundle_stream_errmsg(st));
		mt_bundle_stream_close(st);
		mt_bundle_close(r);
		unlink(path);
	}
	free(out);
	free(buf);
}

MT_TEST(extreme_compression_ratio)
{
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	struct mt_bundle_ktext kt = { 0xffffffffc0000000, "[zeros]", 0 };
	struct mt_bundle_section_info si;
	const size_t len = 24u << 20;
	uint8_t *zeros = calloc(1, len);
	const uint8_t *data;
	char path[256], err[512];
	size_t got;

	MT_ASSERT(zeros);
	zeros[len - 1] = 0xcc;
	sample_tmp(path, sizeof(path), "zeros");
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_ktext(w, &kt, zeros, len), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
	MT_ASSERT_EQ(mt_bundle_section_info(r, 0, &si), 0);
	MT_ASSERT_MSG(si.raw_size > 1000 * si.stored_size, "ratio only %llu/%llu",
		      (unsigned long long)si.raw_size, (unsigned long long)si.stored_size);
	MT_ASSERT_EQ(mt_bundle_ktext_data(r, 0, &data, &got), 0);
	MT_ASSERT_EQ(got, len);
	MT_ASSERT_MEMEQ(data, zeros, len);
	mt_bundle_close(r);
	free(zeros);
	unlink(path);
}

struct fetcher {
	struct mt_bundle_reader *r;
	const uint8_t *data[3];
	size_t len[3];
	int rc;
};

static void *fetch_all(void *arg)
{
	struct fetcher *f = arg;

	for (size_t i = 0; i < 3 && !f->rc; i++)
		f->rc = mt_bundle_pt_data(f->r, i, &f->data[i], &f->len[i]);
	return NULL;
}

/* Decoder threads share one reader: each compressed payload is decompressed once. */
MT_TEST(threads_share_a_reader)
{
	struct sample sm;
	struct mt_bundle_reader *r;
	struct fetcher f[4];
	pthread_t th[4];
	char path[256], err[512];

	sample_init(&sm, 10, 1 << 20);
	sample_tmp(path, sizeof(path), "threads");
	sample_write(&sm, path, 0, NULL);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
	for (int t = 0; t < 4; t++) {
		f[t] = (struct fetcher){ .r = r };
		MT_ASSERT_EQ(pthread_create(&th[t], NULL, fetch_all, &f[t]), 0);
	}
	for (int t = 0; t < 4; t++)
		MT_ASSERT_EQ(pthread_join(th[t], NULL), 0);
	for (int t = 0; t < 4; t++) {
		MT_ASSERT_EQ(f[t].rc, 0);
		for (int i = 0; i < 3; i++)
			MT_ASSERT(f[t].data[i] == f[0].data[i] && f[t].len[i] == f[0].len[i]);
	}
	MT_ASSERT_EQ(f[0].len[2], sm.pt_random);
	MT_ASSERT_MEMEQ(f[0].data[2], sm.random, sm.pt_random);
	mt_bundle_close(r);
	unlink(path);
	sample_fini(&sm);
}

MT_TEST(print_info_lists_sections)
{
	struct sample sm;
	char path[256], err[512] = "", *text = NULL;
	size_t tlen = 0;
	FILE *out;

	sample_init(&sm, 3, 100);
	sample_tmp(path, sizeof(path), "info");
	sample_write(&sm, path, 0, NULL);
	out = open_memstream(&text, &tlen);
	MT_ASSERT(out);
	MT_ASSERT_EQ(mt_bundle_print_info(path, out, NULL, 0), 0);
	fclose(out);
	MT_ASSERT_MSG(strstr(text, "format 1.0, 15 sections"), "%s", text);
	MT_ASSERT_MSG(strstr(text, "pt-data"), "%s", text);
	MT_ASSERT_MSG(strstr(text, "pt cpu 0: 8192 bytes, wrapped"), "%s", text);
	MT_ASSERT_MSG(strstr(text, "uprobe:/usr/bin/app:handle_request"), "%s", text);
	MT_ASSERT_MSG(strstr(text, "records: 6 switches, 3 maps, 2 threads, 2 modules, 1 file, 1 kernel text range\n"),
		      "%s", text);
	free(text);
	unlink(path);
	/* The library prints nothing of its own: the error is the caller's to show. */
	out = open_memstream(&text, &tlen);
	MT_ASSERT(out);
	MT_ASSERT_EQ(mt_bundle_print_info(path, out, err, sizeof(err)), -ENOENT);
	fclose(out);
	MT_ASSERT_EQ(tlen, 0);
	MT_ASSERT_MSG(strstr(err, path) && strstr(err, "No such file"), "%s", err);
	free(text);
	sample_fini(&sm);
}

/* A bundle's strings are shown, not obeyed: a trigger spec or vendor with
 * escapes would otherwise drive the terminal bundle-info prints to. */
MT_TEST(print_info_shows_controls_escaped)
{
	struct mt_bundle_writer_opts opts = { .size = sizeof(opts) };
	struct mt_bundle_cpu_desc cpu = sample_cpu();
	struct mt_bundle_pt_config_desc cfg = sample_cfg();
	struct mt_bundle_trigger trig = sample_trigger();
	struct mt_bundle_writer *w;
	char path[256], err[256], *text = NULL;
	size_t tlen = 0;
	FILE *out;

	memcpy(cpu.vendor_id, "Genu\x1b[2JIntel", sizeof("Genu\x1b[2JIntel"));
	trig.spec = "uprobe:/x\x1b]0;owned\x07:f";
	sample_tmp(path, sizeof(path), "controls");
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, &opts, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt_config(w, &cfg), 0);
	MT_ASSERT_EQ(mt_bundle_write_trigger(w, &trig), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	out = open_memstream(&text, &tlen);
	MT_ASSERT(out);
	MT_ASSERT_EQ(mt_bundle_print_info(path, out, err, sizeof(err)), 0);
	fclose(out);
	MT_ASSERT_MSG(!memchr(text, 0x1b, tlen) && !memchr(text, 0x07, tlen), "%s", text);
	MT_ASSERT_MSG(strstr(text, "cpu: Genu\\x1b[2JIntel family 6"), "%s", text);
	MT_ASSERT_MSG(strstr(text, "trigger: \"uprobe:/x\\x1b]0;owned\\x07:f\" cpu 1"), "%s", text);
	free(text);
	unlink(path);
}

/* This process's resident anonymous memory, in bytes. */
static size_t anon_rss(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	size_t kb = 0;

	MT_ASSERT(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %zu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/* Listing a bundle reads each PT stream through for its length, holding
 * none of it (it used to keep every stream decompressed). */
MT_TEST(print_info_holds_no_pt)
{
	const size_t ring = 8u << 20;
	uint8_t *buf = malloc(ring);
	uint64_t seed = 11;
	struct mt_bundle_pt_desc pt = { .cpu = 0 };
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	char path[256], err[512], *text = NULL;
	size_t tlen = 0, before;
	FILE *out;

	MT_ASSERT(buf);
	for (size_t i = 0; i < ring; i++)
		buf[i] = (uint8_t)sample_rand(&seed);
	sample_tmp(path, sizeof(path), "infomem");
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, NULL, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt, buf, ring), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	free(buf);
	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "open: %s", err);
	out = open_memstream(&text, &tlen);
	MT_ASSERT(out);
	before = anon_rss();
	mt_bundle_print_info_of(r, path, out);
	MT_ASSERT_MSG(anon_rss() < before + ring / 4, "%zu bytes more resident after listing",
		      anon_rss() - before);
	fclose(out);
	MT_ASSERT_MSG(strstr(text, "pt cpu 0: 8388608 bytes"), "%s", text);
	free(text);
	mt_bundle_close(r);
	unlink(path);
}
