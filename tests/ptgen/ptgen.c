// SPDX-License-Identifier: MIT
/*
 * ptgen: makes hardware-exact Intel PT traces of real programs (single-
 * stepped) or of random walks over a binary's code, with ground truth.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "ptg_bundle.h"
#include "ptg_check.h"
#include "ptg_gen.h"
#include "ptg_sym.h"
#include "ptg_trace.h"
#include "ptg_kwalk.h"
#include "ptg_ukwalk.h"
#include "ptg_walk.h"

static const char usage[] =
	"usage: ptgen [options] -- PROGRAM [ARGS...]\n"
	"       ptgen [options] --walk BINARY\n"
	"       ptgen [options] --kwalk BUNDLE\n"
	"Single-steps PROGRAM from --start (default main) until it returns, or\n"
	"walks BINARY's code at random, and writes the Intel PT trace user-only\n"
	"tracing would produce, as a bundle and/or a ground-truth file.\n"
	"  -o, --output FILE      write a snapshot bundle\n"
	"  -t, --truth FILE       write the ground truth (docs/ptgen.md)\n"
	"      --start SYM        start symbol in PROGRAM (main)\n"
	"      --walk BINARY      random walk over BINARY (executable or library)\n"
	"      --kwalk BUNDLE     random walk over BUNDLE's kernel text (kernel-only\n"
	"                         tracing; --start/--trigger name kernel symbols)\n"
	"      --with-kernel BUNDLE  with --walk: user and kernel traced together; system\n"
	"                         calls and interrupts run random walks over BUNDLE's\n"
	"                         kernel text from entry_SYSCALL_64 and\n"
	"                         asm_sysvec_apic_timer_interrupt back to user space\n"
	"      --irq-every N      with --with-kernel: an interrupt every N user\n"
	"                         instructions on average (5000; 0: none)\n"
	"      --insns N          walk length in instructions (1000000)\n"
	"      --piece N          walk and generate N instructions at a time (16M), so\n"
	"                         that memory does not grow with --insns; 0: the whole\n"
	"                         walk at once (always with --check, --truth, --kwalk,\n"
	"                         --with-kernel, which need it whole)\n"
	"      --loop-pct P       walk: take backward conditional branches P% of the\n"
	"                         time (loop-heavy code; default 50% like the others)\n"
	"      --bias ADDR        load bias of the walked BINARY (default: 0 for ET_EXEC,\n"
	"                         a fixed base otherwise); a running copy's base here\n"
	"                         makes a trace of that process\n"
	"      --tsc0 N|now       synthetic time of the first packet (1000000); now: this\n"
	"                         CPU's TSC, for a stream fed to a live (simulated) ring\n"
	"      --raw FILE         write each CPU's whole packet stream, unwrapped, to\n"
	"                         FILE (one CPU) or FILE.N (CPU N)\n"
	"      --cpus N           virtual CPUs (1)\n"
	"      --slice N          time slice in instructions (3000)\n"
	"      --switch-pct P     % of syscalls that switch the thread out (30)\n"
	"      --psb-freq N       RTIT_CTL.PSBFreq: a PSB every 2^(11+N) bytes (1)\n"
	"      --mtc-freq N       RTIT_CTL.MTCFreq (3)\n"
	"      --cyc              cycle-accurate mode (CYCEn, CycThresh 0)\n"
	"      --short-tnt        only 6-bit TNT packets (no 47-bit TNT)\n"
	"      --no-retcomp       DisRETC: no RET compression\n"
	"      --ring-size BYTES  keep what a ring of this size holds at the freeze\n"
	"      --trigger SYM[:N]  freeze at the N-th execution of SYM (N=1)\n"
	"      --overflow N:L     internal buffer overflow every N instructions, L long\n"
	"      --seed N           scheduling / walk seed (1)\n"
	"      --embed            embed every mapped file in the bundle\n"
	"      --check            decode with libipt and compare with the truth\n"
	"      --stats            print sizes, PT bytes per 1k instructions and speed\n"
	"      --max-insns N      stop single-stepping after N instructions (10M)\n";

struct opts {
	const char *out, *truth, *start, *walk, *trigger, *raw, *with_kernel;
	unsigned hit;
	bool embed, check, stats, kernel, has_bias;
	uint64_t bias;
	size_t insns, max_insns, irq_every, piece;
	unsigned loop_pct;
	struct ptg_gen_cfg gen;
};

static int parse_num(const char *name, const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || *v > max) {
		fprintf(stderr, "ptgen: --%s: '%s' is not a number from 0 to %" PRIu64 "\n", name, s,
			max);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "output", 1, 0, 'o' }, { "truth", 1, 0, 't' }, { "start", 1, 0, 's' },
		{ "walk", 1, 0, 'w' }, { "kwalk", 1, 0, 'K' }, { "insns", 1, 0, 'n' }, { "cpus", 1, 0, 'c' },
		{ "slice", 1, 0, 'l' }, { "switch-pct", 1, 0, 'p' }, { "psb-freq", 1, 0, 'P' },
		{ "mtc-freq", 1, 0, 'M' }, { "short-tnt", 0, 0, 'T' }, { "cyc", 0, 0, 'C' }, { "no-retcomp", 0, 0, 'R' },
		{ "ring-size", 1, 0, 'r' }, { "trigger", 1, 0, 'g' }, { "overflow", 1, 0, 'O' },
		{ "seed", 1, 0, 'S' }, { "embed", 0, 0, 'e' }, { "check", 0, 0, 'k' },
		{ "stats", 0, 0, 'x' }, { "max-insns", 1, 0, 'm' }, { "help", 0, 0, 'h' },
		{ "bias", 1, 0, 'B' }, { "tsc0", 1, 0, 'Z' }, { "raw", 1, 0, 'W' },
		{ "with-kernel", 1, 0, 'U' }, { "irq-every", 1, 0, 'I' }, { "loop-pct", 1, 0, 'L' },
		{ "piece", 1, 0, 'N' },
		{ 0 }
	};
	uint64_t v;
	int c, err = 0;
	char *colon;

	ptg_gen_cfg_default(&o->gen);
	o->insns = 1000000;
	o->irq_every = 5000;
	o->piece = 16u << 20;
	while (!err && (c = getopt_long(argc, argv, "o:t:h", lopts, NULL)) != -1) {
		char *n = optarg;

		switch (c) {
		case 'o': o->out = n; break;
		case 't': o->truth = n; break;
		case 's': o->start = n; break;
		case 'w': o->walk = n; break;
		case 'K': o->walk = n; o->kernel = true; break;
		case 'U': o->with_kernel = n; break;
		case 'I': err = parse_num("irq-every", n, SIZE_MAX, &v); o->irq_every = v; break;
		case 'L': err = parse_num("loop-pct", n, 100, &v); o->loop_pct = (unsigned)v; break;
		case 'g':
			o->trigger = n;
			o->hit = 1;
			colon = strchr(n, ':');
			if (colon) {
				*colon = 0;
				err = parse_num("trigger", colon + 1, UINT32_MAX, &v);
				o->hit = (unsigned)v;
			}
			if (!err && (!o->hit || !*o->trigger)) {
				fprintf(stderr, "ptgen: --trigger wants SYM or SYM:N with N >= 1\n");
				err = -1;
			}
			break;
		case 'O':
			colon = strchr(n, ':');
			if (!colon) {
				fprintf(stderr, "ptgen: --overflow wants N:L\n");
				err = -1;
				break;
			}
			*colon = 0;
			err = parse_num("overflow", n, SIZE_MAX, &v);
			o->gen.ovf_every = v;
			if (!err)
				err = parse_num("overflow", colon + 1, SIZE_MAX, &v);
			o->gen.ovf_len = v;
			break;
		case 'n': err = parse_num("insns", n, 1ull << 40, &v); o->insns = v; break;
		case 'N': err = parse_num("piece", n, SIZE_MAX, &v); o->piece = v; break;
		case 'c': err = parse_num("cpus", n, 256, &v); o->gen.ncpu = (unsigned)v; break;
		case 'l': err = parse_num("slice", n, SIZE_MAX, &v); o->gen.slice_insns = v; break;
		case 'p': err = parse_num("switch-pct", n, 100, &v); o->gen.switch_pct = (unsigned)v; break;
		case 'P':
			err = parse_num("psb-freq", n, 15, &v);
			o->gen.pkt.psb_period = 2048u << v;
			break;
		case 'M': err = parse_num("mtc-freq", n, 15, &v); o->gen.pkt.mtc_freq = (uint8_t)v; break;
		case 'T': o->gen.pkt.tnt_max = 6; break;
		case 'C': o->gen.pkt.cyc = true; break;
		case 'R': o->gen.pkt.ret_compression = false; break;
		case 'r': err = parse_num("ring-size", n, SIZE_MAX, &v); o->gen.ring_size = v; break;
		case 'S': err = parse_num("seed", n, UINT64_MAX, &v); o->gen.seed = v; break;
		case 'e': o->embed = true; break;
		case 'k': o->check = true; break;
		case 'x': o->stats = true; break;
		case 'm': err = parse_num("max-insns", n, SIZE_MAX, &v); o->max_insns = v; break;
		case 'B': err = parse_num("bias", n, UINT64_MAX, &o->bias); o->has_bias = true; break;
		case 'Z':
			if (!strcmp(n, "now"))
				o->gen.tsc0 = __rdtsc();
			else
				err = parse_num("tsc0", n, UINT64_MAX >> 8, &o->gen.tsc0);
			break;
		case 'W': o->raw = n; break;
		case 'h': fputs(usage, stdout); exit(0);
		default: err = -1; break;
		}
	}
	if (!err && !o->walk == (optind >= argc)) {
		fprintf(stderr, "ptgen: give either a PROGRAM after -- or --walk BINARY\n");
		err = -1;
	}
	if (!err && o->has_bias && (!o->walk || o->kernel)) {
		fprintf(stderr, "ptgen: --bias applies to --walk only\n");
		err = -1;
	}
	if (!err && o->with_kernel && (!o->walk || o->kernel)) {
		fprintf(stderr, "ptgen: --with-kernel applies to --walk only\n");
		err = -1;
	}
	if (!err && o->kernel && o->embed) {
		fprintf(stderr, "ptgen: --kwalk maps no files: --embed does not apply\n");
		err = -1;
	}
	if (!err && !o->gen.ncpu) {
		fprintf(stderr, "ptgen: --cpus must be at least 1\n");
		err = -1;
	}
	if (!err && (!o->gen.slice_insns || !o->insns)) {
		fprintf(stderr, "ptgen: --slice and --insns must be at least 1\n");
		err = -1;
	}
	if (err)
		fprintf(stderr, "ptgen: try --help\n");
	return err;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The kernel walk: image, entries and symbols from a bundle (ptg_kwalk.h). */
