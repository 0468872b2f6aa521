// SPDX-License-Identifier: MIT
/*
 * perf.data import and export: a generator bundle exported to perf.data
 * and imported back decodes to the same calls and returns; so does the
 * exported file rewritten by perf's own writer (perf inject); per-thread
 * and snapshot recordings import; and bad, truncated or hostile files are
 * rejected with a message, never a crash.
 */
#include "test_decode_fixture.h"
#include "test_decode_steps.h"

#include "perfdata/perfdata_export.h"
#include "perfdata/perfdata_import.h"
#include "perfdata/perfdata_writer.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

static uint32_t truth_tid(const char *name);

/* A generator bundle NAME.mtrace of PROG, and its export NAME.data. */
static void make_export(const char *name, const char *prog, const char *extra)
{
	char ptgen[1200], progs[1200], err[1024], path[256];
	struct perfdata_export_stats st;
	struct mt_bundle_reader *r;

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' %s -o %s.mtrace -t %s.truth -- '%s/%s' >/dev/null", ptgen, extra, name, name,
	      progs, prog);
	snprintf(path, sizeof(path), "%s.mtrace", name);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path(path), err, sizeof(err)) == 0, "%s", err);
	snprintf(path, sizeof(path), "%s.data", name);
	MT_ASSERT_MSG(perfdata_export(r, fx_path(path), NULL, &st, err, sizeof(err)) == 0, "%s",
		      err);
	mt_bundle_close(r);
}

/* Imports DATA (with the export's symfs) to OUT; returns import's status. */
static int import(const char *data, const char *out, struct perfdata_import_stats *st,
		  char *err, size_t errlen)
{
	struct perfdata_import_opts io = { 0 };
	struct perfdata_file f;
	char symfs[600];
	int e;

	snprintf(symfs, sizeof(symfs), "%s.symfs", fx_path(data));
	io.symfs = symfs;
	if ((e = perfdata_open(&f, fx_path(data)))) {
		snprintf(err, errlen, "%s", f.err);
		perfdata_close(&f);
		return e;
	}
	e = perfdata_import(&f, data, fx_path(out), &io, st, err, errlen);
	perfdata_close(&f);
	return e;
}

/* NAME.mtrace and the bundle OUT imported from DATA decode to the same steps. */
static void same_decode(const char *name, const char *data, const char *out)
{
	struct perfdata_import_stats st;
	struct steps a = { 0 }, b = { 0 };
	char err[1024], path[256];

	MT_ASSERT_MSG(import(data, out, &st, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(!st.warning[0], "import: %s", st.warning);
	snprintf(path, sizeof(path), "%s.mtrace", name);
	steps_decode(fx_path(path), &a, NULL, NULL);
	steps_decode(fx_path(out), &b, NULL, NULL);
	MT_ASSERT(a.n > 0);
	steps_compare(name, "bundle", &a, "imported", &b, NULL);
	free(a.v);
	free(b.v);
}

MT_TEST(export_import_round_trip)
{
	struct mt_bundle_pt_config_desc cfg;
	struct mt_bundle_reader *r;
	char err[512];

	make_export("threads", "threads", "--cpus 2");
	same_decode("threads", "threads.data", "threads-back.mtrace");
	/* One process: it is the target, the recording is not system-wide. */
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("threads-back.mtrace"), err, sizeof(err)) == 0,
		      "%s", err);
	MT_ASSERT_EQ(mt_bundle_get_pt_config(r, &cfg), 0);
	mt_bundle_close(r);
	MT_ASSERT_EQ(cfg.target_pid, truth_tid("threads"));
	MT_ASSERT_EQ(cfg.flags & MT_BUNDLE_CFG_SYSTEM_WIDE, 0);
}

/* perf's own writer (perf inject) rewrites the export; import that. */
MT_TEST(perf_inject_rewritten)
{
	fx_need("perf");
	make_export("plt", "plt", "");
	fx_sh("perf inject -i plt.data -o plt-inj.data 2>/dev/null");
	fx_sh("cp -r plt.data.symfs plt-inj.data.symfs");
	same_decode("plt", "plt-inj.data", "plt-inj.mtrace");
}

enum {
	PER_THREAD = 1,         /* AUXTRACE cpu -1, tid set, no CPU switches */
	SPLIT = 2,              /* each CPU's PT in two AUXTRACE records */
	TIME_CONV_ONLY = 4,     /* no time conversion in AUXTRACE_INFO */
	RENAMED = 8,            /* binaries at paths this machine lacks (/usr -> /Xsr) */
};

/*
 * Rewrites SRC as DST with libmtrace's own reader and writer, changed as
 * HOW says (the variants perf writes: --per-thread, a recording read from
 * the AUX area in several batches, a perf that puts the conversion only in
 * TIME_CONV); TID is the thread of per-thread buffers.
 */
