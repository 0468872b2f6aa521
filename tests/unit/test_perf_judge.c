// SPDX-License-Identifier: MIT
/*
 * perf as a second, independent judge of mtrace's decoder: every PT
 * generator program of the ground-truth test is exported to perf.data
 * (libmtrace's exporter), decoded by the installed perf
 * (`perf script --itrace=cre`), and perf's calls and returns of every
 * thread, with their targets, must equal mtrace's decode of the same
 * bundle. Where the two differ for an understood reason the case says so
 * and checks exactly that difference (docs/perf-interop.md has the
 * verdicts and the evidence).
 */
#include "test_decode_fixture.h"
#include "test_decode_steps.h"

#include "perfdata/perfdata_dir.h"
#include "perfdata/perfdata_export.h"
#include "perfdata/perfdata_import.h"
#include "perfdata/perfdata_kcore.h"

#include "kcore/kcore_capture.h"


/* What perf said besides calls and returns. */
struct perf_run {
	struct steps steps;
	size_t errors;                  /* "instruction trace error" lines */
	size_t overflow_errors;         /* of them: overflow packets */
	size_t mismatch_errors;         /* of them: "Trace doesn't match instruction" */
	char first_error[256];
	size_t steps_before_error;      /* perf's steps before its first error */
};

/* perf script -F tid,flags,ip,addr: "TID FLAGS... FROM => TO". */
static void parse_perf_line(struct perf_run *p, const char *line)
{
	unsigned long long from, to;
	char flag[32];
	unsigned tid;
	int n;

	/* Each error is one " instruction trace error type ..." line (a
	 * closing "N instruction trace errors" summary is not one). */
	if (!strncmp(line, " instruction trace error type", 29)) {
		if (!p->errors++) {
			snprintf(p->first_error, sizeof(p->first_error), "%.200s", line);
			p->steps_before_error = p->steps.n;
		}
		p->overflow_errors += !!strstr(line, "Overflow");
		p->mismatch_errors += !!strstr(line, "Trace doesn't match instruction");
		return;
	}
	const char *arrow = strstr(line, "=>");

	if (!arrow || sscanf(line, "%u %31s%n", &tid, flag, &n) != 2)
		return;
	if (strcmp(flag, "call") && strcmp(flag, "return"))
		return;
	const char *q = arrow;

	while (q > line && q[-1] == ' ')
		q--;
	while (q > line && q[-1] != ' ')
		q--;
	if (sscanf(q, "%llx => %llx", &from, &to) != 2)
		return;
	add_step(&p->steps, tid, flag[0], to, 0, 0);
}

/* perf script on NAME.data, with the binaries (and kernel) the export wrote. */
static void run_perf(const char *name, struct perf_run *p, const struct perfdata_export_stats *st)
{
	char cmd[10000], line[1024];
	FILE *f;
	int rc;

	memset(p, 0, sizeof(*p));
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && perf script -i %s.data --symfs '%s' %s%s%s --itrace=cre "
		 "-F tid,flags,ip,addr 2>&1",
		 fx_dir(), name, st->symfs, st->kernel ? "--vmlinux '" : "",
		 st->kernel ? st->vmlinux : "", st->kernel ? "'" : "");
	f = popen(cmd, "r");
	MT_ASSERT(f);
	while (fgets(line, sizeof(line), f))
		parse_perf_line(p, line);
	rc = pclose(f);
	MT_ASSERT_MSG(rc == 0, "perf script on %s.data failed (%d)", name, rc);
}

enum verdict {
	SAME,           /* perf and mtrace agree exactly */
	GAPS,           /* overflows: both lose runs; agree around them */
	RETSTACK,       /* perf's RET-stack rule differs (docs/perf-interop.md) */
};

enum source {
	RUN,            /* single-step the program */
	WALK,           /* random walk over the program */
	KWALK,          /* random walk over kernel text (the file PROG in the fixture) */
};

/* KWALK: the kernel text ranges of the bundle (core, modules, BPF). */
static struct {
	uint64_t lo, hi;
} ktext[64];
static size_t nktext;

static bool in_ktext(uint64_t a)
{
	for (size_t i = 0; i < nktext; i++)
		if (a >= ktext[i].lo && a < ktext[i].hi)
			return true;
	return false;
}

/*
 * Generates NAME from PROG (as SRC says) with EXTRA ptgen options, exports
 * it (as EO says; NULL: a perf.data file), and judges.
 */