static int kwalk(struct ptg_run *run, struct opts *o, struct ptg_insn_cache **ic,
		 struct ptg_walk_cfg *w)
{
	uint64_t *funcs = NULL;
	size_t nfuncs;
	int err = ptg_kwalk_load(o->walk, &run->image, &funcs, &nfuncs);

	if (!err && !(*ic = ptg_insn_cache_new(&run->image)))
		err = -ENOMEM;
	if (!err && o->start)
		err = ptg_kwalk_symbols(o->walk, &o->start, &w->start, 1);
	if (!err)
		err = ptg_walk(run->thr, *ic, funcs, nfuncs, w);
	if (!err && o->trigger)
		err = ptg_kwalk_symbols(o->walk, &o->trigger, &o->gen.trigger_ip, 1);
	free(funcs);
	return err;
}

/* --with-kernel: the kernel's part of the user walk (ptg_ukwalk.h). */
static int add_kernel(struct ptg_run *run, struct opts *o, struct ptg_insn_cache *ic,
		      const uint64_t *kfuncs, size_t nkfuncs)
{
	struct ptg_ukwalk_cfg u = {
		.seed = o->gen.seed ^ 0x9e3779b97f4a7c15ull, .irq_every = o->irq_every,
		.kinsns_min = 200, .kinsns_max = 3000,
	};
	static const char *const names[] = {
		"entry_SYSCALL_64", "asm_sysvec_apic_timer_interrupt", "native_irq_return_iret",
	};
	struct ptg_ukwalk_stats st;
	uint64_t addr[3];
	int err = ptg_kwalk_symbols(o->with_kernel, names, addr, 3);

	if (!err) {
		u.syscall_entry = addr[0];
		u.irq_entry = addr[1];
		err = ptg_ukwalk_find_exit(ic, addr[2], &u.exit_ip);
	}
	if (!err)
		err = ptg_ukwalk_splice(run->thr, ic, kfuncs, nkfuncs, &u, &st);
	if (!err && o->stats)
		printf("kernel: %zu system calls, %zu interrupts, %zu kernel instructions\n",
		       st.syscalls, st.irqs, st.kernel_insns);
	o->gen.kernel_traced = true;
	return err;
}

