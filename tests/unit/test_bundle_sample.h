/* SPDX-License-Identifier: MIT */
/*
 * A sample bundle holding every section type, shared by the bundle tests:
 * sample_write() writes it, sample_check() verifies a reader against it
 * field by field, and the file helpers load or patch bundle bytes.
 */
#ifndef MTRACE_TEST_BUNDLE_SAMPLE_H
#define MTRACE_TEST_BUNDLE_SAMPLE_H

#include "bundle/bundle.h"
#include "mt_test.h"
#include "test_bundle_seal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define SAMPLE_RING 8192
#define SAMPLE_WOFF 3000

struct sample {
	size_t nswitch;                 /* per switch section; two are written */
	size_t pt_random;               /* bytes of incompressible PT on cpu 2 */
	uint8_t ring[SAMPLE_RING];
	uint8_t *random;
	uint8_t file_bytes[5000];
	uint8_t ktext[3000];
};

static const uint8_t sample_bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const char sample_cmdline[] = "app\0--flag\0x"; /* 13 bytes with the inner NULs */
static const char sample_kallsyms[] = "ffffffff81000000 T _stext\nffffffff81000100 T do_thing\n";

/* Deterministic bytes: a small xorshift generator (tests must repeat exactly). */
static inline uint64_t sample_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline void sample_init(struct sample *sm, size_t nswitch, size_t pt_random)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	memset(sm, 0, sizeof(*sm));
	sm->nswitch = nswitch;
	sm->pt_random = pt_random;
	for (size_t i = 0; i < SAMPLE_RING; i++)
		sm->ring[i] = (uint8_t)(i * 7 + i / 256);
	sm->random = malloc(pt_random ? pt_random : 1);
	MT_ASSERT(sm->random);
	for (size_t i = 0; i < pt_random; i++)
		sm->random[i] = (uint8_t)sample_rand(&seed);
	for (size_t i = 0; i < sizeof(sm->file_bytes); i++)
		sm->file_bytes[i] = (uint8_t)(i % 251);
	for (size_t i = 0; i < sizeof(sm->ktext); i++)
		sm->ktext[i] = (uint8_t)(0x90 + i % 3);
}

static inline void sample_fini(struct sample *sm)
{
	free(sm->random);
	sm->random = NULL;
}

static inline struct mt_bundle_switch_entry sample_switch(size_t sec, size_t i)
{
	return (struct mt_bundle_switch_entry){
		.tsc = 1000000 + sec * 100000 + i * 10, .cpu = (uint32_t)(i % 4),
		.prev_pid = 100, .prev_tid = (uint32_t)(100 + i % 3),
		.next_pid = 200, .next_tid = (uint32_t)(200 + i % 5),
		.flags = (uint32_t)(i & 1),
	};
}

static inline void sample_maps(struct mt_bundle_map m[3])
{
	m[0] = (struct mt_bundle_map){ 10, 0x400000, 0x401000, 0x1000, 100, MT_BUNDLE_PROT_READ |
				       MT_BUNDLE_PROT_EXEC, MT_BUNDLE_MAP_PRESENT, "/usr/bin/app",
				       sample_bid, sizeof(sample_bid) };
	m[1] = (struct mt_bundle_map){ 20, 0x7f0000000000, 0x7f0000002000, 0, 100,
				       MT_BUNDLE_PROT_READ | MT_BUNDLE_PROT_WRITE,
				       MT_BUNDLE_MAP_MMAP, "", NULL, 0 };
	m[2] = (struct mt_bundle_map){ 30, 0x7fff0000, 0x7fff2000, 0, 100, MT_BUNDLE_PROT_EXEC,
				       MT_BUNDLE_MAP_MUNMAP, "[vdso]", NULL, 0 };
}

static inline struct mt_bundle_cpu_desc sample_cpu(void)
{
	struct mt_bundle_cpu_desc c = {
		.vendor = MT_BUNDLE_VENDOR_INTEL, .family = 6, .model = 0x8c, .stepping = 1,
		.nr_cpus = 4,
		.cpuid_14_0 = { 1, 0x5f, 0x80000007, 0 },
		.cpuid_14_1 = { 0x249a0003, 0x003f3fff, 0, 0 },
		.cpuid_15 = { 2, 188, 38400000, 0 },
		.max_nonturbo_ratio = 28, .nominal_freq_hz = 2800000000ULL,
		.vendor_id = "GenuineIntel",
	};
	return c;
}