static void rewrite(const char *src, const char *dst, int how, uint32_t tid)
{
	int per_thread = how & PER_THREAD, split = how & SPLIT;
	struct perfdata_writer *w;
	struct perfdata_file f;
	struct perfdata_rec r;
	uint64_t pos = 0, id;
	char err[512];

	MT_ASSERT_MSG(perfdata_open(&f, fx_path(src)) == 0, "%s", f.err);
	MT_ASSERT_MSG(perfdata_writer_create(&w, fx_path(dst), err, sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; i < f.nattrs; i++)
		MT_ASSERT_EQ(perfdata_writer_add_attr(w, &f.attrs[i].attr, "event", &id), 0);
	while (perfdata_next(&f, &pos, &r) > 0) {
		if (r.h.type == PERFDATA_REC_AUXTRACE) {
			struct perfdata_auxtrace a;

			memcpy(&a, r.body - sizeof(r.h), sizeof(a));
			if (per_thread)
				a.cpu = UINT32_MAX, a.tid = tid;
			if (split) {
				uint64_t half = r.aux_len / 2;

				a.size = half;
				MT_ASSERT_EQ(perfdata_writer_auxtrace(w, &a, r.aux), 0);
				a.size = r.aux_len - half;
				a.offset += half;
				MT_ASSERT_EQ(perfdata_writer_auxtrace(w, &a, r.aux + half), 0);
			} else {
				a.size = r.aux_len;
				MT_ASSERT_EQ(perfdata_writer_auxtrace(w, &a, r.aux), 0);
			}
			continue;
		}
		if (per_thread && (r.h.type == PERF_RECORD_SWITCH_CPU_WIDE ||
				   r.h.type == PERF_RECORD_ITRACE_START))
			continue;
		uint8_t rec[65536];

		memcpy(rec, r.body - sizeof(r.h), r.h.size);
		/* Pieces of one CPU's trace are consecutive, not snapshots. */
		if (split && r.h.type == PERFDATA_REC_AUXTRACE_INFO)
			memset(rec + sizeof(struct perfdata_auxtrace_info) +
				       8 * PERFDATA_PT_SNAPSHOT_MODE, 0, 8);
		if ((how & RENAMED) && r.h.type == PERF_RECORD_MMAP2) {
			char *name = (char *)rec + sizeof(struct perfdata_mmap2);

			if (name[0] == '/' && strncmp(name, PERFDATA_EXPORT_VDSO_DIR,
						      strlen(PERFDATA_EXPORT_VDSO_DIR)))
				name[1] = 'X';
		}
		if ((how & TIME_CONV_ONLY) && r.h.type == PERFDATA_REC_AUXTRACE_INFO)
			memset(rec + sizeof(struct perfdata_auxtrace_info) +
				       8 * PERFDATA_PT_TIME_SHIFT, 0, 3 * 8);
		MT_ASSERT_EQ(perfdata_writer_record(w, (const struct perf_event_header *)rec), 0);
	}
	/* The features perf record writes. */
	{
		static const unsigned int feats[] = { PERFDATA_FEAT_BUILD_ID, PERFDATA_FEAT_ARCH,
						      PERFDATA_FEAT_NRCPUS, PERFDATA_FEAT_CPUID };
		for (size_t i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
			const uint8_t *p;
			size_t n;

			if (!perfdata_feature(&f, feats[i], &p, &n))
				MT_ASSERT_EQ(perfdata_writer_feature(w, feats[i], p, n), 0);
		}
	}
	MT_ASSERT_MSG(perfdata_writer_finish(w) == 0, "%s", perfdata_writer_errmsg(w));
	perfdata_writer_free(w);
	perfdata_close(&f);
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "cp -r %s.symfs %s.symfs", src, dst);
	fx_sh("%s", cmd);
}

/* The thread id the generator ran, from its truth file. */
static uint32_t truth_tid(const char *name)
{
	char path[256], line[256];
	unsigned tid = 0, pid, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s.truth", name);
	f = fopen(fx_path(path), "r");
	MT_ASSERT(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "thread %u %u %u", &tid, &pid, &n) == 3)
			break;
	fclose(f);
	MT_ASSERT(tid);
	return tid;
}

MT_TEST(per_thread_buffers)
{
	struct perfdata_import_stats st;
	char err[1024];

	make_export("recursion", "recursion", "");
	rewrite("recursion.data", "recursion-pt.data", PER_THREAD, truth_tid("recursion"));
	same_decode("recursion", "recursion-pt.data", "recursion-pt.mtrace");
	MT_ASSERT_EQ(import("recursion-pt.data", "x.mtrace", &st, err, sizeof(err)), 0);
	MT_ASSERT(st.per_thread);
	MT_ASSERT_EQ(st.streams, 1);
}

/*
 * Binaries this machine lacks come from perf's build-id cache, in both of
 * its layouts: .build-id/xx/rest the file itself (older perf), or a link
 * to ../../PATH/BUILDID, the directory holding "elf" or "vdso" (perf now).
 */