/* A user walk made and generated a piece at a time (--piece). */
struct pieces {
	struct ptg_walker w;
	struct ptg_walk_cfg cfg;
	struct ptg_thread *thr;
	size_t piece;
};

static int next_piece(void *ctx, size_t t)
{
	struct pieces *p = ctx;

	(void)t;	/* a walk has one thread */
	return ptg_walker_next(&p->w, p->thr, p->piece);
}

/* The walk's first piece, the rest left to the generator. */
static int walk_pieces(struct ptg_run *run, struct opts *o, struct ptg_insn_cache *ic,
		       const uint64_t *funcs, size_t nfuncs, struct pieces *p)
{
	int err;

	p->thr = run->thr;
	p->piece = o->piece;
	err = ptg_walker_init(&p->w, ic, funcs, nfuncs, &p->cfg);
	if (!err)
		err = ptg_walker_next(&p->w, run->thr, o->piece);
	o->gen.more = next_piece;
	o->gen.more_ctx = p;
	return err < 0 ? err : 0;
}

/* A walk presented as a one-thread "run" so that the rest is shared. */
static int walk(struct ptg_run *run, struct opts *o, struct ptg_insn_cache **ic,
		struct pieces *p, uint64_t **funcs)
{
	struct ptg_walk_cfg *w = &p->cfg;
	uint64_t bias, *kfuncs = NULL;
	size_t nfuncs, nkfuncs = 0;
	int err = 0;