static inline struct mt_bundle_pt_config_desc sample_cfg(void)
{
	struct mt_bundle_pt_config_desc c = {
		.flags = MT_BUNDLE_CFG_GENERATED,
		.rtit_ctl = MT_RTIT_CTL_TRACEEN | MT_RTIT_CTL_USER | MT_RTIT_CTL_TOPA |
			    MT_RTIT_CTL_MTCEN | MT_RTIT_CTL_TSCEN | MT_RTIT_CTL_BRANCHEN |
			    (3ULL << 14) | (1ULL << 24) | (1ULL << 32),
		.cr3_match = 0x12345000,
		.addr = { { 0x400000, 0x4fffff } },
		.ring_size = SAMPLE_RING, .target_pid = 100,
	};
	return c;
}

static inline struct mt_bundle_trigger sample_trigger(void)
{
	struct mt_bundle_trigger t = {
		.d = { .reason = MT_BUNDLE_REASON_UPROBE, .freeze_path = MT_BUNDLE_FREEZE_KFUNC,
		       .cpu = 1, .pid = 100, .tid = 101, .tsc = 123456789, .ip = 0x401234,
		       .freeze_tsc = 123457000, .skid_ns = 75 },
		.spec = "uprobe:/usr/bin/app:handle_request",
	};
	return t;
}

/* Writes the sample; embed_src (may be NULL) is a file on disk to embed with mt_bundle_embed_file. */
static inline void sample_write(struct sample *sm, const char *path, int no_compression,
				const char *embed_src)
{
	struct mt_bundle_writer_opts opts = { .size = sizeof(opts),
						.no_compression = no_compression };
	struct mt_bundle_writer *w;
	struct mt_bundle_cpu_desc cpu = sample_cpu();
	struct mt_bundle_pt_config_desc cfg = sample_cfg();
	struct mt_bundle_trigger trig = sample_trigger();
	struct mt_bundle_pt_desc pt = { 0 };
	struct mt_bundle_switch_entry *sw;
	struct mt_bundle_map maps[3];
	struct mt_bundle_thread threads[2] = {
		{ 5, 100, 100, "app", sample_cmdline, sizeof(sample_cmdline) },
		{ 6, 100, 101, "worker-1", NULL, 0 },
	};
	struct mt_bundle_module mods[2] = {
		{ 0xffffffffc0000000, 0xffffffffc0010000, "mtrace" },
		{ 0xffffffffc0020000, 0xffffffffc0021000, "[bpf]" },
	};
	struct mt_bundle_clock_desc cd = { .tsc_hz = 2800000000ULL, .time_zero = 7,
					   .time_mult = 123, .time_shift = 10 };
	struct mt_bundle_clock_entry anchors[2] = { { 1000, 2000, 3000, 4000 },
						    { 5000, 6000, 7000, 8000 } };
	struct mt_bundle_file f = { "/usr/bin/app", sample_bid, sizeof(sample_bid), 42, 0 };
	struct mt_bundle_file f2 = { "/usr/lib/libembedded.so", NULL, 0, 0, 0 };
	struct mt_bundle_ktext kt = { 0xffffffff81000000, "kernel", 0 };
	char err[256];

	sample_maps(maps);
	MT_ASSERT_EQ(mt_bundle_writer_create(&w, path, &opts, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt_config(w, &cfg), 0);
	pt = (struct mt_bundle_pt_desc){ .cpu = 0, .flags = MT_BUNDLE_PT_WRAPPED, .stop_tsc = 111,
					 .rtit_status = 0x20, .write_offset = SAMPLE_WOFF };
	MT_ASSERT_EQ(mt_bundle_write_pt_ring(w, &pt, sm->ring, SAMPLE_RING), 0);
	pt = (struct mt_bundle_pt_desc){ .cpu = 1, .flags = MT_BUNDLE_PT_CLOBBERED,
					 .stop_tsc = 222, .write_offset = SAMPLE_WOFF };
	MT_ASSERT_EQ(mt_bundle_write_pt_ring(w, &pt, sm->ring, SAMPLE_RING), 0);
	pt = (struct mt_bundle_pt_desc){ .cpu = 2, .flags = MT_BUNDLE_PT_PARTIAL, .stop_tsc = 333,
					 .write_offset = sm->pt_random };
	MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt, sm->random, sm->pt_random), 0);
	MT_ASSERT_EQ(mt_bundle_write_trigger(w, &trig), 0);
	sw = malloc((sm->nswitch ? sm->nswitch : 1) * sizeof(*sw));
	MT_ASSERT(sw);
	for (size_t s = 0; s < 2; s++) {
		for (size_t i = 0; i < sm->nswitch; i++)
			sw[i] = sample_switch(s, i);
		MT_ASSERT_EQ(mt_bundle_write_switches(w, sw, sm->nswitch), 0);
	}
	free(sw);
	MT_ASSERT_EQ(mt_bundle_write_maps(w, maps, 3), 0);
	MT_ASSERT_EQ(mt_bundle_write_threads(w, threads, 2), 0);
	MT_ASSERT_EQ(mt_bundle_write_clock(w, &cd, anchors, 2), 0);
	MT_ASSERT_EQ(mt_bundle_write_file(w, &f, sm->file_bytes, sizeof(sm->file_bytes)), 0);
	if (embed_src)
		MT_ASSERT_EQ(mt_bundle_embed_file(w, &f2, embed_src), 0);
	MT_ASSERT_EQ(mt_bundle_write_ktext(w, &kt, sm->ktext, sizeof(sm->ktext)), 0);
	MT_ASSERT_EQ(mt_bundle_write_kallsyms(w, sample_kallsyms, strlen(sample_kallsyms)), 0);
	MT_ASSERT_EQ(mt_bundle_write_modules(w, mods, 2), 0);
	MT_ASSERT_MSG(mt_bundle_writer_finish(w) == 0, "finish: %s", mt_bundle_writer_errmsg(w));
	mt_bundle_writer_free(w);
}

