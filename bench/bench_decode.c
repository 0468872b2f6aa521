// SPDX-License-Identifier: MIT
/*
 * Decoder throughput and memory on a large random-walk bundle, against a
 * baseline measured in the same run on the same PT bytes and image:
 *  - baseline: a bare libipt block-decoder loop (sync, drain events,
 *    pt_blk_next until the end, forward sync after errors) over an image
 *    built straight from the bundle's maps: the floor for any decoder
 *    built on libipt;
 *  - mtrace: the whole decode as `mtrace-user decode` does it through the
 *    public API: block decoding, thread attribution, call stacks, symbols,
 *    the time-ordered merge and the Perfetto protobuf written to a file.
 * Each variant runs in a fresh process (this program re-executed), after
 * the PT is read; runs are interleaved (baseline, one job, two jobs) and
 * the best of REPEAT kept, the run least disturbed by other processes.
 * Single-threaded figures use CPU time; the two-job speed-up needs wall
 * time, so it is only as good as the machine is idle.
 *
 * Memory: peak RSS (VmHWM) of processes that (1) do nothing, (2) open the
 * bundle and read the PT, (3) do the same and open the decoder (images and
 * symbol tables: the image cache is (3) - (2), in RSS once set up, since
 * reading the PT peaks higher for a moment, with the compressed bytes of
 * the stream being decompressed), (4) decode everything to Perfetto. The
 * figure is (4) - (1) - image cache, over the PT bytes.
 *
 * The bundle: the PT generator's random walk over libcapstone on two
 * virtual CPUs (a real 6.6 MB shared library the build depends on; its
 * walk gives a steady ~210 bytes of PT per 1000 instructions, where libc's
 * walk is dominated by syscalls and unknown AVX-512 code). Made once with
 * the generator built next to this benchmark (O/rel/tests/ptgen/ptgen) and
 * kept as O/bench/decode-walk-NM.mtrace.
 *
 * Usage: bench_decode [MiB of PT, default 64] [bundle, default generated]
 *        bench_decode --child MODE BUNDLE OUT   one variant alone (to profile)
 */
#include "bundle/bundle.h"
#include "decode/decode.h"
#include "out_perfetto/pfout.h"
#include "decode/ptconfig.h"

#include "bench_report.h"

#include <intel-pt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPEAT 2
#define WALK_LIB "/usr/lib/x86_64-linux-gnu/libcapstone.so.4"
/* Measured for that walk; a little low so the bundle reaches the size. */
#define WALK_BYTES_PER_KINSN 200
#define TARGET_RATIO 0.5	/* mtrace's throughput over bare libipt's */
#define TARGET_SPEEDUP 1.6	/* two jobs over one */
#define TARGET_RSS 2.0		/* peak RSS over PT bytes, image cache aside */

struct times {
	double cpu, wall;
};

static struct times now(void)
{
	struct timespec c, w;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	clock_gettime(CLOCK_MONOTONIC, &w);
	return (struct times){ c.tv_sec + c.tv_nsec * 1e-9, w.tv_sec + w.tv_nsec * 1e-9 };
}

static struct times since(struct times t0)
{
	struct times t = now();

	return (struct times){ t.cpu - t0.cpu, t.wall - t0.wall };
}