static void judge_src(const char *name, const char *prog, const char *extra, enum source src,
		      const struct perfdata_export_opts *eo, enum verdict expect)
{
	char ptgen[1200], progs[1200], err[1024], path[256];
	struct perfdata_export_stats st;
	struct steps got = { 0 }, truth = { 0 };
	struct mt_bundle_reader *r;
	struct perf_run p;
	uint64_t overflows;

	fx_need("perf");
	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	if (src == KWALK)
		fx_sh("'%s' %s -o %s.mtrace -t %s.truth --kwalk %s >/dev/null", ptgen, extra, name,
		      name, prog);
	else
		fx_sh("'%s' %s -o %s.mtrace -t %s.truth %s '%s/%s' >/dev/null", ptgen, extra, name,
		      name, src == WALK ? "--walk" : "--", progs, prog);
	snprintf(path, sizeof(path), "%s.mtrace", name);
	overflows = steps_decode(fx_path(path), &got, NULL, NULL);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path(path), err, sizeof(err)) == 0, "%s", err);
	snprintf(path, sizeof(path), "%s.data", name);
	MT_ASSERT_MSG(perfdata_export(r, fx_path(path), eo, &st, err, sizeof(err)) == 0, "%s",
		      err);
	mt_bundle_close(r);
	MT_ASSERT_MSG(!st.warning[0], "export: %s", st.warning);
	MT_ASSERT(!eo || !eo->kcore || st.kcore);
	run_perf(name, &p, &st);
	if (src == KWALK) {
		/*
		 * A direct call out of the copied text (to the PLT before it)
		 * ends the walk there with an interrupt: perf shows the call,
		 * mtrace has no function there to open a frame for, and its
		 * steps count calls of known functions only.
		 */
		size_t out = 0;

		for (size_t i = 0; i < p.steps.n; i++)
			if (p.steps.v[i].kind != 'c' || in_ktext(p.steps.v[i].to))
				p.steps.v[out++] = p.steps.v[i];
		printf("# %s: %zu calls out of the kernel text left out of perf's steps\n", name,
		       p.steps.n - out);
		p.steps.n = out;
	}
	MT_ASSERT_MSG(p.steps.n > 0, "perf decoded no calls or returns from %s.data", name);

	switch (expect) {
	case SAME:
		MT_ASSERT_MSG(!p.errors, "perf: %s", p.first_error);
		MT_ASSERT_EQ(overflows, 0);
		steps_compare(name, "mtrace", &got, "perf", &p.steps, NULL);
		printf("# %s: %zu calls and returns, the same in both\n", name, got.n);
		break;
	case GAPS:
		/*
		 * perf reports each overflow as an error and resumes after it;
		 * each decoder must be the truth with one run lost per overflow.
		 */
		MT_ASSERT(overflows > 0);
		MT_ASSERT_MSG(p.errors == p.overflow_errors, "perf: %s", p.first_error);
		MT_ASSERT_EQ(p.overflow_errors, overflows);
		snprintf(path, sizeof(path), "%s.truth", name);
		steps_read_truth(fx_path(path), &truth, 0);
		steps_compare_around_gaps("truth", &truth, "mtrace", &got, overflows);
		steps_compare_around_gaps("truth", &truth, "perf", &p.steps, overflows);
		printf("# %s: truth %zu steps, mtrace %zu, perf %zu\n", name, truth.n, got.n,
		       p.steps.n);
		break;
	case RETSTACK: {
		/*
		 * perf pops its RET stack on every RET, libipt (and so mtrace
		 * and ptgen) only on a compressed one. After a signal handler's
		 * uncompressed RET, the interrupted function's compressed RET
		 * takes perf one frame too far: to where mtrace's next return
		 * goes. Before that step both agree exactly; afterwards perf
		 * decodes the wrong code until a packet contradicts it.
		 */
		size_t k = 0;

		while (k < got.n && k < p.steps.n && steps_equal(&got.v[k], &p.steps.v[k]))
			k++;
		MT_ASSERT_MSG(k > 0 && k + 1 < got.n && k < p.steps.n, "no divergence at a return");
		MT_ASSERT_MSG(got.v[k].kind == 'r' && p.steps.v[k].kind == 'r' &&
				      got.v[k + 1].kind == 'r' && p.steps.v[k].to == got.v[k + 1].to,
			      "%s step %zu: perf %c 0x%" PRIx64 " is not mtrace's next return", name, k,
			      p.steps.v[k].kind, p.steps.v[k].to);
		MT_ASSERT_MSG(p.errors > 0 && p.errors == p.mismatch_errors, "perf: %zu errors: %s",
			      p.errors, p.first_error);
		MT_ASSERT(p.steps_before_error > k);
		printf("# %s: the same %zu of %zu steps, then perf returns one frame too far; "
		       "%zu perf errors\n", name, k, got.n, p.errors);
		break;
	}
	}
	free(got.v);
	free(truth.v);
	free(p.steps.v);
}