MT_TEST(build_id_cache_binaries)
{
	struct perfdata_import_opts io = { 0 };
	struct perfdata_import_stats st;
	struct steps a = { 0 }, b = { 0 };
	struct perfdata_file f;
	char err[1024], cache[600];

	make_export("indirect", "indirect", "");
	rewrite("indirect.data", "indirect-mv.data", RENAMED, 0);
	/* Each binary of the export into the cache; the first in the old layout. */
	fx_sh("cd indirect-mv.data.symfs && old=1 && for f in $(find . -type f); do "
	      "bid=$(readelf -n \"$f\" | awk '/Build ID/ { print $3 }'); "
	      "d=../cache/.build-id/$(echo $bid | cut -c1-2); mkdir -p $d; "
	      "case $f in ./mtrace-vdso/*) k='[vdso]' n=vdso;; *) k=${f#.} n=elf;; esac; "
	      "if [ $old ]; then cp \"$f\" $d/$(echo $bid | cut -c3-); old=; else "
	      "mkdir -p \"../cache/$k/$bid\" && cp \"$f\" \"../cache/$k/$bid/$n\" && "
	      "ln -s \"../../$k/$bid\" $d/$(echo $bid | cut -c3-); fi; done");
	fx_sh("rm -r indirect-mv.data.symfs");
	snprintf(cache, sizeof(cache), "%s", fx_path("cache"));
	io.buildid_dir = cache;
	MT_ASSERT_MSG(perfdata_open(&f, fx_path("indirect-mv.data")) == 0, "%s", f.err);
	MT_ASSERT_MSG(perfdata_import(&f, "indirect-mv.data", fx_path("indirect-mv.mtrace"), &io,
				      &st, err, sizeof(err)) == 0, "%s", err);
	perfdata_close(&f);
	MT_ASSERT_MSG(!st.warning[0], "import: %s", st.warning);
	printf("# %zu binaries embedded from the build-id cache\n", st.embedded);
	MT_ASSERT(st.embedded >= 3); /* the program, libc, ld.so (and the vDSO) */
	steps_decode(fx_path("indirect.mtrace"), &a, NULL, NULL);
	steps_decode(fx_path("indirect-mv.mtrace"), &b, NULL, NULL);
	MT_ASSERT(a.n > 0);
	steps_compare("indirect", "bundle", &a, "from the cache", &b, NULL);
	free(a.v);
	free(b.v);
}

/* A CPU's trace in several AUXTRACE records is joined in order. */
MT_TEST(auxtrace_in_pieces)
{
	make_export("tailcall", "tailcall", "");
	rewrite("tailcall.data", "tailcall-split.data", SPLIT, 0);
	/* Not snapshot mode: pieces are consecutive. */
	same_decode("tailcall", "tailcall-split.data", "tailcall-split.mtrace");
}

/* perf's TIME_CONV record gives the clock when AUXTRACE_INFO does not. */
MT_TEST(time_conv_record)
{
	const struct mt_bundle_clock_entry *a;
	struct mt_bundle_clock_desc d;
	struct perfdata_import_stats st;
	size_t n;
	struct mt_bundle_reader *r;
	char err[1024];

	make_export("crash", "crash", "");
	rewrite("crash.data", "crash-tc.data", TIME_CONV_ONLY, 0);
	MT_ASSERT_MSG(import("crash-tc.data", "crash-tc.mtrace", &st, err, sizeof(err)) == 0, "%s",
		      err);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("crash-tc.mtrace"), err, sizeof(err)) == 0, "%s",
		      err);
	MT_ASSERT_EQ(mt_bundle_clock(r, &d, &a, &n), 0);
	mt_bundle_close(r);
	/* The generator's TSC runs at 2 GHz. */
	MT_ASSERT_EQ(d.tsc_hz, 2000000000);
	same_decode("crash", "crash-tc.data", "crash-tc2.mtrace");
}

/* ---- bad input ---- */

static size_t file_size(const char *name)
{
	struct stat st;

	MT_ASSERT(stat(fx_path(name), &st) == 0);
	return (size_t)st.st_size;
}

/* Import of BUF fails with a message that contains WANT. */
static void rejects(const void *buf, size_t len, const char *want)
{
	struct perfdata_import_stats st;
	struct perfdata_file f;
	char err[1024] = "";
	int e;

	e = perfdata_open_mem(&f, buf, len);
	if (!e) {
		e = perfdata_import(&f, "bad.data", fx_path("bad.mtrace"), NULL, &st, err,
				    sizeof(err));
		/* The import's messages name the file, once (the open's leave it
		 * to the caller). */
		MT_ASSERT_MSG(!strncmp(err, "bad.data: ", 10) && !strstr(err + 10, "bad.data"),
			      "message '%s' does not name bad.data once, first", err);
	} else {
		snprintf(err, sizeof(err), "%s", f.err);
	}
	perfdata_close(&f);
	MT_ASSERT_MSG(e < 0, "accepted a bad file (%s expected)", want);
	MT_ASSERT_MSG(strstr(err, want), "message '%s' lacks '%s'", err, want);
	MT_ASSERT_MSG(!strchr(err, '\n'), "message spans lines: %s", err);
	MT_ASSERT(access(fx_path("bad.mtrace"), F_OK) != 0);
}

