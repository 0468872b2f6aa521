// SPDX-License-Identifier: MIT
/*
 * Decoder speed and memory against baselines measured in the same run on
 * the same PT bytes and image:
 *  - baseline: a bare libipt block-decoder loop (sync, drain events,
 *    pt_blk_next until the end, forward sync after errors) over an image
 *    built straight from the bundle's maps: the floor for any decoder
 *    built on libipt;
 *  - mtrace: the whole decode as `mtrace-user decode` does it through the
 *    public API: block decoding, thread attribution, call stacks, symbols,
 *    the time-ordered merge and the Perfetto protobuf written to a file.
 * Each variant runs in a fresh process (this program re-executed), after
 * the PT is read; runs are interleaved (baseline, one job, two jobs) over
 * several rounds. Single-threaded figures use CPU time, the best round (the
 * least disturbed by other processes); the two-job speed-up is wall time,
 * the median of the rounds' ratios, only as good as the machine is idle,
 * so each figure carries the load average at its end. Each round also
 * runs two bare loops in two processes at once against one alone: what
 * the machine itself gives two independent jobs in the same rounds, which
 * a two-job figure is to be read against (virtual CPUs on a busy host, or
 * on one core's caches, give well under two).
 *
 * Two workloads, on two virtual CPUs each:
 *  - the random walk: the PT generator's walk over libcapstone (a real
 *    6.6 MB shared library the build depends on; its walk gives a steady
 *    ~210 bytes of PT per 1000 instructions, where libc's walk is
 *    dominated by syscalls and unknown AVX-512 code);
 *  - a call-heavy real program: workload_disasm (Capstone disassembling
 *    its own code with operand details: a call every few dozen
 *    instructions on a real call tree), single-stepped by the generator.
 * Both are made once with the generator built next to this benchmark
 * (O/rel/tests/ptgen/ptgen) and kept in O/bench. A third, the walk on one
 * CPU (16 MiB of PT), gives the two-job speed-up of a single busy stream,
 * and again with CYC packets (the same instructions, more PT).
 * A fourth, the generator's threads program doing the same work in 2 and
 * in 64 threads of one process, gives what a thread costs: one job's CPU
 * time per event with 64 threads over that with 2.
 *
 * Memory: peak RSS (VmHWM) of processes that (1) do nothing, (2) open the
 * bundle and read the PT, (3) do the same and open the decoder (images and
 * symbol tables: the image cache is (3) - (2), in RSS once set up, since
 * reading the PT peaks higher for a moment), (4) decode the bundle from
 * the file as the CLI does, the PT read only as the decoder asks for it.
 * The figure is (4) - (1) - image cache, over the PT bytes; a second
 * figure does (4) with three jobs, more than the walk's two CPUs, as on a
 * machine with more cores than the bundle has CPUs: each stream is then
 * split into pieces decoded ahead (as many helpers as the cores allow,
 * four at most). With a large
 * size (BENCH_DECODE_LARGE or --large) the same is measured on a second,
 * larger walk, and (4) - (1) of the two sizes compared: memory growth.
 *
 * Usage: bench_decode [--large MiB] [MiB of PT, default 64] [bundle]
 *        bench_decode --bundle MiB [CPUs [cyc]] the walk's bundle (made if missing;
 *                                               on 2 CPUs by default; cyc: with
 *                                               CYC packets)
 *        bench_decode --child MODE BUNDLE OUT   one variant alone (to profile)
 */
#include "bundle/bundle.h"
#include "decode/decode.h"
#include "out_perfetto/pfout.h"
#include "decode/ptconfig.h"

#include "bench_report.h"

#include <intel-pt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WALK_ROUNDS 3
#define PROGRAM_ROUNDS 5
#define WALK_LIB "/usr/lib/x86_64-linux-gnu/libcapstone.so.4"
/* Measured for that walk; a little low so the bundle reaches the size. */
#define WALK_BYTES_PER_KINSN 200
/* Bytes of code workload_disasm disassembles: 8M instructions, 1 MB of PT
 * (single-stepping runs at some 30 000 instructions/s here). */