static void judge(const char *name, const char *prog, const char *extra, int walk,
		  enum verdict expect)
{
	judge_src(name, prog, extra, walk ? WALK : RUN, NULL, expect);
}

MT_TEST(tailcall)
{
	judge("tailcall", "tailcall", "", 0, SAME);
}

MT_TEST(recursion)
{
	judge("recursion", "recursion", "", 0, SAME);
}

MT_TEST(indirect)
{
	judge("indirect", "indirect", "", 0, SAME);
}

MT_TEST(plt)
{
	judge("plt", "plt", "", 0, SAME);
}

MT_TEST(syscalls)
{
	judge("syscalls", "syscalls", "", 0, SAME);
}

MT_TEST(longjmp)
{
	judge("longjmp", "longjmp", "", 0, SAME);
}

MT_TEST(cxx_exceptions)
{
	judge("exceptions", "exceptions", "", 0, SAME);
}

MT_TEST(crash)
{
	judge("crash", "crash", "", 0, SAME);
}

/* Signal handlers return through an uncompressed RET: see RETSTACK. */
MT_TEST(signals_retstack_rule)
{
	judge("signals", "signals", "", 0, RETSTACK);
}

/* Without RET compression the rule does not matter: exact agreement. */
MT_TEST(signals_no_retcomp)
{
	judge("signals-noretc", "signals", "--no-retcomp", 0, SAME);
}

MT_TEST(threads_on_two_cpus)
{
	judge("threads", "threads", "--cpus 2", 0, SAME);
}

MT_TEST(threads_on_four_cpus)
{
	judge("threads4", "threads", "--cpus 4", 0, SAME);
}

MT_TEST(cycle_accurate)
{
	judge("recursion-cyc", "recursion", "--cyc", 0, SAME);
}

MT_TEST(psb256_short_tnt_no_retcomp)
{
	judge("recursion-psb", "recursion", "--psb-freq 0 --short-tnt --no-retcomp", 0, SAME);
}

MT_TEST(random_walk_with_ring_wrap)
{
	judge("walk", "indirect-nopie", "--insns 200000 --ring-size 20000", 1, SAME);
}

MT_TEST(overflows)
{
	judge("overflow", "recursion", "--overflow 1500:40", 0, GAPS);
}

/*
 * Kernel tracing: a bundle whose kernel text is real code with real
 * symbols: a library's .text placed at a kernel address, its dynamic
 * symbols as kallsyms, walked at CPL 0 by ptgen --kwalk. The bundle is
 * captured as the recorder does (mt_kcore_capture) from a kcore and
 * kallsyms holding those pieces, so its ranges are shaped as on a real
 * machine: the core [_stext, _etext), module and BPF code in runs around
 * their symbols.
 */
#define KBASE 0xffffffff81000000ULL
#define LIBDIR "/usr/lib/x86_64-linux-gnu/"

struct kpiece {
	const char *lib;
	uint64_t base;
	const char *module;     /* NULL: the core kernel; "bpf": BPF JIT text */
};