static uint8_t *load(const char *name, size_t *len)
{
	FILE *f = fopen(fx_path(name), "rb");
	uint8_t *b;

	MT_ASSERT(f);
	*len = file_size(name);
	b = malloc(*len);
	MT_ASSERT(b && fread(b, 1, *len, f) == *len);
	fclose(f);
	return b;
}

MT_TEST(truncated_files)
{
	size_t len;
	uint8_t *b;

	make_export("syscalls", "syscalls", "");
	b = load("syscalls.data", &len);
	/* Every cut loses the header, the data or the features: each is named. */
	for (size_t cut = 0; cut < len; cut += cut < 256 ? 1 : 37) {
		struct perfdata_import_stats st;
		struct perfdata_file f;
		char err[1024] = "";
		int e = perfdata_open_mem(&f, b, cut);

		if (!e)
			e = perfdata_import(&f, "cut.data", fx_path("cut.mtrace"), NULL, &st, err,
					    sizeof(err));
		else
			snprintf(err, sizeof(err), "%s", f.err);
		perfdata_close(&f);
		MT_ASSERT_MSG(e < 0, "a file cut at %zu of %zu bytes was accepted", cut, len);
		MT_ASSERT_MSG(err[0], "no message for a cut at %zu", cut);
	}
	free(b);
}

MT_TEST(hostile_headers)
{
	struct perfdata_file_header h;
	size_t len;
	uint8_t *b;

	rejects("PERFILE", 7, "no PERFILE2 magic");
	rejects("NOTPERF2\x68\0\0\0\0\0\0\0", 16, "no PERFILE2 magic");
	rejects("PERFILE2\x10\0\0\0\0\0\0\0", 16, "pipe-mode");

	make_export("indirect", "indirect", "");
	b = load("indirect.data", &len);
	memcpy(&h, b, sizeof(h));

	h.attr_size = 1ULL << 40;
	memcpy(b, &h, sizeof(h));
	rejects(b, len, "bad attr entry size");

	free(b);
	b = load("indirect.data", &len);
	memcpy(&h, b, sizeof(h));
	h.data.size = UINT64_MAX - h.data.offset + 1; /* wraps */
	memcpy(b, &h, sizeof(h));
	rejects(b, len, "data section");

	/* perf record killed before it wrote the data size (it was "no Intel PT"). */
	h.data.size = 0;
	memcpy(b, &h, sizeof(h));
	rejects(b, len, "the header's data size is 0, so no record can be read: "
			"was 'perf record' properly terminated?");

	free(b);
	b = load("indirect.data", &len);
	memcpy(&h, b, sizeof(h));
	/* A record of size 0 in the middle of the data would loop forever. */
	memset(b + h.data.offset + 6, 0, 2);
	rejects(b, len, "bad size 0");

	free(b);
	b = load("indirect.data", &len);
	memcpy(&h, b, sizeof(h));
	h.attrs.offset = len - 8;
	memcpy(b, &h, sizeof(h));
	rejects(b, len, "attr section");
	free(b);
}

/* A bundle that cannot be written is named in the message, the perf.data not. */
MT_TEST(write_errors_name_the_output)
{
	struct perfdata_import_stats st;
	char err[1024] = "";

	make_export("recursion", "recursion", "");
	MT_ASSERT(import("recursion.data", "no-dir/x.mtrace", &st, err, sizeof(err)) < 0);
	MT_ASSERT_MSG(strstr(err, "no-dir/x.mtrace") && !strstr(err, "recursion.data"), "%s", err);
}

/*
 * A bundle written with a CPU section and, if WITH_CFG, a PT configuration,
 * but no trace: its export is refused with WANT, naming the bundle, and
 * writes nothing. A missing section was reported as "no error", and
 * neither message named the bundle.
 */