	memset(run, 0, sizeof(*run));
	run->pid = 1;
	run->exe = strdup(o->walk);
	run->thr = calloc(1, sizeof(*run->thr));
	if (!run->exe || !run->thr)
		return -ENOMEM;
	run->nthr = 1;
	run->thr->tid = 1;
	run->thr->parent = -1;
	*w = (struct ptg_walk_cfg){ .seed = o->gen.seed, .insns = o->insns, .loop_pct = o->loop_pct };
	if (o->kernel)
		return kwalk(run, o, ic, w);
	if (o->has_bias)
		bias = o->bias;
	else
		err = ptg_walk_bias(o->walk, &bias);
	if (!err)
		err = ptg_image_load_elf(&run->image, o->walk, bias);
	if (!err && o->with_kernel)
		err = ptg_kwalk_load(o->with_kernel, &run->image, &kfuncs, &nkfuncs);
	if (!err && !(*ic = ptg_insn_cache_new(&run->image)))
		err = -ENOMEM;
	if (!err)
		err = ptg_sym_functions(o->walk, bias, &run->image, funcs, &nfuncs);
	if (!err && o->start) {
		uint64_t off;
		bool dyn;

		err = ptg_sym_lookup(o->walk, o->start, &w->start, &off, &dyn);
		w->start += bias;
	}
	if (!err && o->piece && !o->check && !o->truth && !o->with_kernel)
		err = walk_pieces(run, o, *ic, *funcs, nfuncs, p);
	else if (!err)
		err = ptg_walk(run->thr, *ic, *funcs, nfuncs, w);
	if (!err && o->with_kernel)
		err = add_kernel(run, o, *ic, kfuncs, nkfuncs);
	if (!err && o->trigger) {
		uint64_t off;
		bool dyn;

		err = ptg_sym_lookup(o->walk, o->trigger, &o->gen.trigger_ip, &off, &dyn);
		o->gen.trigger_ip += bias;
	}
	free(kfuncs);
	return err;
}