#define PROGRAM_BYTES "10000"
/* The walk on one CPU: one stream, split into pieces with two jobs. */
#define BUSY_MIB 16
/* The threads program's rounds of work, shared among its threads: 3.3 M
 * instructions, some 7,000 context switches among 64 threads (a minute to
 * single-step). */
#define THREAD_WORK 3840
#define THREAD_ROUNDS 5
#define TARGET_RATIO 0.6	/* mtrace's CPU time over bare libipt's, inverted */
#define TARGET_SPEEDUP 1.7	/* two jobs over one, wall time */
#define TARGET_RSS 1.0		/* peak RSS over PT bytes, image cache aside */
#define TARGET_GROWTH 1.10	/* peak RSS of the large walk over the small one's */

/* CPU time of the process and of the calling thread, and wall time. */
struct times {
	double cpu, self, wall;
};

static double seconds(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static struct times now(void)
{
	return (struct times){ seconds(CLOCK_PROCESS_CPUTIME_ID), seconds(CLOCK_THREAD_CPUTIME_ID),
			       seconds(CLOCK_MONOTONIC) };
}

static struct times since(struct times t0)
{
	struct times t = now();

	return (struct times){ t.cpu - t0.cpu, t.self - t0.self, t.wall - t0.wall };
}

/* The one-minute load average: other processes make every figure noisier. */
static double load_average(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = -1;

	if (f && fscanf(f, "%lf", &l) != 1)
		l = -1;
	if (f)
		fclose(f);
	return l;
}

/*
 * Makes @path with the PT generator built next to this benchmark: @args
 * are its arguments after "-o FILE" (NULL-terminated). Written to a
 * temporary name and renamed, so an interrupted run leaves no bundle.
 */
static int generate(const char *path, const char *what, const char *const *args)
{
	char dir[PATH_MAX], gen[PATH_MAX + 32], tmp[PATH_MAX + 8];
	const char *argv[16] = { "ptgen", "-o", tmp };
	size_t n = 3;
	int status;
	pid_t pid;

	if (bench_self_dir(dir, sizeof(dir)))
		return -1;
	snprintf(gen, sizeof(gen), "%s/../rel/tests/ptgen/ptgen", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	while (*args && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = *args++;
	fprintf(stderr, "bench_decode: generating %s (%s, once)\n", path, what);
	pid = fork();
	if (pid == 0) {
		/* The traced program's output is no figure: keep it off stdout. */
		dup2(2, 1);
		execv(gen, (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || rename(tmp, path)) {
		fprintf(stderr, "bench_decode: generating %s failed (is %s built?)\n", path, gen);
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The random walk with @mib MiB of PT (without CYC packets; with them
 * more), made once and kept in this directory. */
static int walk_bundle(char *path, size_t len, unsigned int mib, unsigned int cpus, bool cyc)
{
	char dir[PATH_MAX - 64], n[32], c[16], what[64];
	unsigned long long insns = (unsigned long long)mib * 1048576 * 1000 / WALK_BYTES_PER_KINSN;
	const char *args[] = { "--walk", WALK_LIB, "--insns", n, "--cpus", c, cyc ? "--cyc" : NULL,
			       NULL };
	struct stat sb;

	if (bench_self_dir(dir, sizeof(dir)))
		return -1;
	if (cpus == 2 && !cyc)
		snprintf(path, len, "%s/decode-walk-%uM.mtrace", dir, mib);
	else
		snprintf(path, len, "%s/decode-walk-%uM-%ucpu%s.mtrace", dir, mib, cpus,
			 cyc ? "-cyc" : "");
	snprintf(n, sizeof(n), "%llu", insns);
	snprintf(c, sizeof(c), "%u", cpus);
	snprintf(what, sizeof(what), "a walk of %s instructions", n);
	return stat(path, &sb) ? generate(path, what, args) : 0;
}

/* The call-heavy program's trace, made once and kept in this directory. */
static int program_bundle(char *path, size_t len)
{
	char dir[PATH_MAX - 64], prog[PATH_MAX];
	const char *args[] = { "--cpus", "2", "--max-insns", "100000000", "--", prog,
			       PROGRAM_BYTES, NULL };
	struct stat sb;

	if (bench_self_dir(dir, sizeof(dir)))
		return -1;
	snprintf(path, len, "%s/decode-disasm-%s.mtrace", dir, PROGRAM_BYTES);
	snprintf(prog, sizeof(prog), "%s/workload_disasm", dir);
	if (!stat(path, &sb))
		return 0;
	return generate(path, "workload_disasm " PROGRAM_BYTES " single-stepped, minutes", args);
}

/* The threads program's trace with THREAD_WORK rounds among NTHREADS
 * threads on 2 CPUs, made once and kept in this directory. */
static int threads_bundle(char *path, size_t len, unsigned int nthreads)
{
	char dir[PATH_MAX - 64], prog[PATH_MAX], n[16], rounds[16];
	const char *args[] = { "--cpus", "2", "--slice", "500", "--", prog, n, rounds, NULL };
	struct stat sb;

	if (bench_self_dir(dir, sizeof(dir)))
		return -1;
	snprintf(path, len, "%s/decode-threads-%u.mtrace", dir, nthreads);
	snprintf(prog, sizeof(prog), "%s/../rel/tests/ptgen/programs/threads", dir);
	snprintf(n, sizeof(n), "%u", nthreads);
	snprintf(rounds, sizeof(rounds), "%u", THREAD_WORK / nthreads);
	if (!stat(path, &sb))
		return 0;
	return generate(path, "the threads program single-stepped, a minute", args);
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
	double stream;	/* CPU time of the busiest stream's decoding thread */
	uint64_t insns, events, out_events, out_bytes;
};

/* The whole decode to a Perfetto file, as the CLI does it. */
static int full_decode(struct mt_bundle_reader *r, unsigned int jobs, int sink_thread,
		       const char *out, struct full_result *res)
{
	struct mt_decode_opts o = { .jobs = jobs, .sink_thread = sink_thread };
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
	res->stream = (double)mt_decode_get_stats(d)->stream_cpu_ns / 1e9;
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
	double self;	/* CPU time of the decode's calling thread: the replay's */
	double stream;	/* the busiest stream's decoding thread's */
	double rss;	/* VmRSS with the reader (and decoder) open */
	unsigned long long pt_bytes, insns, events, out_events, out_bytes;
};

/* The jobs of a decoding child's MODE: "decode3" three, "fullN" N, else one. */
static unsigned int jobs_of(const char *mode)
{
	unsigned int n = 0;

	if (!strcmp(mode, "decode3"))
		return 3;
	return sscanf(mode, "full%u", &n) == 1 && n ? n : 1;
}

/* The decoder's sink_thread for MODE: "fullNs" 1 (on), "fullNm" -1 (on the
 * merge's thread), else 0 (as the machine suggests). */
static int sink_thread_of(const char *mode)
{
	unsigned int n;
	char c = 0;

	if (sscanf(mode, "full%u%c", &n, &c) < 2)
		return 0;
	return c == 's' ? 1 : c == 'm' ? -1 : 0;
}

/*
 * The child: MODE "none" (the bare process), "bundle" (reader open, PT
 * read), "open" (the same and the decoder open: images, symbols), "bare" (the libipt
 * loop), "full" or "fullN" (the decode with one or N jobs; "fullNs" and
 * "fullNm": the sink's calls on a thread of their own, or on the merge's,
 * whatever the machine),
 * "decode" (one job, as the CLI decodes a file), "decode3" (the same with
 * three jobs: on the walk's two CPUs, both streams in pieces). Except for
 * "decode" and "decode3", the PT is read (and decompressed) before the
 * clock starts, for every mode alike.
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
		/* Every timed mode holds the PT, so that "open" - "bundle" is
		 * what the decoder adds when it opens: images and symbol
		 * tables. "decode" reads it only as the decoder asks. */
		for (size_t i = 0; strncmp(mode, "decode", 6) && i < mt_bundle_pt_count(r); i++) {
			const uint8_t *data;
			size_t len;

			if (!mt_bundle_pt_data(r, i, &data, &len))
				res.pt_bytes += len;
		}
		if (!strcmp(mode, "bare")) {
			struct times t = { 0, 0, 0 };
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
			rc = full_decode(r, jobs_of(mode), sink_thread_of(mode), out, &fr);
			res.cpu = fr.t.cpu;
			res.self = fr.t.self;
			res.stream = fr.stream;
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
	printf("%.0f %.0f %.6f %.6f %.6f %.6f %llu %llu %llu %llu %llu\n", vm_status("VmHWM"),
	       res.rss, res.cpu, res.self, res.stream, res.wall, res.pt_bytes, res.insns, res.events,
	       res.out_events, res.out_bytes);
	return rc ? 1 : 0;
}

/* A child started and not yet waited for. */
struct child_run {
	pid_t pid;
	FILE *f;
};

/* Starts this program as a child in MODE; 0 or -1. */
static int start_child(const char *mode, const char *bundle, const char *out, struct child_run *c)
{
	int p[2];

	if (pipe(p))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl("/proc/self/exe", "bench_decode", "--child", mode, bundle, out, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	c->f = c->pid < 0 ? NULL : fdopen(p[0], "r");
	if (!c->f) {
		close(p[0]);
		if (c->pid > 0)
			waitpid(c->pid, NULL, 0);
		return -1;
	}
	return 0;
}

/* Reads a started child's line and waits for it; 0 or -1. */
static int finish_child(const char *mode, struct child_run *c, struct run *res)
{
	int status, got = fscanf(c->f, "%lf %lf %lf %lf %lf %lf %llu %llu %llu %llu %llu",
				 &res->hwm, &res->rss, &res->cpu, &res->self, &res->stream,
				 &res->wall, &res->pt_bytes, &res->insns, &res->events,
				 &res->out_events, &res->out_bytes);

	fclose(c->f);
	if (waitpid(c->pid, &status, 0) != c->pid || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    got != 11) {
		fprintf(stderr, "bench_decode: the %s run failed\n", mode);
		return -1;
	}
	return 0;
}

/* Runs this program as a child in MODE; 0 or -1. */
static int run_child(const char *mode, const char *bundle, const char *out, struct run *res)
{
	struct child_run c;

	if (start_child(mode, bundle, out, &c)) {
		fprintf(stderr, "bench_decode: the %s run failed\n", mode);
		return -1;
	}
	return finish_child(mode, &c, res);
}

/*
 * What the machine itself gives a second job: two bare loops on the same
 * bundle in two processes at once, against one alone, in wall time from
 * start to exit (PT read included in both). The two share nothing but the
 * machine, so the ratio is two only where the second core is as free and
 * as fast as the first; on virtual CPUs it moves from round to round with
 * the host's load.
 */
static int machine_pair(const char *bundle, const char *out, double *ratio)
{
	struct child_run c[2];
	struct run r[2];
	double t0 = seconds(CLOCK_MONOTONIC), alone, pair;
	int rc;

	if (run_child("bare", bundle, out, &r[0]))
		return -1;
	alone = seconds(CLOCK_MONOTONIC) - t0;
	t0 = seconds(CLOCK_MONOTONIC);
	if (start_child("bare", bundle, out, &c[0]))
		return -1;
	if (start_child("bare", bundle, out, &c[1])) {
		finish_child("bare", &c[0], &r[0]);
		return -1;
	}
	rc = finish_child("bare", &c[0], &r[0]);
	if (finish_child("bare", &c[1], &r[1]) || rc)
		return -1;
	pair = seconds(CLOCK_MONOTONIC) - t0;
	*ratio = 2 * alone / pair;
	return 0;
}

static void result(const char *fig, const char *val, const char *target, int met)
{
	printf("RESULT %s|%s|%s|%s\n", fig, val, target, met ? "met" : "not met");
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Speed on one workload: interleaved rounds of the three timed variants. */
struct speed {
	struct run bare, one, two;	/* the last round's (counts) */
	double bare_cpu, one_cpu, one_wall, two_cpu, two_wall;	/* best of the rounds */
	double speedup;			/* median of the rounds' one/two wall times */
	double machine;			/* median of the rounds' machine_pair() ratios */
	double replay;			/* the replay thread's share of one job's CPU time */
	double stream;			/* the busiest stream's share of it */
	double load;			/* load average after the last round */
};

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int measure_speed(const char *bundle, const char *out, int rounds, struct speed *sp)
{
	double ratio[16], machine[16];

	if (rounds < 1 || rounds > 16)
		return -1;
	sp->bare_cpu = sp->one_cpu = sp->one_wall = sp->two_cpu = sp->two_wall = 1e30;
	for (int k = 0; k < rounds; k++) {
		if (run_child("bare", bundle, out, &sp->bare) ||
		    run_child("full", bundle, out, &sp->one) ||
		    run_child("full2", bundle, out, &sp->two) ||
		    machine_pair(bundle, out, &machine[k])) {
			unlink(out);
			return -1;
		}
		sp->bare_cpu = MIN(sp->bare_cpu, sp->bare.cpu);
		sp->one_cpu = MIN(sp->one_cpu, sp->one.cpu);
		sp->one_wall = MIN(sp->one_wall, sp->one.wall);
		sp->two_cpu = MIN(sp->two_cpu, sp->two.cpu);
		sp->two_wall = MIN(sp->two_wall, sp->two.wall);
		ratio[k] = sp->one.wall / sp->two.wall;
		fprintf(stderr, "bench_decode: round %d: bare %.3f s CPU, 1 job %.3f s CPU %.3f s "
			"wall, 2 jobs %.3f s wall; two bare loops at once %.2fx one; load %.2f\n",
			k + 1, sp->bare.cpu, sp->one.cpu, sp->one.wall, sp->two.wall, machine[k],
			load_average());
	}
	unlink(out);
	sp->replay = sp->one.cpu > 0 ? sp->one.self / sp->one.cpu : 0;
	sp->stream = sp->one.cpu > 0 ? sp->one.stream / sp->one.cpu : 0;
	sp->speedup = median(ratio, rounds);
	sp->machine = median(machine, rounds);
	sp->load = load_average();
	return 0;
}

static double max3(double a, double b, double c)
{
	return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/*
 * What two jobs can gain over one at best on this machine's CORES, from
 * one job's split of the CPU time (the total taken as 1): the replay
 * thread's share R beside the decoding threads' D = 1 - R, of which the
 * busiest stream's thread took S. The replay runs in a thread of its own,
 * beside one decoding job already, so one job takes at least
 * max(D, R, 1/CORES) in wall time, and two at least max(R, D/2, S,
 * 1/CORES): one stream is decoded by one thread (two jobs take a second
 * for a stream only beside fewer streams than jobs, or a stream well
 * above its share: not on the two workloads this bound is for).
 */
static double two_job_bound(double r, double s, long cores)
{
	double d = 1 - r, n = cores > 0 ? (double)cores : 1;

	return max3(d, r, 1 / n) / max3(r, d / 2 > s ? d / 2 : s, 1 / n);
}

/* The speed figures of one workload, each with the load average. */
static void speed_results(const char *name, const struct speed *sp)
{
	double ratio = sp->bare_cpu / sp->one_cpu;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	char fig[160], val[64], tgt[32];

	snprintf(fig, sizeof(fig), "decode / bare libipt, %s (CPU)", name);
	snprintf(val, sizeof(val), "%.2fx (load %.1f)", ratio, sp->load);
	snprintf(tgt, sizeof(tgt), ">= %.2fx", TARGET_RATIO);
	result(fig, val, tgt, ratio >= TARGET_RATIO);
	snprintf(fig, sizeof(fig), "decode 2 jobs / 1 job, %s (wall)", name);
	snprintf(val, sizeof(val), "%.2fx (load %.1f)", sp->speedup, sp->load);
	snprintf(tgt, sizeof(tgt), ">= %.2fx", TARGET_SPEEDUP);
	result(fig, val, tgt, sp->speedup >= TARGET_SPEEDUP);
	snprintf(fig, sizeof(fig), "two bare loops at once / one, %s (wall: what %ld cores gave "
		 "two independent jobs in the same rounds)", name, cores);
	snprintf(val, sizeof(val), "%.2fx", sp->machine);
	result(fig, val, "(info)", 1);
	snprintf(fig, sizeof(fig),
		 "decode 2 jobs / 1 job at best, %s (replay %.0f%%, busiest stream %.0f%% of CPU, %ld cores)",
		 name, 100 * sp->replay, 100 * sp->stream, cores);
	snprintf(val, sizeof(val), "%.2fx", two_job_bound(sp->replay, sp->stream, cores));
	result(fig, val, "(info)", 1);
}

/*
 * One busy CPU: two jobs split its stream into pieces that two helpers
 * decode ahead (decode/blksplit.h), where they used to leave the second
 * core to the replay alone; with CYC packets, each piece starts with the
 * cycles' chain read from the stream before it. No bound: the threads'
 * shares are in the two-job run.
 */
static void busy_cpu_results(const char *name, const struct speed *sp)
{
	char fig[160], val[64];

	printf("%s: %.1f MiB of PT; mtrace 1 job %.3f s wall, 2 jobs %.3f s "
	       "wall (best of %d), their busiest decoding thread %.0f%% of their CPU time\n",
	       name, sp->one.pt_bytes / 1048576.0, sp->one_wall, sp->two_wall, WALK_ROUNDS,
	       sp->two.cpu > 0 ? 100 * sp->two.stream / sp->two.cpu : 0);
	snprintf(fig, sizeof(fig), "decode 2 jobs / 1 job, %s (wall)", name);
	snprintf(val, sizeof(val), "%.2fx (load %.1f)", sp->speedup, sp->load);
	result(fig, val, "(info)", 1);
}

/*
 * What a thread costs: one job's CPU time per event on the same work in
 * 64 threads over 2, from interleaved rounds (best of each). The merge
 * and the context-switch sideband once grew with the threads and the
 * switches; no target, nothing should.
 */
static int threads_results(const char *few, const char *many)
{
	double best[2] = { 1e30, 1e30 };
	struct run r[2];
	char out[PATH_MAX + 16], val[64];
	int rc = 0;

	snprintf(out, sizeof(out), "%s.pftrace", many);
	for (int k = 0; k < THREAD_ROUNDS && !rc; k++)
		for (int i = 0; i < 2 && !rc; i++)
			if (!(rc = run_child("full", i ? many : few, out, &r[i])) && r[i].cpu < best[i])
				best[i] = r[i].cpu;
	unlink(out);
	if (rc || !r[0].events || !r[1].events)
		return -1;
	printf("threads program on 2 CPUs, 1 job: 2 threads %llu events %.3f s CPU, 64 threads "
	       "%llu events %.3f s CPU (best of %d)\n", r[0].events, best[0], r[1].events, best[1],
	       THREAD_ROUNDS);
	snprintf(val, sizeof(val), "%.2fx (load %.1f)",
		 best[1] / (double)r[1].events / (best[0] / (double)r[0].events), load_average());
	result("decode CPU per event, 64 threads / 2 threads", val, "(info)", 1);
	return 0;
}

/*
 * Memory on one bundle: the set-up processes and the decode from the file,
 * with one job and with three (more jobs than the walk's CPUs: each stream
 * split into pieces, whose helpers each hold a piece decoded ahead).
 */
struct memory {
	struct run bun, open, dec, dec3;
	double images;	/* the decoder's image cache: "open" - "bundle" in RSS */
	double peak;	/* the decode's peak RSS over the idle process's */
	double x, x3;	/* (peak - images) / PT bytes, one job and three */
};

static int measure_memory(const char *bundle, const char *out, const struct run *none,
			  struct memory *m)
{
	int rc = run_child("bundle", bundle, out, &m->bun) ||
		 run_child("open", bundle, out, &m->open) ||
		 run_child("decode", bundle, out, &m->dec) ||
		 run_child("decode3", bundle, out, &m->dec3);

	unlink(out);
	if (rc)
		return -1;
	m->images = m->open.rss - m->bun.rss;
	m->peak = m->dec.hwm - none->hwm;
	m->x = (m->peak - m->images) / (double)m->bun.pt_bytes;
	m->x3 = (m->dec3.hwm - none->hwm - m->images) / (double)m->bun.pt_bytes;
	return 0;
}

static void memory_results(unsigned int mib, const struct memory *m)
{
	char fig[96], val[64], tgt[32];

	printf("%u MiB walk: %.1f MiB of PT; peak RSS: bundle open %.1f MB, decoder open "
	       "%.1f MB, decode from the file %.1f MB (%.1f s CPU)\n", mib,
	       m->bun.pt_bytes / 1048576.0, m->bun.hwm / 1e6, m->open.hwm / 1e6, m->dec.hwm / 1e6,
	       m->dec.cpu);
	snprintf(fig, sizeof(fig), "decoder image cache (RSS), %u MiB", mib);
	snprintf(val, sizeof(val), "%.1f MB", m->images / 1e6);
	result(fig, val, "(info)", 1);
	snprintf(fig, sizeof(fig), "decode peak RSS / PT bytes, %u MiB", mib);
	snprintf(val, sizeof(val), "%.2fx", m->x);
	snprintf(tgt, sizeof(tgt), "<= %.2fx + images", TARGET_RSS);
	result(fig, val, tgt, m->x <= TARGET_RSS);
	snprintf(fig, sizeof(fig), "decode peak RSS / PT bytes, %u MiB, 3 jobs (streams in pieces)",
		 mib);
	snprintf(val, sizeof(val), "%.2fx", m->x3);
	result(fig, val, tgt, m->x3 <= TARGET_RSS);
}

/* The large walk's size: --large MIB, else $BENCH_DECODE_LARGE; 0: none,
 * UINT_MAX: not a number. */
static unsigned int large_size(int *argc, char ***argv)
{
	const char *v = getenv("BENCH_DECODE_LARGE");
	unsigned long n;
	char *end;

	if (*argc > 2 && !strcmp((*argv)[1], "--large")) {
		v = (*argv)[2];
		*argc -= 2;
		*argv += 2;
	}
	if (!v || !*v)
		return 0;
	n = strtoul(v, &end, 10);
	return *end || n > 4096 ? UINT_MAX : (unsigned int)n;
}

int main(int argc, char **argv)
{
	unsigned int mib = 64, large;
	char dir[PATH_MAX - 64], path[PATH_MAX], big[PATH_MAX], prog[PATH_MAX], out[PATH_MAX],
	     busy[PATH_MAX], busy_cyc[PATH_MAX], few[PATH_MAX], many[PATH_MAX];
	char val[64];
	struct run none;
	struct speed walk, call, one_cpu, one_cpu_cyc;
	struct memory mem, mem_big;
	double pt;

	if (argc == 5 && !strcmp(argv[1], "--child"))
		return child(argv[2], argv[3], argv[4]);
	if (argc >= 3 && argc <= 5 && !strcmp(argv[1], "--bundle")) {
		unsigned int cpus = argc >= 4 ? (unsigned int)strtoul(argv[3], NULL, 10) : 2;
		bool cyc = argc == 5 && !strcmp(argv[4], "cyc");

		mib = (unsigned int)strtoul(argv[2], NULL, 10);
		if (!mib || mib > 4096 || !cpus || cpus > 64 || (argc == 5 && !cyc)) {
			fprintf(stderr, "usage: bench_decode --bundle MiB (1..4096) [CPUs (1..64) [cyc]]\n");
			return 2;
		}
		if (walk_bundle(path, sizeof(path), mib, cpus, cyc))
			return 1;
		printf("%s\n", path);
		return 0;
	}
	large = large_size(&argc, &argv);
	if (argc > 1)
		mib = (unsigned int)strtoul(argv[1], NULL, 10);
	if (!mib || mib > 4096 || large == UINT_MAX || (large && large <= mib) ||
	    bench_self_dir(dir, sizeof(dir))) {
		fprintf(stderr, "usage: bench_decode [--large MiB] [MiB of PT 1..4096] [bundle], "
			"--large (or BENCH_DECODE_LARGE) above the first size\n");
		return 2;
	}
	snprintf(out, sizeof(out), "%s/bench-decode-%d.pftrace", dir, (int)getpid());
	if (argc > 2)
		snprintf(path, sizeof(path), "%s", argv[2]);
	else if (walk_bundle(path, sizeof(path), mib, 2, false))
		return 1;
	if (program_bundle(prog, sizeof(prog)) || (large && walk_bundle(big, sizeof(big), large, 2, false)) ||
	    walk_bundle(busy, sizeof(busy), BUSY_MIB, 1, false) ||
	    walk_bundle(busy_cyc, sizeof(busy_cyc), BUSY_MIB, 1, true) ||
	    threads_bundle(few, sizeof(few), 2) ||
	    threads_bundle(many, sizeof(many), 64))
		return 1;
	if (run_child("none", path, out, &none) || measure_memory(path, out, &none, &mem) ||
	    measure_speed(path, out, WALK_ROUNDS, &walk) ||
	    measure_speed(prog, out, PROGRAM_ROUNDS, &call) ||
	    measure_speed(busy, out, WALK_ROUNDS, &one_cpu) ||
	    measure_speed(busy_cyc, out, WALK_ROUNDS, &one_cpu_cyc) ||
	    (large && measure_memory(big, out, &none, &mem_big)))
		return 1;

	pt = (double)walk.one.pt_bytes;
	printf("random walk over %s on 2 CPUs: %.1f MiB of PT, %llu instructions\n", WALK_LIB,
	       pt / 1048576.0, walk.one.insns);
	printf("bare libipt: %.3f s CPU (%llu instructions)\n", walk.bare_cpu, walk.bare.insns);
	printf("mtrace, 1 job: %.3f s CPU, %.3f s wall; %llu events decoded, %llu written "
	       "(%.1f MB of Perfetto; frames deeper than the writer's cap are folded)\n",
	       walk.one_cpu, walk.one_wall, walk.one.events, walk.one.out_events,
	       walk.one.out_bytes / 1e6);
	printf("mtrace, 2 jobs: %.3f s CPU, %.3f s wall (best of %d each)\n", walk.two_cpu,
	       walk.two_wall, WALK_ROUNDS);
	printf("peak RSS: process %.1f MB, full decode (PT read first) %.1f MB\n", none.hwm / 1e6,
	       walk.one.hwm / 1e6);
	printf("call-heavy program (workload_disasm %s, single-stepped) on 2 CPUs: %.2f MiB of "
	       "PT, %llu instructions, %llu events; bare libipt %.3f s CPU, mtrace 1 job %.3f s "
	       "CPU, 2 jobs %.3f s wall against %.3f s (best of %d)\n", PROGRAM_BYTES,
	       call.one.pt_bytes / 1048576.0, call.one.insns, call.one.events, call.bare_cpu,
	       call.one_cpu, call.two_wall, call.one_wall, PROGRAM_ROUNDS);
	snprintf(val, sizeof(val), "%.1f MB/s", pt / 1e6 / walk.one_cpu);
	result("decode throughput, 1 job (PT)", val, "(info)", 1);
	snprintf(val, sizeof(val), "%.2f M/s", walk.one.events / 1e6 / walk.one_cpu);
	result("decode throughput, 1 job (events)", val, "(info)", 1);
	snprintf(val, sizeof(val), "%.1f MB/s", pt / 1e6 / walk.bare_cpu);
	result("bare libipt block loop (PT)", val, "(info)", 1);
	speed_results("walk", &walk);
	speed_results("call-heavy program", &call);
	busy_cpu_results("walk on one CPU", &one_cpu);
	busy_cpu_results("walk on one CPU with CYC", &one_cpu_cyc);
	if (threads_results(few, many))
		return 1;
	memory_results(mib, &mem);
	if (large) {
		char fig[96], tgt[32];
		double growth = mem_big.peak / mem.peak;

		memory_results(large, &mem_big);
		snprintf(fig, sizeof(fig), "peak RSS %u / %u MiB (memory growth)", large, mib);
		snprintf(val, sizeof(val), "%.2fx", growth);
		snprintf(tgt, sizeof(tgt), "<= %.2fx", TARGET_GROWTH);
		result(fig, val, tgt, growth <= TARGET_GROWTH);
	}
	return 0;
}