static void export_refuses(const char *bundle, bool with_cfg, const char *want)
{
	struct perfdata_export_opts o = { .name = bundle };
	struct mt_bundle_cpu_desc cpu = { .vendor = MT_BUNDLE_VENDOR_INTEL };
	struct mt_bundle_pt_config_desc cfg = { 0 };
	struct perfdata_export_stats st;
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	char err[1024] = "";

	MT_ASSERT_MSG(mt_bundle_writer_create(&w, fx_path(bundle), NULL, err, sizeof(err)) == 0,
		      "%s", err);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	if (with_cfg)
		MT_ASSERT_EQ(mt_bundle_write_pt_config(w, &cfg), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path(bundle), err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT(perfdata_export(r, fx_path("refused.data"), &o, &st, err, sizeof(err)) < 0);
	mt_bundle_close(r);
	MT_ASSERT_MSG(!strcmp(err, want), "'%s', not '%s'", err, want);
	MT_ASSERT(access(fx_path("refused.data"), F_OK) != 0);
}

MT_TEST(export_of_a_bundle_without_a_trace)
{
	export_refuses("nocfg.mtrace", false,
		       "nocfg.mtrace: the bundle has no pt-config section: it cannot be exported");
	export_refuses("nopt.mtrace", true,
		       "nopt.mtrace: the bundle holds no PT data: there is no trace to export");
}

/* An AUXTRACE whose trace runs past the data, and a file without PT. */
MT_TEST(hostile_records)
{
	struct perfdata_file f;
	struct perfdata_rec r;
	uint64_t pos = 0, big = 1ULL << 60;
	size_t len;
	uint8_t *b;

	make_export("longjmp", "longjmp", "");
	b = load("longjmp.data", &len);
	MT_ASSERT_EQ(perfdata_open_mem(&f, b, len), 0);
	while (perfdata_next(&f, &pos, &r) > 0 && r.h.type != PERFDATA_REC_AUXTRACE)
		;
	MT_ASSERT_EQ(r.h.type, PERFDATA_REC_AUXTRACE);
	perfdata_close(&f);
	memcpy(b + r.offset + 8, &big, 8);
	rejects(b, len, "past the end of the data");

	/* The AUXTRACE_INFO record (the first) renamed to an unknown type. */
	free(b);
	b = load("longjmp.data", &len);
	{
		struct perfdata_file_header h;
		uint32_t t = 200;

		memcpy(&h, b, sizeof(h));
		memcpy(b + h.data.offset, &t, 4);
	}
	rejects(b, len, "no AUXTRACE_INFO");
	free(b);
}

/* The file offset of the first record of TYPE in the file in B. */
static uint64_t record_at(const uint8_t *b, size_t len, uint32_t type)
{
	struct perfdata_file f;
	struct perfdata_rec r;
	uint64_t pos = 0;

	MT_ASSERT_EQ(perfdata_open_mem(&f, b, len), 0);
	while (perfdata_next(&f, &pos, &r) > 0 && r.h.type != type)
		;
	perfdata_close(&f);
	MT_ASSERT_EQ(r.h.type, type);
	return r.offset;
}

/*
 * A time conversion whose TSC rate (2^shift * 1e9 / mult Hz) does not fit
 * 64 bits, in AUXTRACE_INFO or in TIME_CONV, is refused by name. It was
 * converted from a double out of range (undefined behaviour; fuzz_perfdata
 * found shift 63 and mult 1).
 */
MT_TEST(time_conversion_beyond_64_bits)
{
	const uint64_t shift = 63, mult = 1, none = 0;
	size_t len, info_at, conv_at;
	uint8_t *b;

	make_export("longjmp", "longjmp", "");
	b = load("longjmp.data", &len);
	info_at = record_at(b, len, PERFDATA_REC_AUXTRACE_INFO) +
		  sizeof(struct perfdata_auxtrace_info);
	memcpy(b + info_at + 8 * PERFDATA_PT_TIME_SHIFT, &shift, 8);
	memcpy(b + info_at + 8 * PERFDATA_PT_TIME_MULT, &mult, 8);
	rejects(b, len, "time shift 63 and mult 1 are not a TSC conversion");
	free(b);

	/* Without one in AUXTRACE_INFO, TIME_CONV's is taken. */
	b = load("longjmp.data", &len);
	info_at = record_at(b, len, PERFDATA_REC_AUXTRACE_INFO) +
		  sizeof(struct perfdata_auxtrace_info);
	memcpy(b + info_at + 8 * PERFDATA_PT_TIME_MULT, &none, 8);
	conv_at = record_at(b, len, PERFDATA_REC_TIME_CONV);
	memcpy(b + conv_at + offsetof(struct perfdata_time_conv, time_shift), &shift, 8);
	memcpy(b + conv_at + offsetof(struct perfdata_time_conv, time_mult), &mult, 8);
	rejects(b, len, "TIME_CONV at offset");
	rejects(b, len, "time shift 63 and mult 1 are not a TSC conversion");
	free(b);
}

/* Sets and clears bits of the Intel PT event's config in the file in B. */
static void pt_config_bits(uint8_t *b, size_t len, uint64_t set, uint64_t clear)
{
	struct perfdata_file_header h;

	memcpy(&h, b, sizeof(h));
	MT_ASSERT(h.attrs.offset + h.attrs.size <= len && h.attr_size >= 16);
	for (uint64_t at = h.attrs.offset; at + 16 <= h.attrs.offset + h.attrs.size;
	     at += h.attr_size) {
		uint32_t type;
		uint64_t config;

		memcpy(&type, b + at, 4);
		if (type <= PERF_TYPE_BREAKPOINT)	/* not a dynamic PMU's */
			continue;
		memcpy(&config, b + at + 8, 8);
		config = (config | set) & ~clear;
		memcpy(b + at + 8, &config, 8);
		return;
	}
	MT_ASSERT_MSG(0, "no Intel PT event in the attrs");
}

/*
 * A recording whose PT holds no control flow (branch=0), no TNT packets
 * (notnt) or event trace packets (event) is refused by name, and no bundle
 * is written: decoding it would give a trace of errors.
 */
MT_TEST(controls_that_cannot_be_decoded)
{
	static const struct {
		uint64_t set, clear;
		const char *want;
	} bad[] = {
		{ 0, 1ULL << 13, "RTIT_CTL.BranchEn is clear (perf's branch=0)" },
		{ 1ULL << 55, 0, "RTIT_CTL.DisTNT is set (perf's notnt)" },
		{ 1ULL << 31, 0, "RTIT_CTL.EventEn is set (perf's event)" },
	};
	struct perfdata_import_stats st;
	char err[1024];
	size_t len;
	uint8_t *b;

	make_export("indirect", "indirect", "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = load("indirect.data", &len);
		pt_config_bits(b, len, bad[i].set, bad[i].clear);
		rejects(b, len, bad[i].want);
		rejects(b, len, "intel_pt config 0x");
		free(b);
	}
	/* PTWRITE and power events are decoded. */
	b = load("indirect.data", &len);
	pt_config_bits(b, len, (1ULL << 12) | (1ULL << 4), 0);
	{
		FILE *f = fopen(fx_path("ptw.data"), "wb");

		MT_ASSERT(f && fwrite(b, 1, len, f) == len);
		fclose(f);
	}
	free(b);
	MT_ASSERT_MSG(import("ptw.data", "ptw.mtrace", &st, err, sizeof(err)) == 0, "%s", err);
}

/*
 * A bundle from elsewhere names its binaries: export copies them under the
 * symfs directory by those names, and a name with ".." in it must not
 * write outside it (here over the user's file next to the output).
 */
/* A bundle NAME of one CPU's PSB whose maps are PATHS, each embedding
 * CODE; with NA clock ANCHORS (and no TSC rate) when NA. */
static void bundle_of_files_clock(const char *name, const char *const *paths, size_t n,
				  const void *code, size_t len,
				  const struct mt_bundle_clock_entry *anchors, size_t na)
{
	struct mt_bundle_writer_opts wo = { .size = sizeof(wo) };
	struct mt_bundle_cpu_desc cpu = { .vendor = MT_BUNDLE_VENDOR_INTEL, .family = 6,
					  .model = 0x8c, .nr_cpus = 1,
					  .vendor_id = "GenuineIntel" };
	struct mt_bundle_pt_config_desc cfg = {
		.flags = MT_BUNDLE_CFG_GENERATED,
		.rtit_ctl = MT_RTIT_CTL_TRACEEN | MT_RTIT_CTL_USER | MT_RTIT_CTL_TOPA |
			    MT_RTIT_CTL_TSCEN | MT_RTIT_CTL_BRANCHEN,
		.ring_size = 4096, .target_pid = 100,
	};
	struct mt_bundle_pt_desc pt = { .cpu = 0, .stop_tsc = 10 };
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	struct mt_bundle_writer *w;
	char err[1024];

	MT_ASSERT_EQ(mt_bundle_writer_create(&w, fx_path(name), &wo, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_bundle_write_cpu(w, &cpu), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt_config(w, &cfg), 0);
	MT_ASSERT_EQ(mt_bundle_write_pt(w, &pt, psb, sizeof(psb)), 0);
	for (size_t i = 0; i < n; i++) {
		struct mt_bundle_map m = { 1, 0x400000 + 0x10000 * i, 0x401000 + 0x10000 * i, 0,
					   100, MT_BUNDLE_PROT_READ | MT_BUNDLE_PROT_EXEC,
					   MT_BUNDLE_MAP_MMAP, paths[i], NULL, 0 };
		struct mt_bundle_file f = { paths[i], NULL, 0, 0, 0 };

		MT_ASSERT_EQ(mt_bundle_write_maps(w, &m, 1), 0);
		MT_ASSERT_EQ(mt_bundle_write_file(w, &f, code, len), 0);
	}
	if (na) {
		struct mt_bundle_clock_desc clk = { 0 };

		MT_ASSERT_EQ(mt_bundle_write_clock(w, &clk, anchors, na), 0);
	}
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
}

static void bundle_of_files(const char *name, const char *const *paths, size_t n,
			    const void *code, size_t len)
{
	bundle_of_files_clock(name, paths, n, code, len, NULL, 0);
}

/* Exports bundle NAME to DATA (symfs: DATA.symfs); returns its status. */
static int export_to(const char *name, const char *data, struct perfdata_export_stats *st,
		     char *err, size_t errlen)
{
	struct mt_bundle_reader *r;
	int e;

	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path(name), err, errlen) == 0, "%s", err);
	e = perfdata_export(r, fx_path(data), NULL, st, err, errlen);
	mt_bundle_close(r);
	return e;
}