/* A temporary file name; the caller unlinks it. */
static inline void sample_tmp(char *path, size_t len, const char *tag)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, len, "%s/mtrace-%s-XXXXXX", dir ? dir : "/tmp", tag);
	fd = mkstemp(path);
	MT_ASSERT(fd >= 0);
	close(fd);
}

static inline uint8_t *sample_load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	MT_ASSERT(f && !fstat(fileno(f), &st));
	*len = (size_t)st.st_size;
	buf = malloc(*len ? *len : 1);
	MT_ASSERT(buf && fread(buf, 1, *len, f) == *len);
	fclose(f);
	return buf;
}

/* Offsets of the file's sections (END included), walked independently of the library. */
static inline size_t sample_offsets(const uint8_t *buf, size_t len, uint64_t *off, size_t max)
{
	struct mt_bundle_file_header fh;
	uint64_t o;
	size_t n = 0;

	memcpy(&fh, buf, sizeof(fh));
	for (o = fh.header_size; o + sizeof(struct mt_bundle_shdr) <= len && n < max; n++) {
		struct mt_bundle_shdr h;

		memcpy(&h, buf + o, sizeof(h));
		off[n] = o;
		o += h.shdr_size + h.desc_size + h.stored_size;
	}
	MT_ASSERT_EQ(o, len);
	return n;
}