static int make_bundle(const char *path, unsigned int mib)
{
	char dir[PATH_MAX], gen[PATH_MAX + 32], tmp[PATH_MAX + 8], n[32];
	unsigned long long insns = (unsigned long long)mib * 1048576 * 1000 / WALK_BYTES_PER_KINSN;
	int status;
	pid_t pid;

	if (bench_self_dir(dir, sizeof(dir)))
		return -1;
	snprintf(gen, sizeof(gen), "%s/../rel/tests/ptgen/ptgen", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(n, sizeof(n), "%llu", insns);
	fprintf(stderr, "bench_decode: generating %s (%s instructions, once)\n", path, n);
	pid = fork();
	if (pid == 0) {
		execl(gen, "ptgen", "--walk", WALK_LIB, "--insns", n, "--cpus", "2", "-o", tmp,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || rename(tmp, path)) {
		fprintf(stderr, "bench_decode: generating the bundle failed (is %s built?)\n", gen);
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The image the bare loop decodes against: every executable file mapping. */
static struct pt_image *bare_image(struct mt_bundle_reader *r, struct pt_image_section_cache *isc)
{
	struct pt_image *img = pt_image_alloc("bare");
	const struct mt_bundle_map *m;
	size_t n = mt_bundle_maps(r, &m);

	for (size_t i = 0; img && i < n; i++) {
		int isid;

		if (!(m[i].prot & MT_BUNDLE_PROT_EXEC) || !m[i].path || m[i].path[0] != '/')
			continue;
		isid = pt_iscache_add_file(isc, m[i].path, m[i].file_offset, m[i].end - m[i].start,
					   m[i].start);
		if (isid < 0 || pt_image_add_cached(img, isc, isid, NULL) < 0) {
			fprintf(stderr, "bench_decode: cannot map %s\n", m[i].path);
			pt_image_free(img);
			return NULL;
		}
	}
	return img;
}

/* The baseline: every CPU stream through a bare block-decoder loop. */
static int bare_libipt(struct mt_bundle_reader *r, struct times *t, uint64_t *insns)
{
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	struct pt_image *img = isc ? bare_image(r, isc) : NULL;
	struct mt_bundle_pt_config_desc ptc;
	struct mt_bundle_cpu_desc cpu;
	struct pt_config cfg;
	char err[256];
	struct times t0;

	if (!img || mt_bundle_get_cpu(r, &cpu) || mt_bundle_get_pt_config(r, &ptc) ||
	    mt_decode_pt_config(&cpu, &ptc, &cfg, err, sizeof(err)) < 0) {
		pt_image_free(img);
		pt_iscache_free(isc);
		return -1;
	}
	*insns = 0;
	t0 = now();
	for (size_t i = 0; i < mt_bundle_pt_count(r); i++) {
		struct pt_block_decoder *dec;
		const uint8_t *data;
		size_t len;
		int st;

		if (mt_bundle_pt_data(r, i, &data, &len) || !len)
			continue;
		cfg.begin = (uint8_t *)data;
		cfg.end = (uint8_t *)data + len;
		dec = pt_blk_alloc_decoder(&cfg);
		if (!dec)
			break;
		pt_blk_set_image(dec, img);
		for (st = pt_blk_sync_forward(dec); st >= 0; st = pt_blk_sync_forward(dec)) {
			for (;;) {
				struct pt_block blk;
				struct pt_event ev;

				while (st >= 0 && (st & pts_event_pending))
					st = pt_blk_event(dec, &ev, sizeof(ev));
				if (st < 0 || (st & pts_eos))
					break;
				blk.ninsn = 0;
				st = pt_blk_next(dec, &blk, sizeof(blk));
				*insns += blk.ninsn;
				if (st < 0)
					break;
			}
			if (st == -pte_eos || (st >= 0 && (st & pts_eos)))
				break;
		}
		pt_blk_free_decoder(dec);
	}
	*t = since(t0);
	pt_image_free(img);
	pt_iscache_free(isc);
	return 0;
}

struct full_result {
	struct times t;
	uint64_t insns, events, out_events, out_bytes;
};

/* The whole decode to a Perfetto file, as the CLI does it. */
static int full_decode(struct mt_bundle_reader *r, unsigned int jobs, const char *out,
		       struct full_result *res)
{
	struct mt_decode_opts o = { .jobs = jobs };
	struct mt_decode_sink sink;
	struct pf_options po;
	struct mt_pfout pfo;
	struct pf_stats st;
	struct pf_writer *w;
	struct mt_decode *d;
	struct times t0 = now();
	char err[512];
	int rc;

	if (mt_decode_open(&d, r, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_decode: %s\n", err);
		return -1;
	}
	pf_options_init(&po);
	po.late_inferred = 1;	/* as mtrace-user decode writes protobuf */
	if (pf_writer_open(&w, out, &po, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_decode: %s\n", err);
		mt_decode_free(d);
		return -1;
	}
	rc = mt_pfout_init(&pfo, d, r, w, &sink);
	if (!rc)
		rc = mt_decode_run(d, &sink);
	if (!rc)
		rc = mt_pfout_finish(&pfo, UINT64_MAX);
	if (rc)
		fprintf(stderr, "bench_decode: %s\n", pfo.err[0] ? pfo.err : pf_writer_error(w));
	if (pf_writer_close(w, pfo.last_ns, &st, NULL, 0) < 0 && !rc)
		rc = -1;
	mt_pfout_fini(&pfo);
	res->insns = mt_decode_get_stats(d)->insns;
	res->events = mt_decode_get_stats(d)->events;
	res->out_events = st.events;
	res->out_bytes = st.bytes;
	mt_decode_free(d);
	res->t = since(t0);
	return rc ? -1 : 0;
}

/*
 * A memory figure of this process in bytes (VmRSS, VmHWM). The peak is
 * VmHWM: it covers only the memory map since exec, unlike ru_maxrss, which
 * keeps the high-water mark of the parent's pages the child had between
 * fork and exec.
 */
static double vm_status(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256], fmt[32];
	double kb = -1;

	snprintf(fmt, sizeof(fmt), "%s: %%lf kB", field);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

/* What one child run reports (one line on its standard output). */
struct run {
	double hwm, cpu, wall;
	double rss;	/* VmRSS with the reader (and decoder) open */
	unsigned long long pt_bytes, insns, events, out_events, out_bytes;
};

/*
 * The child: MODE "none" (the bare process), "bundle" (reader open, PT
 * read), "open" (the same and the decoder open: images, symbols), "bare" (the libipt
 * loop), "full" or "full2" (the decode with one or two jobs). The PT is
 * read (and decompressed) before the clock starts, for every mode alike.
 * Each variant runs in a fresh process so that its peak RSS is its own
 * and no variant inherits another's heap or caches.
 */
static int child(const char *mode, const char *bundle, const char *out)
{
	struct mt_decode_opts o = { .jobs = 1 };
	struct run res = { 0 };
	struct mt_bundle_reader *r;
	struct full_result fr = { 0 };
	struct mt_decode *d;
	char err[512];
	int rc = 0;

	if (strcmp(mode, "none")) {
		if (mt_bundle_open(&r, bundle, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_decode: %s\n", err);
			return 1;
		}
		/* Every mode holds the PT, so that "open" - "bundle" is what the
		 * decoder adds when it opens: images and symbol tables. */
		for (size_t i = 0; i < mt_bundle_pt_count(r); i++) {
			const uint8_t *data;
			size_t len;

			if (!mt_bundle_pt_data(r, i, &data, &len))
				res.pt_bytes += len;
		}
		if (!strcmp(mode, "bare")) {
			struct times t = { 0, 0 };
			uint64_t insns = 0;

			rc = bare_libipt(r, &t, &insns);
			res.cpu = t.cpu;
			res.wall = t.wall;
			res.insns = insns;
		} else if (!strcmp(mode, "open")) {
			rc = mt_decode_open(&d, r, &o, err, sizeof(err)) < 0;
			if (!rc) {
				res.rss = vm_status("VmRSS");
				mt_decode_free(d);
			}
		} else if (strcmp(mode, "bundle")) {
			rc = full_decode(r, strcmp(mode, "full2") ? 1 : 2, out, &fr);
			res.cpu = fr.t.cpu;
			res.wall = fr.t.wall;
			res.insns = fr.insns;
			res.events = fr.events;
			res.out_events = fr.out_events;
			res.out_bytes = fr.out_bytes;
		}
		if (!res.rss)
			res.rss = vm_status("VmRSS");
		mt_bundle_close(r);
	}
	printf("%.0f %.0f %.6f %.6f %llu %llu %llu %llu %llu\n", vm_status("VmHWM"), res.rss,
	       res.cpu, res.wall, res.pt_bytes, res.insns, res.events, res.out_events,
	       res.out_bytes);
	return rc ? 1 : 0;
}

/* Runs this program as a child in MODE; 0 or -1. */
static int run_child(const char *mode, const char *bundle, const char *out, struct run *res)
{
	int p[2], status, got = 0;
	pid_t pid;
	FILE *f;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl("/proc/self/exe", "bench_decode", "--child", mode, bundle, out, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	if (f)
		got = fscanf(f, "%lf %lf %lf %lf %llu %llu %llu %llu %llu", &res->hwm, &res->rss,
			     &res->cpu, &res->wall, &res->pt_bytes, &res->insns, &res->events,
			     &res->out_events, &res->out_bytes);
	if (f)
		fclose(f);
	else
		close(p[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || got != 9) {
		fprintf(stderr, "bench_decode: the %s run failed\n", mode);
		return -1;
	}
	return 0;
}

static void result(const char *fig, const char *val, const char *target, int met)
{
	printf("RESULT %s|%s|%s|%s\n", fig, val, target, met ? "met" : "not met");
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))

int main(int argc, char **argv)
{
	unsigned int mib = 64;
	char dir[PATH_MAX - 64], path[PATH_MAX], out[PATH_MAX], val[64], tgt[64];
	struct run none, bun, open, bare = { 0 }, one = { 0 }, two = { 0 };
	double bare_cpu = 1e30, one_cpu = 1e30, one_wall = 1e30, two_wall = 1e30,
		two_cpu = 1e30, hwm = 0;
	double ratio, speedup, images, rss_x, pt;
	struct stat sb;

	if (argc == 5 && !strcmp(argv[1], "--child"))
		return child(argv[2], argv[3], argv[4]);
	if (argc > 1)
		mib = (unsigned int)strtoul(argv[1], NULL, 10);
	if (!mib || mib > 4096 || bench_self_dir(dir, sizeof(dir))) {
		fprintf(stderr, "usage: bench_decode [MiB of PT 1..4096] [bundle]\n");
		return 2;
	}
	if (argc > 2)
		snprintf(path, sizeof(path), "%s", argv[2]);
	else
		snprintf(path, sizeof(path), "%s/decode-walk-%uM.mtrace", dir, mib);
	snprintf(out, sizeof(out), "%s/bench-decode-%d.pftrace", dir, (int)getpid());
	if (stat(path, &sb) && (argc > 2 || make_bundle(path, mib)))
		return 1;
	if (run_child("none", path, out, &none) || run_child("bundle", path, out, &bun) ||
	    run_child("open", path, out, &open))
		return 1;
	/* Interleaved, best of REPEAT: the least disturbed run of each. */
	for (int k = 0; k < REPEAT; k++) {
		if (run_child("bare", path, out, &bare) || run_child("full", path, out, &one) ||
		    run_child("full2", path, out, &two)) {
			unlink(out);
			return 1;
		}
		bare_cpu = MIN(bare_cpu, bare.cpu);
		one_cpu = MIN(one_cpu, one.cpu);
		one_wall = MIN(one_wall, one.wall);
		two_wall = MIN(two_wall, two.wall);
		two_cpu = MIN(two_cpu, two.cpu);
		hwm = one.hwm > hwm ? one.hwm : hwm;
	}
	unlink(out);

	pt = (double)one.pt_bytes;
	ratio = bare_cpu / one_cpu;
	speedup = one_wall / two_wall;
	images = open.rss - bun.rss;
	rss_x = (hwm - none.hwm - images) / pt;
	printf("random walk over %s on 2 CPUs: %.1f MiB of PT, %llu instructions\n", WALK_LIB,
	       pt / 1048576.0, one.insns);
	printf("bare libipt: %.3f s CPU (%llu instructions)\n", bare_cpu, bare.insns);
	printf("mtrace, 1 job: %.3f s CPU, %.3f s wall; %llu events decoded, %llu written "
	       "(%.1f MB of Perfetto; frames deeper than the writer's cap are folded)\n", one_cpu,
	       one_wall, one.events, one.out_events, one.out_bytes / 1e6);
	printf("mtrace, 2 jobs: %.3f s CPU, %.3f s wall (best of %d each)\n", two_cpu, two_wall,
	       REPEAT);
	printf("peak RSS: process %.1f MB, bundle open %.1f MB, decoder open %.1f MB, "
	       "full decode %.1f MB\n", none.hwm / 1e6, bun.hwm / 1e6, open.hwm / 1e6, hwm / 1e6);
	snprintf(val, sizeof(val), "%.1f MB/s", pt / 1e6 / one_cpu);
	result("decode throughput, 1 job (PT)", val, "(info)", 1);
	snprintf(val, sizeof(val), "%.2f M/s", one.events / 1e6 / one_cpu);
	result("decode throughput, 1 job (events)", val, "(info)", 1);
	snprintf(val, sizeof(val), "%.1f MB/s", pt / 1e6 / bare_cpu);
	result("bare libipt block loop (PT)", val, "(info)", 1);
	snprintf(val, sizeof(val), "%.2fx", ratio);
	snprintf(tgt, sizeof(tgt), ">= %.2fx", TARGET_RATIO);
	result("decode / bare libipt throughput", val, tgt, ratio >= TARGET_RATIO);
	snprintf(val, sizeof(val), "%.2fx", speedup);
	snprintf(tgt, sizeof(tgt), ">= %.2fx", TARGET_SPEEDUP);
	result("decode 2 jobs / 1 job (2-CPU bundle, wall)", val, tgt, speedup >= TARGET_SPEEDUP);
	snprintf(val, sizeof(val), "%.1f MB", images / 1e6);
	result("decoder image cache (RSS)", val, "(info)", 1);
	snprintf(val, sizeof(val), "%.2fx", rss_x);
	snprintf(tgt, sizeof(tgt), "<= %.2fx + images", TARGET_RSS);
	result("decode peak RSS / PT bytes", val, tgt, rss_x <= TARGET_RSS);
	return 0;
}