MT_TEST(export_writes_nothing_outside_its_symfs)
{
	static const char code[] = "\x7f" "ELF not really";
	static const char *const hostile[] = { "/../victim", "/a/../../victim", "/./../victim" };
	struct perfdata_export_stats st;
	char err[1024], *text;
	size_t len;

	fx_write("victim", "the user's own file\n");
	bundle_of_files("h.mtrace", hostile, 3, code, sizeof(code));
	MT_ASSERT_MSG(export_to("h.mtrace", "h.data", &st, err, sizeof(err)) == 0, "%s", err);
	text = (char *)load("victim", &len);
	MT_ASSERT_MSG(len == 20 && !memcmp(text, "the user's own file\n", 20), "victim now: %.*s",
		      (int)len, text);
	free(text);
	MT_ASSERT_EQ(st.binaries, 0);
	MT_ASSERT_MSG(strstr(st.warning, "/../victim") && strstr(st.warning, "outside"), "%s",
		      st.warning);
}

/* A failed export leaves what it found: no perf.data, no symfs it made,
 * the files of a symfs that was there; an output that is not a file is
 * refused before anything is made. */
MT_TEST(export_that_fails_leaves_nothing_behind)
{
	static const char *const paths[] = { "/opt/app/bin/server" };
	static char code[256 << 10];
	struct perfdata_export_stats st;
	struct rlimit lim, old;
	struct stat sb;
	char err[1024], *text;
	size_t len;

	memset(code, 0x90, sizeof(code));
	bundle_of_files("big.mtrace", paths, 1, code, sizeof(code));
	/* Files stop growing at 64 KiB: the copy of the binary fails. */
	MT_ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 64 << 10;
	signal(SIGXFSZ, SIG_IGN);
	MT_ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
	MT_ASSERT(export_to("big.mtrace", "new.data", &st, err, sizeof(err)) < 0);
	MT_ASSERT_EQ(mkdir(fx_path("old.data.symfs"), 0755), 0);
	fx_write("old.data.symfs/notes", "the user's\n");
	MT_ASSERT(export_to("big.mtrace", "old.data", &st, err, sizeof(err)) < 0);
	MT_ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	MT_ASSERT_MSG(stat(fx_path("new.data.symfs"), &sb) && errno == ENOENT,
		      "the symfs it made is still there");
	MT_ASSERT_MSG(stat(fx_path("new.data"), &sb) && errno == ENOENT, "a perf.data was left");
	text = (char *)load("old.data.symfs/notes", &len);
	MT_ASSERT_MSG(len == 11 && !memcmp(text, "the user's\n", 11), "notes now: %.*s", (int)len,
		      text);
	free(text);

	MT_ASSERT_EQ(mkfifo(fx_path("fifo.data"), 0600), 0);
	MT_ASSERT_EQ(export_to("big.mtrace", "fifo.data", &st, err, sizeof(err)), -EINVAL);
	MT_ASSERT_MSG(strstr(err, "not a regular file"), "%s", err);
	MT_ASSERT_MSG(stat(fx_path("fifo.data.symfs"), &sb) && errno == ENOENT,
		      "a symfs was made for an output that was refused");
}

