// SPDX-License-Identifier: MIT
/*
 * Decoder throughput on a large random-walk bundle, against a baseline
 * measured in the same run on the same PT bytes and the same image:
 *  - baseline: a bare libipt block-decoder loop (sync, drain events,
 *    pt_blk_next until the end of the trace, forward sync after errors):
 *    the floor for any decoder built on libipt;
 *  - mtrace: mt_decode_run() into a sink that counts events: block
 *    decoding, thread attribution, call-stack rebuild, symbol lookup and
 *    the time-ordered merge, without output formatting.
 * Both run single-threaded (one CPU stream, one job) and are timed in
 * process CPU time, best of three.
 *
 * The bundle: the PT generator's random walk (--walk) over libcapstone, a
 * real shared library the build depends on anyway, made by the generator
 * built next to this benchmark (O/rel/tests/ptgen/ptgen).
 *
 * Usage: bench_decode [million instructions, default 20] [directory, default $TMPDIR or /tmp]
 */
#include "bundle/bundle.h"
#include "decode/decode.h"
#include "decode/procmap.h"
#include "decode/ptconfig.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPEAT 3
#define WALK_LIB "/usr/lib/x86_64-linux-gnu/libcapstone.so.4"
/* mtrace may cost this much more than bare libipt. */
#define TARGET_RATIO 2.0

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int make_bundle(const char *path, unsigned int minsns)
{
	char self[PATH_MAX], cmd[3 * PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');	/* O/bench/bench_decode → O */
	if (!slash)
		return -1;
	*slash = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(cmd, sizeof(cmd), "'%s/rel/tests/ptgen/ptgen' --walk %s --insns %u000000 -o '%s'",
		 self, WALK_LIB, minsns, path);
	if (system(cmd)) {
		fprintf(stderr, "bench_decode: generating the bundle failed (build %s/rel/tests/ptgen/ptgen)\n",
			self);
		return -1;
	}
	return 0;
}

/* The baseline: every CPU stream through a bare block-decoder loop. */
static double bare_libipt(struct mt_bundle_reader *r, uint64_t *insns)
{
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	const struct mt_bundle_map *maps;
	struct mt_bundle_pt_config_desc ptc;
	struct mt_bundle_cpu_desc cpu;
	struct mt_bincache bins;
	struct mt_proc proc;
	struct pt_config cfg;
	char err[256];
	size_t nmaps = mt_bundle_maps(r, &maps);
	double t0;

	mt_bincache_init(&bins, r, NULL);
	mt_bundle_get_cpu(r, &cpu);
	mt_bundle_get_pt_config(r, &ptc);
	if (mt_decode_pt_config(&cpu, &ptc, &cfg, err, sizeof(err)) < 0 || !nmaps ||
	    mt_proc_build(&proc, maps[0].pid, maps, nmaps, &bins, isc, NULL, NULL))
		return -1;
	*insns = 0;
	t0 = now();
	for (size_t i = 0; i < mt_bundle_pt_count(r); i++) {
		struct pt_block_decoder *dec;
		const uint8_t *data;
		size_t len;
		int st;

		mt_bundle_pt_data(r, i, &data, &len);
		cfg.begin = (uint8_t *)data;
		cfg.end = (uint8_t *)data + len;
		dec = pt_blk_alloc_decoder(&cfg);
		pt_blk_set_image(dec, proc.image);
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
	t0 = now() - t0;
	mt_proc_fini(&proc);
	mt_bincache_fini(&bins);
	pt_iscache_free(isc);
	return t0;
}

static int count_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	(void)pid, (void)tid, (void)ns, (void)ev;
	++*(uint64_t *)ctx;
	return 0;
}

static double full_decode(struct mt_bundle_reader *r, uint64_t *events, uint64_t *insns)
{
	struct mt_decode_opts o = { .jobs = 1 };
	struct mt_decode_sink sink = { NULL, count_event, NULL, events };
	struct mt_decode *d;
	char err[512];
	double t0 = now();

	*events = 0;
	if (mt_decode_open(&d, r, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_decode: %s\n", err);
		return -1;
	}
	if (mt_decode_run(d, &sink)) {
		mt_decode_free(d);
		return -1;
	}
	*insns = mt_decode_get_stats(d)->insns;
	mt_decode_free(d);
	return now() - t0;
}

int main(int argc, char **argv)
{
	unsigned int minsns = argc > 1 ? (unsigned int)atoi(argv[1]) : 20;
	const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	double bare = 1e30, full = 1e30;
	uint64_t bytes = 0, events = 0, bare_insns = 0, insns = 0;
	struct mt_bundle_reader *r;
	char path[PATH_MAX], err[512];
	double ratio;

	snprintf(path, sizeof(path), "%s/bench_decode.%d.mtrace", dir, (int)getpid());
	if (!minsns || make_bundle(path, minsns))
		return 1;
	if (mt_bundle_open(&r, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_decode: %s\n", err);
		unlink(path);
		return 1;
	}
	for (size_t i = 0; i < mt_bundle_pt_count(r); i++) {
		const uint8_t *data;
		size_t len;

		mt_bundle_pt_data(r, i, &data, &len);
		bytes += len;
	}
	for (int k = 0; k < REPEAT; k++) {
		double b = bare_libipt(r, &bare_insns), f = full_decode(r, &events, &insns);

		if (b < 0 || f < 0) {
			fprintf(stderr, "bench_decode: decoding failed\n");
			mt_bundle_close(r);
			unlink(path);
			return 1;
		}
		bare = b < bare ? b : bare;
		full = f < full ? f : full;
	}
	mt_bundle_close(r);
	unlink(path);
	ratio = full / bare;
	printf("random walk over %s: %u M instructions, %.1f MB of PT, %llu events\n", WALK_LIB,
	       minsns, bytes / 1e6, (unsigned long long)events);
	printf("bare libipt: %.3f s (%llu instructions), mtrace decode: %.3f s (%llu instructions)\n",
	       bare, (unsigned long long)bare_insns, full, (unsigned long long)insns);
	printf("RESULT decode throughput (PT)|%.1f MB/s|(info)|met\n", bytes / 1e6 / full);
	printf("RESULT decode throughput (events)|%.2f M events/s|(info)|met\n", events / 1e6 / full);
	printf("RESULT bare libipt block loop (PT)|%.1f MB/s|(info)|met\n", bytes / 1e6 / bare);
	printf("RESULT mtrace decode time / bare libipt loop|%.2fx|<= %.2fx|%s\n", ratio,
	       TARGET_RATIO, ratio <= TARGET_RATIO ? "met" : "not met");
	return 0;
}