static void kernel_bundle(const char *out, const struct kpiece *pc, size_t n)
{
	struct mt_bundle_module mods[4];
	struct mt_kcore_capture_opts co = { 0 };
	struct mt_kcore_capture_stats cs;
	struct perfdata_kcore_info ki;
	struct mt_bundle_writer *w;
	struct mt_bundle_reader *r;
	char err[512], *ks = NULL, kcore[600], kallsyms[600];
	size_t kslen = 0, nmods = 0;
	FILE *kf = open_memstream(&ks, &kslen);

	fx_need("objcopy");
	MT_ASSERT(kf && n <= 4);
	MT_ASSERT_MSG(mt_bundle_writer_create(&w, fx_path("pieces.mtrace"), NULL, err,
					      sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; i < n; i++) {
		unsigned long long vaddr = 0, size = 0, a;
		char line[512], name[256], type;
		const char *tail = "";
		char tailbuf[64];
		struct mt_bundle_ktext kt = { pc[i].base, pc[i].module ? pc[i].module : "kernel", 0 };
		uint64_t padded;
		char *code;
		FILE *f;

		if (access(pc[i].lib, R_OK))
			mt_skip("needs %s", pc[i].lib);
		fx_sh("objcopy -O binary -j .text %s text.bin && "
		      "objdump -h %s | awk '$2 == \".text\" { print $4, $3 }' > text.hdr && "
		      "nm -D --defined-only %s > text.nm", pc[i].lib, pc[i].lib, pc[i].lib);
		f = fopen(fx_path("text.hdr"), "r");
		MT_ASSERT(f && fscanf(f, "%llx %llx", &vaddr, &size) == 2);
		fclose(f);
		if (pc[i].module) {
			snprintf(tailbuf, sizeof(tailbuf), "\t[%s]", pc[i].module);
			tail = tailbuf;
		} else {
			fprintf(kf, "%016llx T _text\n%016llx T _stext\n", (unsigned long long)kt.addr,
				(unsigned long long)kt.addr);
		}
		/* The code symbols inside .text, moved to the base. */
		f = fopen(fx_path("text.nm"), "r");
		MT_ASSERT(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx %c %255[^@\n]", &a, &type, name) == 3 &&
			    (type == 'T' || type == 't' || type == 'W' || type == 'i') && a >= vaddr &&
			    a < vaddr + size)
				fprintf(kf, "%016llx %c %s%s\n", (unsigned long long)(kt.addr + a - vaddr),
					pc[i].module ? 't' : 'T', name, tail);
		fclose(f);
		if (!pc[i].module)
			fprintf(kf, "%016llx T _etext\n", (unsigned long long)(kt.addr + size));
		/* A page past the last symbol's, as kcore holds for a capture to copy. */
		padded = ((size + 4095) & ~4095ULL) + (pc[i].module ? 4096 : 0);
		code = calloc(1, padded);
		f = fopen(fx_path("text.bin"), "rb");
		MT_ASSERT(code && f && fread(code, 1, size, f) == size);
		fclose(f);
		MT_ASSERT_EQ(mt_bundle_write_ktext(w, &kt, code, padded), 0);
		free(code);
		if (pc[i].module && strcmp(pc[i].module, "bpf"))
			mods[nmods++] = (struct mt_bundle_module){ kt.addr, kt.addr + size,
								   pc[i].module };
	}
	MT_ASSERT(fclose(kf) == 0);
	MT_ASSERT_EQ(mt_bundle_write_kallsyms(w, ks, kslen), 0);
	if (nmods)
		MT_ASSERT_EQ(mt_bundle_write_modules(w, mods, nmods), 0);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	free(ks);

	/* The pieces as a kcore and kallsyms, and the capture from them. */
	fx_sh("rm -rf pieces");
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("pieces.mtrace"), err, sizeof(err)) == 0, "%s",
		      err);
	MT_ASSERT_MSG(perfdata_write_kcore_dir(r, fx_path("pieces"), &ki, err, sizeof(err)) == 1,
		      "%s", err);
	mt_bundle_close(r);
	snprintf(kcore, sizeof(kcore), "%s", fx_path("pieces/kcore"));
	snprintf(kallsyms, sizeof(kallsyms), "%s", fx_path("pieces/kallsyms"));
	co.kcore_path = kcore;
	co.kallsyms_path = kallsyms;
	MT_ASSERT_MSG(mt_bundle_writer_create(&w, fx_path(out), NULL, err, sizeof(err)) == 0,
		      "%s", err);
	MT_ASSERT_MSG(mt_kcore_capture(w, &co, &cs, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(!cs.skipped, "capture: %s", err);
	MT_ASSERT_EQ(mt_bundle_writer_finish(w), 0);
	mt_bundle_writer_free(w);
	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path(out), err, sizeof(err)) == 0, "%s", err);
	nktext = mt_bundle_ktext_count(r);
	MT_ASSERT(nktext >= n && nktext <= 64);
	for (size_t i = 0; i < nktext; i++) {
		struct mt_bundle_ktext kt;

		MT_ASSERT_EQ(mt_bundle_ktext_info(r, i, &kt), 0);
		ktext[i].lo = kt.addr;
		ktext[i].hi = kt.addr + kt.size;
	}
	mt_bundle_close(r);
}

/* Whether A lies in piece P (from its base to the next piece's). */
static bool in_piece(uint64_t a, const struct kpiece *p, const struct kpiece *next)
{
	return a >= p->base && (!next || a < next->base);
}

/* Imports DATA (a perf.data file or directory) into OUT. */
static void import_to(const char *data, const char *out, struct perfdata_import_stats *st)
{
	struct perfdata_import_opts io = { 0 };
	struct perfdata_file f;
	char kdir[600], symfs[600], err[1024];

	snprintf(symfs, sizeof(symfs), "%s.symfs", fx_path(data));
	io.symfs = symfs;
	MT_ASSERT_MSG(perfdata_open_input(&f, fx_path(data), kdir, sizeof(kdir)) == 0, "%s", f.err);
	io.kcore_dir = kdir[0] ? kdir : NULL;
	MT_ASSERT_MSG(perfdata_import(&f, data, fx_path(out), &io, st, err, sizeof(err)) == 0, "%s",
		      err);
	perfdata_close(&f);
}