/* Checks every record of the sample against what the reader returns. */
static inline void sample_check(struct sample *sm, struct mt_bundle_reader *r, int embedded)
{
	struct mt_bundle_cpu_desc cpu, ecpu = sample_cpu();
	struct mt_bundle_pt_config_desc cfg, ecfg = sample_cfg();
	struct mt_bundle_trigger trig, etrig = sample_trigger();
	struct mt_bundle_pt_desc pt;
	const struct mt_bundle_switch_entry *sw;
	const struct mt_bundle_map *maps;
	const struct mt_bundle_thread *th;
	const struct mt_bundle_module *mods;
	const struct mt_bundle_clock_entry *anchors;
	struct mt_bundle_clock_desc cd;
	struct mt_bundle_map em[3];
	struct mt_bundle_file f;
	struct mt_bundle_ktext kt;
	const uint8_t *data;
	const char *text;
	size_t len, n;

	MT_ASSERT_EQ(mt_bundle_get_cpu(r, &cpu), 0);
	ecpu.size = sizeof(ecpu);
	MT_ASSERT_MEMEQ(&cpu, &ecpu, sizeof(cpu));
	MT_ASSERT_EQ(mt_bundle_get_pt_config(r, &cfg), 0);
	ecfg.size = sizeof(ecfg);
	MT_ASSERT_MEMEQ(&cfg, &ecfg, sizeof(cfg));
	MT_ASSERT_EQ(MT_RTIT_CTL_MTC_FREQ(cfg.rtit_ctl), 3);
	MT_ASSERT_EQ(MT_RTIT_CTL_PSB_FREQ(cfg.rtit_ctl), 1);
	MT_ASSERT_EQ(MT_RTIT_CTL_ADDR_CFG(cfg.rtit_ctl, 0), 1);

	MT_ASSERT_EQ(mt_bundle_pt_count(r), 3);
	MT_ASSERT_EQ(mt_bundle_pt_desc(r, 0, &pt), 0);
	MT_ASSERT_EQ(pt.cpu, 0);
	MT_ASSERT_EQ(pt.flags, MT_BUNDLE_PT_WRAPPED);
	MT_ASSERT_EQ(pt.stop_tsc, 111);
	MT_ASSERT_EQ(pt.rtit_status, 0x20);
	MT_ASSERT_EQ(pt.write_offset, SAMPLE_WOFF);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 0, &data, &len), 0);
	MT_ASSERT_EQ(len, SAMPLE_RING);
	MT_ASSERT_MEMEQ(data, sm->ring + SAMPLE_WOFF, SAMPLE_RING - SAMPLE_WOFF);
	MT_ASSERT_MEMEQ(data + SAMPLE_RING - SAMPLE_WOFF, sm->ring, SAMPLE_WOFF);
	MT_ASSERT_EQ(mt_bundle_pt_desc(r, 1, &pt), 0);
	MT_ASSERT_EQ(pt.cpu, 1);
	MT_ASSERT_EQ(pt.flags, MT_BUNDLE_PT_CLOBBERED);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 1, &data, &len), 0);
	MT_ASSERT_EQ(len, SAMPLE_WOFF);
	MT_ASSERT_MEMEQ(data, sm->ring, SAMPLE_WOFF);
	MT_ASSERT_EQ(mt_bundle_pt_desc(r, 2, &pt), 0);
	MT_ASSERT_EQ(pt.cpu, 2);
	MT_ASSERT_EQ(pt.stop_tsc, 333);
	MT_ASSERT_EQ(mt_bundle_pt_data(r, 2, &data, &len), 0);
	MT_ASSERT_EQ(len, sm->pt_random);
	MT_ASSERT_MEMEQ(data, sm->random, sm->pt_random);

	MT_ASSERT_EQ(mt_bundle_get_trigger(r, &trig), 0);
	etrig.d.size = sizeof(etrig.d);
	MT_ASSERT_MEMEQ(&trig.d, &etrig.d, sizeof(trig.d));
	MT_ASSERT_STREQ(trig.spec, etrig.spec);

	MT_ASSERT_EQ(mt_bundle_switches(r, &sw, &n), 0);
	MT_ASSERT_EQ(n, 2 * sm->nswitch);
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < sm->nswitch; i++) {
			struct mt_bundle_switch_entry e = sample_switch(s, i);

			MT_ASSERT_MEMEQ(&sw[s * sm->nswitch + i], &e, sizeof(e));
		}

	sample_maps(em);
	MT_ASSERT_EQ(mt_bundle_maps(r, &maps), 3);
	for (size_t i = 0; i < 3; i++) {
		MT_ASSERT_EQ(maps[i].tsc, em[i].tsc);
		MT_ASSERT_EQ(maps[i].start, em[i].start);
		MT_ASSERT_EQ(maps[i].end, em[i].end);
		MT_ASSERT_EQ(maps[i].file_offset, em[i].file_offset);
		MT_ASSERT_EQ(maps[i].pid, em[i].pid);
		MT_ASSERT_EQ(maps[i].prot, em[i].prot);
		MT_ASSERT_EQ(maps[i].event, em[i].event);
		MT_ASSERT_STREQ(maps[i].path, em[i].path);
		MT_ASSERT_EQ(maps[i].build_id_len, em[i].build_id_len);
		if (em[i].build_id_len)
			MT_ASSERT_MEMEQ(maps[i].build_id, em[i].build_id, em[i].build_id_len);
	}

	MT_ASSERT_EQ(mt_bundle_threads(r, &th), 2);
	MT_ASSERT_EQ(th[0].tid, 100);
	MT_ASSERT_STREQ(th[0].comm, "app");
	MT_ASSERT_EQ(th[0].cmdline_len, sizeof(sample_cmdline));
	MT_ASSERT_MEMEQ(th[0].cmdline, sample_cmdline, sizeof(sample_cmdline));
	MT_ASSERT_EQ(th[1].tid, 101);
	MT_ASSERT_EQ(th[1].tsc, 6);
	MT_ASSERT_STREQ(th[1].comm, "worker-1");
	MT_ASSERT_EQ(th[1].cmdline_len, 0);

	MT_ASSERT_EQ(mt_bundle_clock(r, &cd, &anchors, &n), 0);
	MT_ASSERT_EQ(n, 2);
	MT_ASSERT_EQ(cd.tsc_hz, 2800000000ULL);
	MT_ASSERT_EQ(cd.time_zero, 7);
	MT_ASSERT_EQ(cd.time_mult, 123);
	MT_ASSERT_EQ(cd.time_shift, 10);
	MT_ASSERT_EQ(anchors[1].tsc, 5000);
	MT_ASSERT_EQ(anchors[1].monotonic_ns, 6000);
	MT_ASSERT_EQ(anchors[1].realtime_ns, 7000);
	MT_ASSERT_EQ(anchors[1].boottime_ns, 8000);

	MT_ASSERT_EQ(mt_bundle_file_count(r), embedded ? 2 : 1);
	MT_ASSERT_EQ(mt_bundle_file_find(r, sample_bid, sizeof(sample_bid), NULL), 0);
	MT_ASSERT_EQ(mt_bundle_file_info(r, 0, &f), 0);
	MT_ASSERT_STREQ(f.path, "/usr/bin/app");
	MT_ASSERT_EQ(f.mtime_ns, 42);
	MT_ASSERT_EQ(f.size, sizeof(sm->file_bytes));
	MT_ASSERT_EQ(f.build_id_len, sizeof(sample_bid));
	MT_ASSERT_MEMEQ(f.build_id, sample_bid, sizeof(sample_bid));
	MT_ASSERT_EQ(mt_bundle_file_data(r, 0, &data, &len), 0);
	MT_ASSERT_EQ(len, sizeof(sm->file_bytes));
	MT_ASSERT_MEMEQ(data, sm->file_bytes, len);

	MT_ASSERT_EQ(mt_bundle_ktext_count(r), 1);
	MT_ASSERT_EQ(mt_bundle_ktext_info(r, 0, &kt), 0);
	MT_ASSERT_EQ(kt.addr, 0xffffffff81000000);
	MT_ASSERT_STREQ(kt.name, "kernel");
	MT_ASSERT_EQ(kt.size, sizeof(sm->ktext));
	MT_ASSERT_EQ(mt_bundle_ktext_data(r, 0, &data, &len), 0);
	MT_ASSERT_EQ(len, sizeof(sm->ktext));
	MT_ASSERT_MEMEQ(data, sm->ktext, len);

	MT_ASSERT_EQ(mt_bundle_kallsyms(r, &text, &len), 0);
	MT_ASSERT_EQ(len, strlen(sample_kallsyms));
	MT_ASSERT_MEMEQ(text, sample_kallsyms, len);

	MT_ASSERT_EQ(mt_bundle_modules(r, &mods), 2);
	MT_ASSERT_EQ(mods[0].start, 0xffffffffc0000000);
	MT_ASSERT_EQ(mods[0].end, 0xffffffffc0010000);
	MT_ASSERT_STREQ(mods[0].name, "mtrace");
	MT_ASSERT_STREQ(mods[1].name, "[bpf]");
}

#endif