/* A symfs whose paths lead back to the recorded files (--symfs /, a link
 * to it, a link inside it to a real directory) never writes over them: as root that would replace the
 * system's own libraries with the bundle's copies. */
MT_TEST(export_never_writes_over_the_recorded_files)
{
	static const char code[] = "\x7f" "ELF from another machine";
	struct perfdata_export_opts o = { 0 };
	struct perfdata_export_stats st;
	struct mt_bundle_reader *r;
	const char *paths[1];
	char lib[512], top[256], link[300], err[1024], *text;
	size_t len;
	int e;

	fx_write("installed-lib.so", "the machine's own library\n");
	snprintf(lib, sizeof(lib), "%s", fx_path("installed-lib.so"));
	paths[0] = lib;
	bundle_of_files("own.mtrace", paths, 1, code, sizeof(code));
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("own.mtrace"), err, sizeof(err)) == 0, "%s", err);
	o.symfs = "/";
	e = perfdata_export(r, fx_path("own.data"), &o, &st, err, sizeof(err));
	MT_ASSERT_EQ(e, -EINVAL);
	MT_ASSERT_MSG(strstr(err, "--symfs / would put the bundle's binaries over this machine's own"),
		      "%s", err);
	MT_ASSERT_EQ(symlink("/", fx_path("root-link")), 0);
	o.symfs = fx_path("root-link");
	MT_ASSERT_EQ(perfdata_export(r, fx_path("own.data"), &o, &st, err, sizeof(err)), -EINVAL);
	/* A symfs whose first directory links back to the real one. */
	snprintf(top, sizeof(top), "/%.*s", (int)strcspn(lib + 1, "/"), lib + 1);
	MT_ASSERT_EQ(mkdir(fx_path("loop"), 0755), 0);
	snprintf(link, sizeof(link), "loop%s", top);
	MT_ASSERT_EQ(symlink(top, fx_path(link)), 0);
	o.symfs = fx_path("loop");
	MT_ASSERT_MSG(perfdata_export(r, fx_path("own.data"), &o, &st, err, sizeof(err)) == 0,
		      "%s", err);
	MT_ASSERT_EQ(st.binaries, 0);
	MT_ASSERT_MSG(strstr(st.warning, "is that file itself"), "%s", st.warning);
	mt_bundle_close(r);
	text = (char *)load("installed-lib.so", &len);
	MT_ASSERT_MSG(len == 26 && !memcmp(text, "the machine's own library\n", 26),
		      "the library now: %.*s", (int)len, text);
	free(text);
}