/*
 * The core kernel only, exported as a perf.data file: perf decodes the
 * kernel code from the vmlinux the export writes. Imported back, the
 * perf.data has no kernel code, and the warning says so and what to do.
 */
MT_TEST(kernel_walk)
{
	const struct kpiece core[] = { { LIBDIR "libc.so.6", KBASE, NULL } };
	struct perfdata_import_stats st;

	kernel_bundle("kin.mtrace", core, 1);
	judge_src("kwalk", fx_path("kin.mtrace"), "--insns 200000", KWALK, NULL, SAME);
	import_to("kwalk.data", "kwalk-back.mtrace", &st);
	MT_ASSERT_EQ(st.kernel_ranges, 0);
	MT_ASSERT_MSG(strstr(st.warning, "kernel code is not decoded (user code is)") &&
			      strstr(st.warning, "perf record --kcore"),
		      "import: %s", st.warning);
}

/*
 * Core kernel, a module and BPF JIT text, exported as the directory perf
 * record --kcore writes: perf decodes all three from kcore_dir, and the
 * directory imported back decodes to the same calls and returns as the
 * bundle. A kcore_dir whose kcore is unreadable gives a warning naming it,
 * and the import goes on without kernel code.
 */
MT_TEST(kernel_walk_kcore_dir)
{
	const struct kpiece pieces[] = {
		{ LIBDIR "libc.so.6", KBASE, NULL },
		{ LIBDIR "libm.so.6", 0xffffffffc0000000ULL, "mod_m" },
		{ LIBDIR "libz.so.1", 0xffffffffc0100000ULL, "bpf" },
	};
	const struct perfdata_export_opts eo = { .kcore = true };
	struct perfdata_import_stats st;
	struct steps a = { 0 }, b = { 0 };
	size_t in_mod = 0, in_bpf = 0;

	kernel_bundle("kmod.mtrace", pieces, 3);
	/* A walk (seed) that calls into the module and the BPF text. */
	judge_src("kcore", fx_path("kmod.mtrace"), "--insns 200000 --seed 26", KWALK, &eo, SAME);
	import_to("kcore.data", "kcore-back.mtrace", &st);
	MT_ASSERT_MSG(!st.warning[0], "import: %s", st.warning);
	MT_ASSERT(st.kernel_ranges >= 3); /* module runs a page apart are separate ranges */
	steps_decode(fx_path("kcore.mtrace"), &a, NULL, NULL);
	steps_decode(fx_path("kcore-back.mtrace"), &b, NULL, NULL);
	for (size_t i = 0; i < a.n; i++) {
		in_mod += a.v[i].kind == 'c' && in_piece(a.v[i].to, &pieces[1], &pieces[2]);
		in_bpf += a.v[i].kind == 'c' && in_piece(a.v[i].to, &pieces[2], NULL);
	}
	printf("# kcore: %zu calls into the module, %zu into BPF text\n", in_mod, in_bpf);
	MT_ASSERT(in_mod > 0 && in_bpf > 0);
	steps_compare("kcore", "bundle", &a, "imported", &b, NULL);
	free(a.v);
	free(b.v);

	/* The vmlinux form cannot carry module and BPF text: the export says so. */
	struct perfdata_export_stats est;
	struct mt_bundle_reader *r;
	char err[512];

	MT_ASSERT_MSG(mt_bundle_open(&r, fx_path("kcore.mtrace"), err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(perfdata_export(r, fx_path("kcore-vmlinux.data"), NULL, &est, err,
				      sizeof(err)) == 0, "%s", err);
	mt_bundle_close(r);
	MT_ASSERT_MSG(strstr(est.warning, "export with --kcore"), "export: %s", est.warning);

	/* An unreadable kcore: kernel code is not decoded, and the warning names the file. */
	fx_sh("cp -r kcore.data kbad.data && chmod 000 kbad.data/kcore_dir/kcore");
	if (!access(fx_path("kbad.data/kcore_dir/kcore"), R_OK))
		fx_sh("rm kbad.data/kcore_dir/kcore");
	import_to("kbad.data", "kbad-back.mtrace", &st);
	MT_ASSERT_EQ(st.kernel_ranges, 0);
	MT_ASSERT_MSG(strstr(st.warning, "kernel code is not decoded") &&
			      strstr(st.warning, "kbad.data/kcore_dir/kcore"),
		      "import: %s", st.warning);
}
