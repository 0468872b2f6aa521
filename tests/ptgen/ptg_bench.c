// SPDX-License-Identifier: MIT
/*
 * Generator benchmark: a random walk over this very executable, turned into
 * PT by the generator and decoded back by libipt's instruction decoder in
 * the same run. libipt is the baseline: the figure is the generator's speed
 * as a multiple of the decoder's on the same stream (absolute speeds on a
 * shared machine mean little). Prints bench/run.sh's RESULT lines.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptg_check.h"
#include "ptg_gen.h"
#include "ptg_sym.h"
#include "ptg_walk.h"

#define BENCH_INSNS 3000000
/* The generator should not be what makes fuzzing or benchmark set-up slow:
 * at least half as fast as decoding what it makes. */
#define BENCH_TARGET 0.5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct ptg_image img;
	struct ptg_insn_cache *ic;
	struct ptg_thread t;
	struct ptg_walk_cfg w = { .seed = 3, .insns = BENCH_INSNS };
	struct ptg_gen_cfg cfg;
	struct ptg_gen g;
	struct ptg_check r;
	uint64_t bias, *funcs;
	size_t nfuncs;
	double t0, gen, dec;

	if (len < 0)
		return 1;
	self[len] = 0;
	if (ptg_walk_bias(self, &bias) || ptg_image_load_elf(&img, self, bias) ||
	    !(ic = ptg_insn_cache_new(&img)) ||
	    ptg_sym_functions(self, bias, &img, &funcs, &nfuncs) ||
	    ptg_walk(&t, ic, funcs, nfuncs, &w)) {
		fprintf(stderr, "ptg_bench: cannot walk %s\n", self);
		return 1;
	}
	ptg_gen_cfg_default(&cfg);
	cfg.switch_pct = 0;
	t0 = now();
	if (ptg_gen_run(&g, &cfg, &t, 1, ic)) {
		fprintf(stderr, "ptg_bench: generator failed\n");
		return 1;
	}
	gen = now() - t0;
	t0 = now();
	if (ptg_check_cpu(&g, 0, &img, g.cpu[0].pkt.buf, g.cpu[0].pkt.len, &r)) {
		fprintf(stderr, "ptg_bench: round trip failed: %s\n", r.msg);
		return 1;
	}
	dec = now() - t0;
	printf("walk of %zu instructions: %zu PT bytes (%.1f per 1k); generator %.0f "
	       "instructions/s, libipt decode+compare %.0f instructions/s\n", t.n, g.cpu[0].pkt.len,
	       1000.0 * g.cpu[0].pkt.len / t.n, t.n / gen, t.n / dec);
	printf("RESULT ptgen speed / libipt insn decoder speed|%.2fx|>= %.2fx|%s\n", dec / gen,
	       BENCH_TARGET, dec / gen >= BENCH_TARGET ? "met" : "not met");
	ptg_gen_fini(&g);
	free(t.ip);
	free(t.async);
	free(funcs);
	ptg_insn_cache_free(ic);
	ptg_image_fini(&img);
	return 0;
}