static int trace(struct ptg_run *run, struct opts *o, char **argv,
		 struct ptg_insn_cache **ic)
{
	struct ptg_trace_opts t = { .start_sym = o->start, .max_insns = o->max_insns };
	int err = ptg_trace_run(run, argv, &t);

	if (!err && !(*ic = ptg_insn_cache_new(&run->image)))
		err = -ENOMEM;
	if (!err && o->trigger)
		err = ptg_sym_addr(&run->image, run->exe, o->trigger, &o->gen.trigger_ip);
	return err;
}

static int check(const struct ptg_run *run, const struct ptg_gen *g)
{
	struct ptg_check r;
	int bad = 0;

	for (unsigned c = 0; c < g->cfg->ncpu; c++) {
		const struct ptg_cpu *cpu = &g->cpu[c];

		if (ptg_check_cpu(g, c, &run->image, cpu->pkt.buf + cpu->ring_start,
				  cpu->pkt.len - cpu->ring_start, &r)) {
			printf("check cpu %u: FAILED: %s\n", c, r.msg);
			bad = 1;
		} else {
			printf("check cpu %u: ok, %zu instructions, %zu enables, %zu timed events (max "
			       "enable lag %" PRIu64 " TSC ticks; %zu CYC estimates off, by up to %"
			       PRIu64 "), %zu overflows\n", c, r.decoded, r.enables, r.timed,
			       r.max_lag, r.off_bounds, r.max_off, r.overflows);
		}
	}
	if (!g->cfg->trigger_ip && !g->cfg->ring_size && !g->cfg->ovf_every) {
		if (ptg_check_coverage(g, &r)) {
			printf("check coverage: FAILED: %s\n", r.msg);
			bad = 1;
		} else {
			printf("check coverage: ok, every instruction scheduled once\n");
		}
	}
	return bad;
}

static void stats(const struct ptg_run *run, const struct ptg_gen *g, double secs)
{
	size_t bytes = 0, kept = 0;

	for (unsigned c = 0; c < g->cfg->ncpu; c++) {
		const struct ptg_pkt_stats *s = &g->cpu[c].pkt.st;

		bytes += g->cpu[c].pkt.len;
		kept += g->cpu[c].pkt.len - g->cpu[c].ring_start;
		printf("cpu %u: %zu bytes (%zu kept), %zu PSB, %zu TNT bits, %zu TIP, %zu FUP, "
		       "%zu PGE, %zu PGD, %zu MTC, %zu TSC, %zu OVF\n", c, g->cpu[c].pkt.len,
		       g->cpu[c].pkt.len - g->cpu[c].ring_start, s->psb, s->tnt_bits, s->tip,
		       s->fup, s->pge, s->pgd, s->mtc, s->tsc, s->ovf);
	}
	printf("threads %zu, instructions %zu, PT bytes %zu (kept %zu), %.1f bytes per 1k "
	       "instructions, %zu context switches\n", run->nthr, g->insns, bytes, kept,
	       g->insns ? 1000.0 * bytes / g->insns : 0.0, g->nsw);
	printf("generator: %.0f instructions/s\n", secs > 0 ? g->insns / secs : 0.0);
}

/* --raw: every byte each CPU wrote, before any ring cut. */
static int write_raw(const char *path, const struct ptg_gen *g)
{
	for (unsigned c = 0; c < g->cfg->ncpu; c++) {
		char name[4096];
		FILE *f;
		int bad;

		if (g->cfg->ncpu == 1)
			snprintf(name, sizeof(name), "%s", path);
		else
			snprintf(name, sizeof(name), "%s.%u", path, c);
		f = fopen(name, "we");
		if (!f) {
			fprintf(stderr, "ptgen: cannot create %s: %s\n", name, strerror(errno));
			return -errno;
		}
		bad = fwrite(g->cpu[c].pkt.buf, 1, g->cpu[c].pkt.len, f) != g->cpu[c].pkt.len;
		if (fclose(f) || bad) {
			fprintf(stderr, "ptgen: writing %s failed\n", name);
			return -EIO;
		}
	}
	return 0;
}