/* A damaged bundle whose clock anchors go back in time, with no TSC rate
 * to use instead: the export's rate stays a clock's (it was about 2^64 ns
 * per tick, converted out of range into a 32-bit mult). */
MT_TEST(export_of_a_clock_that_goes_back)
{
	static const char *const paths[] = { "/opt/app/bin/server" };
	const struct mt_bundle_clock_entry anchors[] = {
		{ .tsc = 1000, .boottime_ns = 5000000 },
		{ .tsc = 2000, .boottime_ns = 4000 },
	};
	struct perfdata_export_stats st;
	struct perfdata_tsc_conv c;
	struct mt_bundle_reader *r;
	uint64_t span;
	char err[1024];

	bundle_of_files_clock("back.mtrace", paths, 1, "code", 4, anchors, 2);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("back.mtrace"), err, sizeof(err)) == 0, "%s", err);
	perfdata_tsc_conv_from_bundle(r, &c);
	mt_bundle_close(r);
	span = perfdata_tsc_to_ns(&c, 2000) - perfdata_tsc_to_ns(&c, 1000);
	MT_ASSERT_MSG(span > 0 && span <= 1000 * 1000000000ull, "1000 ticks made %llu ns",
		      (unsigned long long)span);
	MT_ASSERT_MSG(export_to("back.mtrace", "back.data", &st, err, sizeof(err)) == 0, "%s", err);
}

/* The import's warnings, each kept. */
struct heard {
	char msg[MT_REPORT_LIST + 4][512];
	size_t n;
};

static void hear(void *ctx, enum mt_severity sev, const char *msg)
{
	struct heard *h = ctx;

	MT_ASSERT_EQ(sev, MT_SEV_WARNING);
	if (h->n < sizeof(h->msg) / sizeof(h->msg[0]))
		snprintf(h->msg[h->n], sizeof(h->msg[0]), "%s", msg);
	h->n++;
}

/*
 * A recording whose many binaries are nowhere (not here, no --symfs, no
 * build-ids for perf's cache): convert names the first few, each saying
 * why, and counts the rest exactly in one more warning, not one each.
 */
MT_TEST(missing_binaries_named_up_to_a_cap)
{
	enum { N = MT_REPORT_LIST + 12 };
	static const char code[] = "\x7f" "ELF not really";
	struct heard h = { .n = 0 };
	struct perfdata_import_opts io = { .rep = &(struct mt_reporter){ hear, &h } };
	struct perfdata_export_stats est;
	struct perfdata_import_stats st;
	struct perfdata_file f;
	char names[N][64], err[1024], want[512];
	const char *paths[N];

	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "/nonexistent-mtrace-test/lib%02zu.so", i);
		paths[i] = names[i];
	}
	bundle_of_files("many.mtrace", paths, N, code, sizeof(code));
	MT_ASSERT_MSG(export_to("many.mtrace", "many.data", &est, err, sizeof(err)) == 0, "%s",
		      err);
	MT_ASSERT_MSG(perfdata_open(&f, fx_path("many.data")) == 0, "%s", f.err);
	MT_ASSERT_MSG(perfdata_import(&f, "many.data", fx_path("many-back.mtrace"), &io, &st, err,
				      sizeof(err)) == 0, "%s", err);
	perfdata_close(&f);
	MT_ASSERT_EQ(st.embedded, 0);
	MT_ASSERT_EQ(h.n, MT_REPORT_LIST + 1);
	snprintf(want, sizeof(want), "%s: not embedded in the bundle: no such file here, and %s",
		 paths[0], PERFDATA_NO_BUILD_ID);
	MT_ASSERT_STREQ(h.msg[0], want);
	MT_ASSERT_STREQ(h.msg[MT_REPORT_LIST], "... and 12 more binaries not embedded in the bundle");
}