static int write_truth_tail(FILE *f, const struct ptg_gen *g)
{
	for (unsigned c = 0; c < g->cfg->ncpu; c++) {
		const struct ptg_cpu *cpu = &g->cpu[c];

		if (cpu->seq_start < cpu->nseq)
			fprintf(f, "visible %u %d %u\n", c, (int)g->thr[cpu->seq[cpu->seq_start].thread].tid,
				cpu->seq[cpu->seq_start].index);
	}
	return ferror(f) ? -EIO : 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct ptg_run run = { 0 };
	struct ptg_insn_cache *ic = NULL;
	struct ptg_gen g = { 0 };
	struct pieces pieces = { 0 };
	uint64_t *funcs = NULL;
	FILE *truth = NULL;
	double t0, gen_secs;
	int err;

	if (parse_args(argc, argv, &o))
		return 2;
	t0 = now();
	err = o.walk ? walk(&run, &o, &ic, &pieces, &funcs) : trace(&run, &o, argv + optind, &ic);
	if (err)
		goto out;
	if (o.stats && !o.gen.more)
		printf("%s: %zu instructions in %.3f s, %.0f instructions/s\n",
		       o.walk ? "walk" : "single-step tracer", ptg_run_insns(&run), now() - t0,
		       ptg_run_insns(&run) / (now() - t0));
	o.gen.trigger_hit = o.hit;
	o.gen.record_seq = o.check || o.truth || o.gen.ring_size;
	if (o.truth) {
		truth = fopen(o.truth, "we");
		if (!truth) {
			fprintf(stderr, "ptgen: cannot create %s: %s\n", o.truth, strerror(errno));
			err = -errno;
			goto out;
		}
		fprintf(truth, "# ptgen ground truth 1: %s\n", run.exe);
		for (size_t i = 0; i < run.nthr; i++)
			fprintf(truth, "thread %d %d %zu\n", (int)run.thr[i].tid, (int)run.pid,
				run.thr[i].n);
		o.gen.truth = truth;
	}
	t0 = now();
	o.gen.map_events = run.mev;
	o.gen.nmap_events = run.nmev;
	err = ptg_gen_run(&g, &o.gen, run.thr, run.nthr, ic);
	gen_secs = now() - t0;
	if (!err && o.stats)
		stats(&run, &g, gen_secs);
	if (!err && truth)
		err = write_truth_tail(truth, &g);
	if (!err && o.trigger && !g.trigger.hit) {
		fprintf(stderr, "ptgen: the trigger %s was hit fewer than %u times\n", o.trigger,
			o.hit);
		err = -ENOENT;
	}
	if (!err && o.raw)
		err = write_raw(o.raw, &g);
	if (!err && o.out) {
		struct ptg_bundle_opts bo = {
			.trigger_spec = o.trigger,
			.reason = o.walk ? MT_BUNDLE_REASON_USER : MT_BUNDLE_REASON_TARGET_EXIT,
			.freeze_path = o.walk ? MT_BUNDLE_FREEZE_MANUAL : MT_BUNDLE_FREEZE_EXIT,
			.embed_files = o.embed,
			.kernel_from = o.kernel ? o.walk : o.with_kernel,
		};

		err = ptg_bundle_write(o.out, &run, &g, &bo);
	}
	if (!err && o.check) {
		t0 = now();
		if (check(&run, &g))
			err = -EINVAL;
		/* The decoder, timed in the same run, is the baseline. */
		if (o.stats)
			printf("libipt decode + compare: %.0f instructions/s; generator/decoder "
			       "speed ratio %.2f\n", g.insns / (now() - t0),
			       (now() - t0) / gen_secs);
	}
out:
	if (truth && fclose(truth) && !err) {
		fprintf(stderr, "ptgen: writing %s failed\n", o.truth);
		err = -EIO;
	}
	ptg_gen_fini(&g);
	ptg_walker_fini(&pieces.w);
	free(funcs);
	ptg_insn_cache_free(ic);
	ptg_run_fini(&run);
	return err ? 1 : 0;
}
